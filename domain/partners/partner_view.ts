/** The operator's view of a partner: settings, contract in force, restrictions. */
import type { Executor } from "../../db/client.ts";
import { iso } from "../clock.ts";
import { microsToUsd } from "../money.ts";
import { envelopeToUsd } from "./envelope.ts";
import { contractInForce, type ContractRow, latestContract, loadPartner, loadRestrictions } from "./load_partner.ts";

export function contractView(row: ContractRow) {
  return {
    version: row.version,
    effectiveFrom: iso(row.effectiveFrom),
    suspended: row.suspended,
    subscriptionMonthlyUsd: microsToUsd(row.subscriptionMonthlyMicros),
    subscriptionProviders: row.subscriptionProviders,
    currency: row.currency,
    performanceFeePercent: Number(row.performanceFeePercent),
    performancePeriod: row.performancePeriod as "WEEKLY" | "MONTHLY",
    carryPolicy: row.carryPolicy as "CARRY" | "NO_CARRY",
    dueDays: row.dueDays,
  };
}

export async function operatorPartnerView(db: Executor, partnerId: string, now: number) {
  const partner = await loadPartner(db, partnerId);
  const inForce = await contractInForce(db, partnerId, now);
  const latest = await latestContract(db, partnerId);
  const restrictions = await loadRestrictions(db, partnerId);
  return {
    partnerId: partner.partnerId,
    tenantId: partner.partnerId,
    name: partner.name,
    status: partner.status,
    grants: partner.grants,
    riskEnvelope: envelopeToUsd(partner.envelope),
    builder: { feeTenthsBps: partner.builderFeeTenthsBps },
    returnUrlOrigins: partner.returnUrlOrigins,
    limits: { requestsPerMinute: partner.requestsPerMinute, ordersPerMinute: partner.ordersPerMinute },
    legacyTenantIds: partner.legacyTenantIds,
    contract: contractView(inForce),
    scheduledContract: latest.version !== inForce.version ? contractView(latest) : null,
    partnerRestrictions: restrictions
      ? {
        providers: restrictions.providers,
        strategies: restrictions.strategies,
        riskEnvelope: restrictions.envelope ? envelopeToUsd(restrictions.envelope) : null,
        version: restrictions.version,
      }
      : null,
    createdAt: iso(partner.createdAt),
    updatedAt: iso(partner.updatedAt),
  };
}

export type OperatorPartnerView = Awaited<ReturnType<typeof operatorPartnerView>>;
