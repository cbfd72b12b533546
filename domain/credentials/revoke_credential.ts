/** Immediate revocation of one partner credential (operator). */
import { and, eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { credentials } from "../../db/schema.ts";
import { type Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { recordChange } from "../events/record_change.ts";
import { bumpCacheGenerations } from "../cache_generations.ts";

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
      await bumpCacheGenerations(tx, "credentials");
      await recordChange(ctx, tx, {
        partnerId: input.partnerId,
        action: "credential.revoked",
        after: { clientId: row.clientId },
        at: now,
        event: { type: "credential.revoked", data: { clientId: row.clientId } },
      });
    }
    return { clientId: row.clientId, revokedAt };
  });
  // Authentication reads credentials through a cache: drop it now that the change is committed.
  ctx.caches.credentials.clear();
  return result;
}
