/**
 * The one place that answers "what may this partner (and this client) use":
 *
 * - providers  = contract grant ∩ partner restriction
 * - strategies = published ∩ contract grant ∩ partner restriction (∩ client selection)
 * - envelope   = the tighter of the contract envelope and the partner restriction
 *
 * Every route, gate and job asks here; nobody intersects lists on their own.
 */
import { eq } from "drizzle-orm";
import type { Executor } from "../../db/client.ts";
import { type EnvelopeMicros, strategies } from "../../db/schema.ts";
import type { ProviderId } from "../../venues/types.ts";
import { PROVIDER_IDS } from "../../venues/types.ts";
import { tighterEnvelope } from "../partners/envelope.ts";
import {
  contractInForce,
  type ContractRow,
  loadPartner,
  loadRestrictions,
  type PartnerRow,
  type RestrictionRow,
} from "../partners/load_partner.ts";

export interface EffectiveAccess {
  partner: PartnerRow;
  contract: ContractRow;
  restrictions: RestrictionRow | null;
  providers: ProviderId[];
  /** Published ∩ grant ∩ restriction: what the partner may offer its clients. */
  strategies: string[];
  envelope: EnvelopeMicros;
}

export async function loadEffectiveAccess(db: Executor, partnerId: string, now: number): Promise<EffectiveAccess> {
  const partner = await loadPartner(db, partnerId);
  const contract = await contractInForce(db, partnerId, now);
  const restrictions = await loadRestrictions(db, partnerId);
  const published = await db.select({ id: strategies.strategyId }).from(strategies)
    .where(eq(strategies.status, "PUBLISHED"));
  return {
    partner,
    contract,
    restrictions,
    providers: PROVIDER_IDS.filter((id) =>
      partner.grants.providers.includes(id) && (restrictions?.providers ?? [id]).includes(id)
    ),
    strategies: published.map((s) => s.id).filter((id) =>
      partner.grants.strategies.includes(id) && (restrictions?.strategies ?? [id]).includes(id)
    ).sort(),
    envelope: tighterEnvelope(partner.envelope, restrictions?.envelope ?? null),
  };
}

/** The client's effective strategies: its selection (null = all) within the partner's. */
export function clientStrategies(access: EffectiveAccess, selection: string[] | null): string[] {
  return selection === null ? access.strategies : access.strategies.filter((id) => selection.includes(id));
}

/** True when the partner, its contract and the client all allow activity. */
export function isAccessActive(access: EffectiveAccess, clientStatus: string): boolean {
  return access.partner.status === "ACTIVE" && !access.contract.suspended && clientStatus === "ACTIVE";
}
