/** The partner's contract as the partner reads it: the tenant. */
import { eq } from "drizzle-orm";
import type { Executor } from "../../db/client.ts";
import { clients } from "../../db/schema.ts";
import type { EffectiveAccess } from "../grants/effective_access.ts";
import { envelopeToUsd } from "../partners/envelope.ts";
import { contractView } from "../partners/partner_view.ts";

export async function tenantView(db: Executor, access: EffectiveAccess) {
  const { partner, contract, restrictions } = access;
  const terms = contractView(contract);
  return {
    tenantId: partner.partnerId,
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
    clients: await db.$count(clients, eq(clients.partnerId, partner.partnerId)),
  };
}

export type TenantView = Awaited<ReturnType<typeof tenantView>>;
