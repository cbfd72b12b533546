/** Immediate revocation of one partner credential (operator). */
import { and, eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { auditEntries, credentials } from "../../db/schema.ts";
import { actorLabel, type Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { emitEvent } from "../events/emit_event.ts";

export async function revokeCredential(
  { ctx, input }: { ctx: Ctx; input: { partnerId: string; clientId: string } },
): Promise<{ clientId: string; revokedAt: number }> {
  const now = ctx.clock.now();
  const result = await withTransaction(ctx.db, async (tx) => {
    const [row] = await tx.select().from(credentials)
      .where(and(eq(credentials.clientId, input.clientId), eq(credentials.partnerId, input.partnerId)));
    if (!row) throw new ApiError("NOT_FOUND");
    const revokedAt = row.revokedAt ?? now;
    if (!row.revokedAt) {
      await tx.update(credentials).set({ revokedAt }).where(eq(credentials.clientId, row.clientId));
      await tx.insert(auditEntries).values({
        partnerId: input.partnerId,
        actor: actorLabel(ctx.actor),
        action: "credential.revoked",
        after: { clientId: row.clientId },
        at: now,
      });
      await emitEvent(tx, {
        type: "credential.revoked",
        partnerId: input.partnerId,
        tenantId: input.partnerId,
        externalUserId: null,
        occurredAt: now,
        data: { clientId: row.clientId },
      });
    }
    return { clientId: row.clientId, revokedAt };
  });
  // Authentication reads credentials through a cache: drop it now that the change is committed.
  ctx.caches.credentials.clear();
  return result;
}
