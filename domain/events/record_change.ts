/**
 * An audited change: the audit entry (who, when, why, before, after) and the
 * event that announces it, written together in the caller's transaction.
 */
import type { Tx } from "../../db/client.ts";
import { auditEntries } from "../../db/schema.ts";
import { actorLabel, type Ctx } from "../context.ts";
import { emitEvent, type EventType } from "./emit_event.ts";

export interface AuditedChange {
  partnerId: string;
  action: string;
  reason?: string | null;
  before?: unknown;
  after?: unknown;
  at: number;
  event: {
    type: EventType;
    data: Record<string, unknown>;
    /** Defaults to the partner's own tenant. */
    tenantId?: string;
    externalUserId?: string | null;
  };
}

export async function recordChange(ctx: Ctx, tx: Tx, change: AuditedChange): Promise<void> {
  await tx.insert(auditEntries).values({
    partnerId: change.partnerId,
    actor: actorLabel(ctx.actor),
    action: change.action,
    reason: change.reason ?? null,
    before: change.before ?? null,
    after: change.after ?? null,
    at: change.at,
  });
  await emitEvent(tx, {
    type: change.event.type,
    partnerId: change.partnerId,
    tenantId: change.event.tenantId ?? change.partnerId,
    externalUserId: change.event.externalUserId ?? null,
    occurredAt: change.at,
    data: change.event.data,
  });
}
