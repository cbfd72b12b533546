/**
 * The pull feed: a partner's events in commit order after a given eventId.
 * `next` is the last eventId returned (or the cursor it was given), so a caller
 * that stores `next` and asks again never misses or repeats an event.
 *
 * A page is one prepared statement answering one text cell, as the clients
 * list is (list_clients.ts): a page of 100 events handed across the driver
 * value by value cost ~530 µs, most of it the 800 values crossing one by one.
 */
import { and, eq, type SQL, sql } from "drizzle-orm";
import { preparedFor } from "../../db/client.ts";
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

type EventRow = typeof events.$inferSelect;
type PageRow = [
  seq: number,
  eventId: string,
  eventType: string,
  partnerId: string,
  tenantId: string | null,
  externalUserId: string | null,
  occurredAt: number,
  data: EventRow["data"],
];

const cursorSeq = preparedFor((db) =>
  db.select({ seq: events.seq }).from(events)
    .where(and(eq(events.eventId, sql.placeholder("eventId")), eq(events.partnerId, sql.placeholder("partnerId"))))
    .prepare()
);

/** A page after `afterSeq`, `filter` narrowing it; each filter is its own statement, so each keeps its index. */
function eventPage(filter: SQL) {
  return preparedFor((db) =>
    db.select({
      page: sql<string>`json_group_array(json_array(seq, event_id, event_type, partner_id, tenant_id,
        external_user_id, occurred_at, json(data)))`,
    }).from(sql`(
        SELECT seq, event_id, event_type, partner_id, tenant_id, external_user_id, occurred_at, data FROM ${events}
        WHERE partner_id = ${sql.placeholder("partnerId")} AND seq > ${sql.placeholder("afterSeq")} ${filter}
        ORDER BY seq
        LIMIT ${sql.placeholder("limit")}
      ) AS page_rows`).prepare()
  );
}
const anyPage = eventPage(sql``);
const typePage = eventPage(sql`AND event_type = ${sql.placeholder("type")}`);

export async function listEvents(
  { ctx, input }: { ctx: Ctx; input: { after?: string; limit: number; type?: string } },
): Promise<{ events: EventView[]; next: string }> {
  const partnerId = partnerOf(ctx);
  let afterSeq = 0;
  if (input.after) {
    const cursor = await cursorSeq(ctx.db.read).get({ eventId: input.after, partnerId });
    if (!cursor) throw new ApiError("VALIDATION_ERROR", { message: "O cursor 'after' não corresponde a um evento." });
    afterSeq = cursor.seq;
  }
  const query = { partnerId, afterSeq, limit: input.limit };
  const { page } =
    (await (input.type ? typePage(ctx.db.read).get({ ...query, type: input.type }) : anyPage(ctx.db.read).get(query)))!;
  // An aggregate's input order is not guaranteed: sort here.
  const rows = (JSON.parse(page) as PageRow[]).sort((a, b) => a[0] - b[0]).map((
    [seq, eventId, eventType, owner, tenantId, externalUserId, occurredAt, data],
  ): EventRow => ({ seq, eventId, eventType, partnerId: owner, tenantId, externalUserId, occurredAt, data }));
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
