/**
 * The outbox: every state change writes its event row in the same transaction
 * as the change, so the feed and the webhook job never miss or invent a fact.
 */
import type { Tx } from "../../db/client.ts";
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
  | "automation.updated"
  | "position.opened"
  | "position.updated"
  | "position.closed"
  | "protection.degraded"
  | "statement.created"
  | "statement.adjusted"
  | "obligation.created"
  | "obligation.paid"
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

export async function emitEvent(tx: Tx, event: NewEvent): Promise<string> {
  const eventId = newId("evt", event.occurredAt);
  await tx.insert(events).values({
    eventId,
    eventType: event.type,
    partnerId: event.partnerId,
    tenantId: event.tenantId,
    externalUserId: event.externalUserId,
    occurredAt: event.occurredAt,
    data: event.data,
  });
  return eventId;
}
