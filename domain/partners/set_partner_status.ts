/**
 * Suspending, reactivating or revoking a partner (operator). A revoked partner
 * stays revoked: it is the end of the relationship, not a pause.
 */
import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { partners } from "../../db/schema.ts";
import { type Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { recordChange } from "../events/record_change.ts";
import { loadPartner } from "./load_partner.ts";
import { operatorPartnerView } from "./partner_view.ts";
import type { PartnerStatus } from "./types.ts";
import { bumpCacheGenerations } from "../cache_generations.ts";

const ALLOWED: Record<PartnerStatus, PartnerStatus[]> = {
  ACTIVE: ["SUSPENDED", "REVOKED"],
  SUSPENDED: ["ACTIVE", "REVOKED"],
  REVOKED: [],
};

export async function setPartnerStatus(
  { ctx, input }: { ctx: Ctx; input: { partnerId: string; status: PartnerStatus; reason?: string } },
) {
  const now = ctx.clock.now();
  const result = await withTransaction(ctx.db, async (tx) => {
    const partner = await loadPartner(tx, input.partnerId);
    const from = partner.status as PartnerStatus;
    if (from !== input.status) {
      if (!ALLOWED[from].includes(input.status)) {
        throw new ApiError("VALIDATION_ERROR", {
          status: 409,
          message: `Não é possível passar o parceiro de ${from} para ${input.status}.`,
        });
      }
      await tx.update(partners).set({ status: input.status, updatedAt: now })
        .where(eq(partners.partnerId, input.partnerId));
      await bumpCacheGenerations(tx, "credentials", "partners");
      await recordChange(ctx, tx, {
        partnerId: input.partnerId,
        action: "partner.status",
        reason: input.reason ?? null,
        before: { status: from },
        after: { status: input.status },
        at: now,
        event: { type: "tenant.updated", data: { change: "STATUS", status: input.status } },
      });
    }
    return await operatorPartnerView(tx, input.partnerId, now);
  });
  // Authentication reads credentials through a cache: drop it now that the change is committed.
  ctx.caches.credentials.clear();
  ctx.caches.partners.clear();
  return result;
}
