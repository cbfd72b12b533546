/**
 * The commercial gate per provider: may this client open new entries there as
 * far as contract and entitlement go? Maintenance (closing, protecting,
 * reconciling) is never blocked by it. Billing obligations (grace, overdue)
 * join this evaluation when billing lands; the states and codes are the spec's.
 */
import type { ProviderId } from "../../venues/types.ts";
import { PROVIDER_IDS } from "../../venues/types.ts";
import type { EffectiveAccess } from "../grants/effective_access.ts";

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

/** One entry per provider the contract names, in the catalog's order. */
export function commercialStates(access: EffectiveAccess, clientStatus: string): Commercial[] {
  return PROVIDER_IDS.filter((id) => access.partner.grants.providers.includes(id)).map((providerId) => {
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
