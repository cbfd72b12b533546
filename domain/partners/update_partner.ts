/**
 * Changing a partner's settings (operator): grants, envelope, builder fee,
 * return-URL origins, limits. Only the fields given change; the previous and
 * new values are audited.
 */
import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { partners } from "../../db/schema.ts";
import { type Ctx } from "../context.ts";
import { recordChange } from "../events/record_change.ts";
import { loadEffectiveAccess } from "../grants/effective_access.ts";
import { markSetupsOutsideEnvelope } from "../tenants/envelope_fit.ts";
import { envelopeToMicros } from "./envelope.ts";
import { operatorPartnerView } from "./partner_view.ts";
import type { PartnerSettingsInput } from "./types.ts";
import { bumpCacheGenerations } from "../cache_generations.ts";

export async function updatePartner(
  { ctx, input }: { ctx: Ctx; input: { partnerId: string; changes: Partial<PartnerSettingsInput> } },
) {
  const now = ctx.clock.now();
  const { changes } = input;
  const result = await withTransaction(ctx.db, async (tx) => {
    // Reading the view first also answers NOT_FOUND for an unknown partner.
    const before = await operatorPartnerView(tx, input.partnerId, now);
    await tx.update(partners).set({
      name: changes.name,
      grants: changes.grants,
      envelope: changes.riskEnvelope ? envelopeToMicros(changes.riskEnvelope) : undefined,
      builderFeeTenthsBps: changes.builder?.feeTenthsBps,
      returnUrlOrigins: changes.returnUrlOrigins,
      requestsPerMinute: changes.limits?.requestsPerMinute,
      ordersPerMinute: changes.limits?.ordersPerMinute,
      legacyTenantIds: changes.legacyTenantIds,
      updatedAt: now,
    }).where(eq(partners.partnerId, input.partnerId));
    await bumpCacheGenerations(tx, "credentials", "partners");
    const after = await operatorPartnerView(tx, input.partnerId, now);
    if (changes.riskEnvelope) {
      const { envelope } = await loadEffectiveAccess(tx, input.partnerId, now);
      await markSetupsOutsideEnvelope(tx, input.partnerId, envelope, now);
    }
    await recordChange(ctx, tx, {
      partnerId: input.partnerId,
      action: "partner.updated",
      before,
      after,
      at: now,
      event: { type: "tenant.updated", data: { change: "SETTINGS", fields: Object.keys(changes) } },
    });
    return after;
  });
  // Authentication reads credentials through a cache: drop it now that the change is committed.
  ctx.caches.credentials.clear();
  ctx.caches.partners.clear();
  return result;
}
