/**
 * "Every venue position of a connected account is known to the service and
 * protected, or the service says why; no protective order is left
 * half-cancelled", checked against the VENUE_A simulator's own books (its
 * control view of the account), the partner's execution-status and the
 * service's records. Shared by the recovery tests and the crash harness.
 * Answers the violations as sentences, prefixed with `who`.
 */
import { and, eq, inArray } from "drizzle-orm";
import type { Executor } from "../../db/client.ts";
import { clients, events, intents, positions } from "../../db/schema.ts";

/** The simulator's view of an account (`GET /_control/accounts/:apiKey`), the fields read here. */
export interface VenueBook {
  positions: { symbol: string; positionAmt: string }[];
  algoOrders: {
    clientAlgoId: string;
    algoStatus: string;
    symbol: string;
    orderType: string;
    triggerPrice: string;
    quantity: string;
  }[];
}

/** A position as `GET /v1/users/:id/execution-status` answers it. */
export interface StatusPosition {
  positionId: string;
  symbol: string;
  side: string;
  quantity: number;
  protection: { status: string; reason: string | null };
}

/** Algo statuses under which the order still waits for its trigger at the venue. */
const WAITING = new Set(["NEW"]);
/** Intent statuses under which a protective order may be working at the venue. */
const WORKING = new Set(["SUBMITTING", "UNCERTAIN", "ACCEPTED", "PARTIALLY_FILLED"]);

export async function positionTruth(
  who: string,
  db: Executor,
  clientId: number,
  book: VenueBook,
  status: StatusPosition[],
): Promise<string[]> {
  const found: string[] = [];
  const rows = await db.select().from(positions).where(eq(positions.clientId, clientId));
  const legs = await db.select().from(intents).where(eq(intents.clientId, clientId));
  const [client] = await db.select().from(clients).where(eq(clients.id, clientId));
  const reported = new Set(
    (await db.select({ data: events.data }).from(events).where(and(
      eq(events.partnerId, client.partnerId),
      eq(events.externalUserId, client.externalUserId),
      inArray(events.eventType, ["protection.degraded"]),
    ))).map(({ data }) => (data as { positionId?: string }).positionId),
  );
  const held = book.positions.filter((p) => Number(p.positionAmt) !== 0).map((p) => ({
    symbol: p.symbol,
    side: Number(p.positionAmt) > 0 ? "LONG" : "SHORT",
    quantity: Math.abs(Number(p.positionAmt)),
  }));

  for (const venue of held) {
    const shown = status.find((p) => p.symbol === venue.symbol && p.side === venue.side);
    const what = `${venue.symbol} ${venue.side} ${venue.quantity}`;
    if (!shown) {
      found.push(`${who}: the venue holds ${what} that execution-status does not show`);
      continue;
    }
    if (Math.abs(shown.quantity - venue.quantity) > 1e-9) {
      found.push(`${who}: the venue holds ${what}, execution-status ${shown.quantity}`);
    }
    if (shown.protection.status !== "PROTECTED") {
      // Reported: the reason in execution-status, and the event that announced it.
      if (!shown.protection.reason || !reported.has(shown.positionId)) {
        found.push(
          `${who}: ${what} is ${shown.protection.status} without a reason and its event (${shown.protection.reason})`,
        );
      }
      continue;
    }
    const row = rows.find((r) => r.positionId === shown.positionId);
    if (!row) {
      found.push(`${who}: ${what} is PROTECTED but the service has no position ${shown.positionId}`);
      continue;
    }
    const own = legs.filter((leg) => leg.positionId === row.positionId);
    const working = book.algoOrders.filter((order) =>
      WAITING.has(order.algoStatus) && own.some((leg) => leg.clientOrderId === order.clientAlgoId)
    );
    if (row.stopLossPrice !== null) {
      const stop = working.find((order) =>
        order.orderType === "STOP_MARKET" && Number(order.quantity) + 1e-9 >= venue.quantity
      );
      if (!stop) found.push(`${who}: ${what} is PROTECTED but no stop of it covers it at the venue`);
    }
    for (const target of row.takeProfits) {
      const filled = own.some((leg) =>
        leg.type === "TAKE_PROFIT" && leg.status === "FILLED" && Number(leg.triggerPrice) === Number(target.price)
      );
      const waiting = working.some((order) =>
        order.orderType === "TAKE_PROFIT_MARKET" && Number(order.triggerPrice) === Number(target.price)
      );
      if (!filled && !waiting) {
        found.push(`${who}: ${what} is PROTECTED but its target ${target.price} is not working at the venue`);
      }
    }
  }

  for (const shown of status) {
    if (!held.some((venue) => venue.symbol === shown.symbol && venue.side === shown.side)) {
      found.push(`${who}: execution-status shows ${shown.symbol} ${shown.side} ${shown.quantity}, the venue nothing`);
    }
  }

  for (const leg of legs.filter((leg) => leg.positionId !== null && leg.orderType !== "MARKET")) {
    const order = book.algoOrders.find((order) => order.clientAlgoId === leg.clientOrderId);
    if (!order) continue;
    const position = rows.find((row) => row.positionId === leg.positionId);
    const name = `${leg.type} ${leg.triggerPrice} of ${leg.positionId}`;
    if (WAITING.has(order.algoStatus) && !WORKING.has(leg.status)) {
      found.push(`${who}: ${name} is recorded ${leg.status} but still waiting at the venue`);
    } else if (WAITING.has(order.algoStatus) && position?.status !== "OPEN") {
      found.push(`${who}: ${name} still waits at the venue though its position is ${position?.status}`);
    } else if (order.algoStatus === "CANCELED" && WORKING.has(leg.status)) {
      found.push(`${who}: ${name} is recorded ${leg.status} but was cancelled at the venue`);
    }
  }

  for (const entry of legs.filter((leg) => leg.opensPosition && Number(leg.executedQuantity) > 0)) {
    if (!WORKING.has(entry.status) && !rows.some((row) => row.entryIntentId === entry.id)) {
      found.push(`${who}: entry ${entry.intentId} is ${entry.status} with a fill and no position`);
    }
  }
  return found;
}
