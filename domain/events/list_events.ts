/**
 * The pull feed: a partner's events in commit order after a given eventId.
 * `next` is the last eventId returned (or the cursor it was given), so a caller
 * that stores `next` and asks again never misses or repeats an event.
 */
import { and, asc, eq, gt } from "drizzle-orm";
import { events } from "../../db/schema.ts";
import { iso } from "../clock.ts";
import type { Ctx } from "../context.ts";
import { partnerOf } from "../context.ts";
import { ApiError } from "../errors.ts";

export interface EventView {
  eventId: string;
  eventType: string;
  type: string;
  occurredAt: string;
  principalId: string;
  tenantId: string | null;
  externalUserId: string | null;
  data: Record<string, unknown>;
}

export async function listEvents(
  { ctx, input }: { ctx: Ctx; input: { after?: string; limit: number; type?: string } },
): Promise<{ events: EventView[]; next: string }> {
  const partnerId = partnerOf(ctx);
  let afterSeq = 0;
  if (input.after) {
    const [cursor] = await ctx.db.read.select({ seq: events.seq }).from(events)
      .where(and(eq(events.eventId, input.after), eq(events.partnerId, partnerId)));
    if (!cursor) throw new ApiError("VALIDATION_ERROR", { message: "O cursor 'after' não corresponde a um evento." });
    afterSeq = cursor.seq;
  }
  const rows = await ctx.db.read.select().from(events)
    .where(and(
      eq(events.partnerId, partnerId),
      gt(events.seq, afterSeq),
      input.type ? eq(events.eventType, input.type) : undefined,
    ))
    .orderBy(asc(events.seq))
    .limit(input.limit);
  return {
    events: rows.map((row) => ({ ...eventEnvelope(row), type: row.eventType })),
    next: rows.at(-1)?.eventId ?? input.after ?? "",
  };
}

/** An event as pushed to a webhook (the feed also repeats the type as `type`). */
export function eventEnvelope(row: typeof events.$inferSelect) {
  return {
    eventId: row.eventId,
    eventType: row.eventType,
    occurredAt: iso(row.occurredAt),
    principalId: row.partnerId,
    tenantId: row.tenantId,
    externalUserId: row.externalUserId,
    data: row.data,
  };
}
