/**
 * Suspending and reactivating a client (spec, States: Client). Suspension blocks
 * new entries and writes; reads and position maintenance continue.
 * Reactivation only lifts this block: every other gate still applies. Asking
 * for the state the client is already in changes nothing and emits nothing.
 */
import { eq } from "drizzle-orm";
import { withPartnerTransaction } from "../credentials/partner_transaction.ts";
import { clients } from "../../db/schema.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { recordChange } from "../events/record_change.ts";
import { type ClientView, clientView, loadClient } from "./load_client.ts";

export async function setClientStatus(
  { ctx, input }: { ctx: Ctx; input: { externalUserId: string; status: "ACTIVE" | "SUSPENDED"; reason: string } },
): Promise<ClientView> {
  const partnerId = partnerOf(ctx);
  const now = ctx.clock.now();
  return await withPartnerTransaction(ctx, async (tx) => {
    const client = await loadClient(tx, partnerId, input.externalUserId);
    if (client.status === input.status) return clientView(client);
    const [updated] = await tx.update(clients).set({ status: input.status, updatedAt: now })
      .where(eq(clients.id, client.id)).returning();
    await recordChange(ctx, tx, {
      partnerId,
      action: input.status === "SUSPENDED" ? "client.suspended" : "client.reactivated",
      reason: input.reason,
      before: { externalUserId: client.externalUserId, status: client.status },
      after: { externalUserId: client.externalUserId, status: input.status },
      at: now,
      event: {
        type: "client.updated",
        tenantId: client.tenantId,
        externalUserId: client.externalUserId,
        data: {
          change: input.status === "SUSPENDED" ? "SUSPENDED" : "REACTIVATED",
          status: input.status,
          reason: input.reason,
        },
      },
    });
    return clientView(updated);
  });
}
