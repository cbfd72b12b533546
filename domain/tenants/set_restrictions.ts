/**
 * `PUT /v1/tenants/:tenantId/restrictions`: the partner narrows what its contract
 * grants. Each restriction is compared with what the partner received (never
 * with its previous restriction): a subset of the granted providers and
 * strategies, envelope values at most the contract's. `null` removes a
 * restriction, an absent field keeps it. Every change is a new version with
 * an audit entry (who, when, why, before, after) and a `tenant.updated` event.
 */
import { withPartnerTransaction } from "../credentials/partner_transaction.ts";
import { partnerRestrictions } from "../../db/schema.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { ApiError } from "../errors.ts";
import { recordChange } from "../events/record_change.ts";
import { loadEffectiveAccess } from "../grants/effective_access.ts";
import { ENVELOPE_FIELDS, envelopeToMicros, envelopeToUsd } from "../partners/envelope.ts";
import type { RiskEnvelopeInput } from "../partners/types.ts";
import { markSetupsOutsideEnvelope } from "./envelope_fit.ts";
import type { RestrictionRow } from "../partners/load_partner.ts";
import { ownsTenant, type TenantView, tenantView } from "./tenant_view.ts";
import { bumpCacheGenerations } from "../cache_generations.ts";

export interface RestrictionsInput {
  tenantId: string;
  providers?: string[] | null;
  strategies?: string[] | null;
  envelope?: RiskEnvelopeInput | null;
  reason: string;
}

export async function setRestrictions({ ctx, input }: { ctx: Ctx; input: RestrictionsInput }): Promise<TenantView> {
  const partnerId = partnerOf(ctx);
  const now = ctx.clock.now();
  const result = await withPartnerTransaction(ctx, async (tx) => {
    const unchangedAccess = await loadEffectiveAccess(tx, partnerId, now);
    const { partner, restrictions: current } = unchangedAccess;
    // A legacy tenant id addresses the same contract; another partner's answers like a missing one.
    if (!ownsTenant(partner, input.tenantId)) throw new ApiError("NOT_FOUND");
    const outside = (asked: string[], granted: string[]) => asked.filter((id) => !granted.includes(id));
    for (
      const [field, asked, granted] of [
        ["providers", input.providers, partner.grants.providers],
        ["strategies", input.strategies, partner.grants.strategies],
      ] as const
    ) {
      const extra = asked ? outside(asked, granted) : [];
      if (extra.length) {
        throw new ApiError("GRANT_ESCALATION", {
          message: `Fora da concessão recebida em ${field}: ${extra.slice(0, 5).map((id) => `"${id}"`).join(", ")}.`,
        });
      }
    }
    if (input.envelope) {
      const received = envelopeToUsd(partner.envelope);
      for (const field of ENVELOPE_FIELDS) {
        if (input.envelope[field] > received[field]) {
          throw new ApiError("RISK_ENVELOPE_EXCEEDED", {
            message: `${field} acima do envelope recebido: o limite é ${received[field]}.`,
          });
        }
      }
    }
    const next = {
      providers: input.providers === undefined ? current?.providers ?? null : input.providers,
      strategies: input.strategies === undefined ? current?.strategies ?? null : input.strategies,
      envelope: input.envelope === undefined
        ? current?.envelope ?? null
        : input.envelope && envelopeToMicros(input.envelope),
    };
    // Asking for what is already in force is not a change: no new version, no audit entry, no event.
    if (sameRestrictions(current, next)) return { view: await tenantView(tx, unchangedAccess, input.tenantId) };
    const version = (current?.version ?? 0) + 1;
    await tx.insert(partnerRestrictions).values({ partnerId, ...next, version, updatedAt: now })
      .onConflictDoUpdate({ target: partnerRestrictions.partnerId, set: { ...next, version, updatedAt: now } });
    await bumpCacheGenerations(tx, "partners");
    const before = current &&
      { providers: current.providers, strategies: current.strategies, envelope: current.envelope };
    await recordChange(ctx, tx, {
      partnerId,
      action: "restrictions.updated",
      reason: input.reason,
      before,
      after: next,
      at: now,
      event: {
        type: "tenant.updated",
        data: { change: "RESTRICTIONS", restrictionsVersion: version, reason: input.reason },
      },
    });
    const access = await loadEffectiveAccess(tx, partnerId, now);
    await markSetupsOutsideEnvelope(tx, partnerId, access.envelope, now);
    return { view: await tenantView(tx, access, input.tenantId), changed: true };
  });
  // Reads go through caches: drop them now that the change is committed.
  if (result.changed) ctx.caches.partners.clear();
  return result.view;
}

type Restrictions = Pick<RestrictionRow, "providers" | "strategies" | "envelope">;

/** Whether `next` restricts exactly as `current` does (lists compared as sets; no row means no restriction). */
function sameRestrictions(current: Restrictions | null, next: Restrictions): boolean {
  const sameList = (a: string[] | null, b: string[] | null) =>
    a === null || b === null
      ? a === b
      : a.length === b.length && [...a].sort().join("\u0000") === [...b].sort().join("\u0000");
  const sameEnvelope = (a: Restrictions["envelope"], b: Restrictions["envelope"]) =>
    a === null || b === null ? a === b : (Object.keys(a) as (keyof typeof a)[]).every((field) => a[field] === b[field]);
  const was = current ?? { providers: null, strategies: null, envelope: null };
  return sameList(was.providers, next.providers) && sameList(was.strategies, next.strategies) &&
    sameEnvelope(was.envelope, next.envelope);
}
