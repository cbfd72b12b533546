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
import { type Executor, preparedFor } from "../../db/client.ts";
import { type EnvelopeMicros, strategies } from "../../db/schema.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { inOrder } from "../concurrency.ts";
import type { ProviderId } from "../../venues/types.ts";
import { PROVIDER_IDS } from "../../venues/types.ts";
import { tighterEnvelope } from "../partners/envelope.ts";
import {
  type ContractRow,
  loadContractVersions,
  loadPartner,
  loadRestrictions,
  type PartnerRow,
  pickContractInForce,
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

/** Everything the effective access derives from, as stored: what the partner cache keeps. */
export interface PartnerSnapshot {
  partner: PartnerRow;
  contracts: ContractRow[];
  restrictions: RestrictionRow | null;
  published: string[];
}

const publishedStrategies = preparedFor((db) =>
  db.select({ id: strategies.strategyId }).from(strategies).where(eq(strategies.status, "PUBLISHED")).prepare()
);

/** The four reads are independent: issued together, taken in order (the partner's own refusal first). */
async function loadSnapshot(db: Executor, partnerId: string): Promise<PartnerSnapshot> {
  const [partner, contracts, restrictions, published] = await inOrder([
    loadPartner(db, partnerId),
    loadContractVersions(db, partnerId),
    loadRestrictions(db, partnerId),
    publishedStrategies(db).all(),
  ]);
  return { partner, contracts, restrictions, published: published.map((s) => s.id) };
}

/** Inside a transaction (writes): read fresh from the database. */
export async function loadEffectiveAccess(db: Executor, partnerId: string, now: number): Promise<EffectiveAccess> {
  return deriveAccess(await loadSnapshot(db, partnerId), now);
}

/**
 * For reads: the partner's snapshot comes through a short cache (cleared by
 * every verb that changes a partner, its contract, restrictions or strategies),
 * and the contract in force is chosen at `now`, so a period boundary is never late.
 */
export async function effectiveAccessOf(ctx: Ctx, partnerId: string): Promise<EffectiveAccess> {
  const snapshot = await ctx.caches.partners.get(partnerId, () => loadSnapshot(ctx.db.read, partnerId));
  return deriveAccess(snapshot!, ctx.clock.now());
}

function deriveAccess({ partner, contracts, restrictions, published }: PartnerSnapshot, now: number): EffectiveAccess {
  const contract = pickContractInForce(contracts, now);
  return {
    partner,
    contract,
    restrictions,
    providers: PROVIDER_IDS.filter((id) =>
      partner.grants.providers.includes(id) && (restrictions?.providers ?? [id]).includes(id)
    ),
    strategies: published.filter((id) =>
      partner.grants.strategies.includes(id) && (restrictions?.strategies ?? [id]).includes(id)
    ).sort(),
    envelope: tighterEnvelope(partner.envelope, restrictions?.envelope ?? null),
  };
}

/**
 * Refuse a provider the partner may not use, with the spec's two meanings:
 * outside the contract (PROVIDER_NOT_ALLOWED) or inside it but outside the
 * effective grant, i.e. removed by the partner's own restriction
 * (PROVIDER_NOT_GRANTED).
 */
export function assertProviderUsable(access: EffectiveAccess, providerId: ProviderId): void {
  if (!access.partner.grants.providers.includes(providerId)) throw new ApiError("PROVIDER_NOT_ALLOWED");
  if (!access.providers.includes(providerId)) throw new ApiError("PROVIDER_NOT_GRANTED");
}

/**
 * Refuse a provider outside the effective grant with PROVIDER_NOT_GRANTED
 * alone, outside the contract included: for the routes whose contract names
 * only that code (connect sessions, the account test).
 */
export function assertProviderGranted(access: EffectiveAccess, providerId: ProviderId): void {
  if (!access.providers.includes(providerId)) throw new ApiError("PROVIDER_NOT_GRANTED");
}

/** The client's effective strategies: its selection (null = all) within the partner's. */
export function clientStrategies(access: EffectiveAccess, selection: string[] | null): string[] {
  return selection === null ? access.strategies : access.strategies.filter((id) => selection.includes(id));
}

/** True when the partner, its contract and the client all allow activity. */
export function isAccessActive(access: EffectiveAccess, clientStatus: string): boolean {
  return access.partner.status === "ACTIVE" && !access.contract.suspended && clientStatus === "ACTIVE";
}
