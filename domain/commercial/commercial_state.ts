/**
 * The commercial gate per provider: may this client open new entries there as
 * far as contract and entitlement go? Maintenance (closing, protecting,
 * reconciling) is never blocked by it. Entitlement comes first (partner,
 * client, contract, grant), then billing: an obligation in grace keeps
 * entries allowed, one past its grace suspends them (billing_standing.ts).
 */
import type { ProviderId } from "../../venues/types.ts";
import { PROVIDER_IDS } from "../../venues/types.ts";
import type { EffectiveAccess } from "../grants/effective_access.ts";
import type { BillingStanding } from "../billing/billing_standing.ts";
import { iso } from "../clock.ts";

export type CommercialState =
  | "ACTIVE"
  | "GRACE"
  | "SUSPENDED"
  | "REVOKED"
  | "BLACKLISTED"
  | "NO_ENTITLEMENT"
  | "ACCOUNT_INACTIVE";

export interface Commercial {
  providerId: ProviderId;
  allowed: boolean;
  state: CommercialState;
  reasonCode: string;
  graceUntil: string | null;
  source: "B2B_CONTRACT";
}

/** The providers the contract names, in the catalog's order. */
export function contractProviders(access: EffectiveAccess): ProviderId[] {
  return PROVIDER_IDS.filter((id) => access.partner.grants.providers.includes(id));
}

/** One entry per provider the contract names, in the catalog's order. */
export function commercialStates(
  access: EffectiveAccess,
  clientStatus: string,
  billing: ReadonlyMap<string, BillingStanding>,
): Commercial[] {
  return contractProviders(access).map((providerId) => {
    const blocked = (reasonCode: string): Commercial => ({
      providerId,
      allowed: false,
      state: "NO_ENTITLEMENT",
      reasonCode,
      graceUntil: null,
      source: "B2B_CONTRACT",
    });
    if (access.partner.status !== "ACTIVE" || clientStatus !== "ACTIVE") return blocked("B2B_ACCESS_SUSPENDED");
    if (access.contract.suspended) return blocked("CONTRACT_SUSPENDED");
    if (!access.providers.includes(providerId)) return blocked("PROVIDER_NOT_GRANTED");
    const standing = billing.get(providerId);
    if (standing) {
      return {
        providerId,
        allowed: standing.state === "GRACE",
        state: standing.state,
        reasonCode: standing.reasonCode,
        graceUntil: iso(standing.graceUntil),
        source: "B2B_CONTRACT",
      };
    }
    return {
      providerId,
      allowed: true,
      state: "ACTIVE",
      reasonCode: "B2B_CONTRACT_ACTIVE",
      graceUntil: null,
      source: "B2B_CONTRACT",
    };
  });
}
