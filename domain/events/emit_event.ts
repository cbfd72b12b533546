/**
 * The outbox: every state change writes its event row in the same transaction
 * as the change, so the feed and the webhook job never miss or invent a fact.
 */
import { sql } from "drizzle-orm";
import { preparedFor, type Tx } from "../../db/client.ts";
import { writeWithNext } from "../../db/held_write.ts";
import { rowInsert } from "../../db/row_insert.ts";
import { events } from "../../db/schema.ts";
import { newId } from "../ids.ts";

export type EventType =
  | "client.updated"
  | "tenant.updated"
  | "credential.issued"
  | "credential.revoked"
  | "provider.connected"
  | "provider.connect_failed"
  | "provider.disconnected"
  | "provider.access_lost"
  /** A credential the venue ends by itself (an agent's validity) ends within two weeks: renew it. */
  | "provider.access_expiring"
  | "automation.updated"
  | "position.opened"
  | "position.updated"
  | "position.closed"
  | "protection.degraded"
  | "statement.created"
  | "statement.adjusted"
  | "obligation.created"
  | "obligation.paid"
  /** A credited payment taken back (its transfer left the chain in a reorg); the obligation is open again. */
  | "payment.reversed"
  | "commercial.grace"
  | "commercial.suspended"
  | "commercial.reactivated";

export interface NewEvent {
  type: EventType;
  partnerId: string;
  tenantId: string | null;
  externalUserId: string | null;
  data: Record<string, unknown>;
  occurredAt: number;
}

const insertEvent = preparedFor((db) =>
  db.insert(events).values({
    eventId: sql.placeholder("eventId"),
    eventType: sql.placeholder("type"),
    partnerId: sql.placeholder("partnerId"),
    tenantId: sql.placeholder("tenantId"),
    externalUserId: sql.placeholder("externalUserId"),
    occurredAt: sql.placeholder("occurredAt"),
    data: sql.placeholder("data"),
  }).prepare()
);

export async function emitEvent(tx: Tx, event: NewEvent): Promise<string> {
  const eventId = newId("evt", event.occurredAt);
  // Nobody reads its answer, and only the storage can refuse it (a fresh id, no constraint an event could break):
  // on a libSQL server it travels with the transaction's next statement (db/held_write.ts).
  await writeWithNext(tx, insertEvent(tx), { ...event, eventId });
  return eventId;
}

const eventsInsert = rowInsert(events);

/**
 * Many events of one transaction at once (a period close's page), in the
 * order given: their feed order is the same as had each been emitted in turn.
 * Answers their eventIds, in that order.
 */
export async function emitEvents(tx: Tx, batch: NewEvent[]): Promise<string[]> {
  const rows = batch.map(({ type, ...event }) => ({
    ...event,
    eventType: type,
    eventId: newId("evt", event.occurredAt),
  }));
  await eventsInsert.insertAll(tx, rows);
  return rows.map((row) => row.eventId);
}
