/**
 * When the effective envelope drops below a client's stored setup, that setup is
 * marked OUTSIDE_ENVELOPE: the entry gates refuse new entries for it until the
 * client lowers the setup. Nothing about the setup itself is changed.
 */
import { and, eq, gt, or } from "drizzle-orm";
import type { Tx } from "../../db/client.ts";
import { clients, clientSetups, type EnvelopeMicros } from "../../db/schema.ts";
import { emitEvent } from "../events/emit_event.ts";

/** Mark (and announce) every not-yet-marked setup of the partner above `envelope`. Returns how many. */
export async function markSetupsOutsideEnvelope(
  tx: Tx,
  partnerId: string,
  envelope: EnvelopeMicros,
  now: number,
): Promise<number> {
  const above = await tx.select({
    clientId: clientSetups.clientId,
    providerId: clientSetups.providerId,
    externalUserId: clients.externalUserId,
    tenantId: clients.tenantId,
  }).from(clientSetups)
    .innerJoin(clients, eq(clients.id, clientSetups.clientId))
    .where(and(
      eq(clients.partnerId, partnerId),
      eq(clientSetups.outsideEnvelope, false),
      or(
        gt(clientSetups.leverage, envelope.maxLeverage),
        gt(clientSetups.maxMarginPerTradeMicros, envelope.maxMarginPerTradeMicros),
        gt(clientSetups.maxConcurrentTrades, envelope.maxConcurrentTrades),
        gt(clientSetups.maxDailyLossMicros, envelope.maxDailyLossMicros),
      ),
    ));
  for (const setup of above) {
    await tx.update(clientSetups).set({ outsideEnvelope: true, updatedAt: now })
      .where(and(eq(clientSetups.clientId, setup.clientId), eq(clientSetups.providerId, setup.providerId)));
    await emitEvent(tx, {
      type: "client.updated",
      partnerId,
      tenantId: setup.tenantId,
      externalUserId: setup.externalUserId,
      occurredAt: now,
      data: { change: "OUTSIDE_ENVELOPE", providerId: setup.providerId, newEntries: "BLOCKED" },
    });
  }
  return above.length;
}
