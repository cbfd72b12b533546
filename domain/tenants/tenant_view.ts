/** The partner's contract as the partner reads it: the tenant. */
import { and, eq } from "drizzle-orm";
import type { Executor } from "../../db/client.ts";
import { clients } from "../../db/schema.ts";
import type { EffectiveAccess } from "../grants/effective_access.ts";
import { envelopeToUsd } from "../partners/envelope.ts";
import type { PartnerRow } from "../partners/load_partner.ts";
import { contractView } from "../partners/partner_view.ts";

/**
 * The tenant ids a partner answers to: its own, and for a legacy multi-tenant
 * partner the further ids that group its clients under the same contract.
 */
export function ownsTenant(partner: PartnerRow, tenantId: string): boolean {
  return tenantId === partner.partnerId || partner.legacyTenantIds.includes(tenantId);
}

/** The contract as seen through one of the partner's tenant ids; `clients` counts that tenant's clients. */
export async function tenantView(db: Executor, access: EffectiveAccess, tenantId = access.partner.partnerId) {
  const { partner, contract, restrictions } = access;
  const terms = contractView(contract);
  return {
    tenantId,
    name: partner.name,
    status: contract.suspended ? "SUSPENDED" : "ACTIVE",
    grants: partner.grants,
    partnerRestrictions: restrictions
      ? {
        providers: restrictions.providers,
        strategies: restrictions.strategies,
        riskEnvelope: restrictions.envelope ? envelopeToUsd(restrictions.envelope) : null,
      }
      : null,
    returnUrlOrigins: partner.returnUrlOrigins,
    contract: {
      version: terms.version,
      suspended: terms.suspended,
      subscriptionMonthlyUsd: terms.subscriptionMonthlyUsd,
      currency: terms.currency,
      performanceFeePercent: terms.performanceFeePercent,
      performancePeriod: terms.performancePeriod,
      carryPolicy: terms.carryPolicy,
    },
    clients: await db.$count(clients, and(eq(clients.partnerId, partner.partnerId), eq(clients.tenantId, tenantId))),
  };
}

export type TenantView = Awaited<ReturnType<typeof tenantView>>;
