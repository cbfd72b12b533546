/**
 * The platform's receiving address per payment network (operator,
 * `PUT /operator/v1/payment-recipients/:networkId`). Every change bumps the
 * receiver version; an instruction keeps the address and version it was
 * issued with.
 */
import { eq, sql } from "drizzle-orm";
import { type Executor, withTransaction } from "../../db/client.ts";
import { paymentRecipients } from "../../db/schema.ts";
import { actorLabel, type Ctx } from "../context.ts";

export async function setPaymentRecipient(ctx: Ctx, input: { networkId: string; address: string }) {
  const address = input.address.toLowerCase();
  const now = ctx.clock.now();
  return await withTransaction(ctx.db, async (tx) => {
    const [row] = await tx.insert(paymentRecipients).values({
      networkId: input.networkId,
      address,
      receiverVersion: 1,
      updatedAt: now,
    }).onConflictDoUpdate({
      target: paymentRecipients.networkId,
      set: {
        address,
        receiverVersion: sql`CASE WHEN ${paymentRecipients.address} = ${address}
          THEN ${paymentRecipients.receiverVersion} ELSE ${paymentRecipients.receiverVersion} + 1 END`,
        updatedAt: now,
      },
    }).returning();
    // Platform-wide, not a partner's change: the log keeps who set it (the audit table is per partner).
    ctx.logger.info("payment recipient set", { ...row, actor: actorLabel(ctx.actor) });
    return { networkId: row.networkId, address: row.address, receiverVersion: row.receiverVersion };
  });
}

export async function recipientOf(db: Executor, networkId: string) {
  const [row] = await db.select().from(paymentRecipients).where(eq(paymentRecipients.networkId, networkId));
  return row ?? null;
}
