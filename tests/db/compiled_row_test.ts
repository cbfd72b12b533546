/**
 * preparedRow (db/compiled_row.ts) answers what drizzle's own `get()` of the
 * same query answers (JSON columns decoded, nulls kept, `sql` expressions as
 * SQLite gives them or through their `mapWith`), on the embedded engine and on `@libsql/client`, on the
 * read handle and inside a transaction; a missing row is undefined and a
 * missing placeholder value an error, not a statement run with a hole.
 */
import assert from "node:assert/strict";
import { and, eq, sql } from "drizzle-orm";
import { type Database, openDatabase, withTransaction } from "../../db/client.ts";
import { preparedRow } from "../../db/compiled_row.ts";
import { events } from "../../db/schema.ts";

const ENGINES = ["embedded", "client"] as const;

const fields = {
  eventId: events.eventId,
  tenantId: events.tenantId,
  occurredAt: events.occurredAt,
  data: events.data,
  sameTypeCount: sql<number>`(SELECT count(*) FROM ${events} AS other WHERE other.event_type = ${events.eventType})`,
  label: sql<string>`${events.eventType} || ':' || ${sql.placeholder("suffix")}`,
  // A text SQLite gives, decoded by its mapWith as drizzle decodes it.
  seqAsNumber: sql`CAST(${events.seq} AS TEXT)`.mapWith(Number),
};
const build = (db: Database["read"], selected: typeof fields) =>
  db.select(selected).from(events).where(
    and(eq(events.partnerId, sql.placeholder("partnerId")), eq(events.eventId, sql.placeholder("eventId"))),
  );
const eventRow = preparedRow(fields, build);

const ROWS = [
  { eventId: "evt_1", tenantId: null, data: { amountUsd: "1.000001", note: "ação", nested: [1, null] } },
  { eventId: "evt_2", tenantId: "t1", data: {} },
].map((row, i) => ({
  ...row,
  eventType: "client.created",
  partnerId: "p1",
  externalUserId: null,
  occurredAt: 1_700_000_000_000 + i,
}));

for (const engine of ENGINES) {
  Deno.test(`preparedRow (${engine}) answers drizzle's own row, undefined for none, and refuses a missing value`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "svc-compiled-row-" });
    const db = await openDatabase(`file:${dir}/db.db`, { engine });
    try {
      await withTransaction(db, (tx) => tx.insert(events).values(ROWS));
      for (const { eventId } of ROWS) {
        const values = { partnerId: "p1", eventId, suffix: "x" };
        const drizzleRow = await build(db.read, fields).get(values as never);
        assert.deepEqual(await eventRow(db.read, values), drizzleRow);
        assert.deepEqual(await withTransaction(db, (tx) => eventRow(tx, values)), drizzleRow);
      }
      const first = await eventRow(db.read, { partnerId: "p1", eventId: "evt_1", suffix: "x" });
      assert.deepEqual(first, {
        eventId: "evt_1",
        tenantId: null,
        occurredAt: 1_700_000_000_000,
        data: ROWS[0].data,
        sameTypeCount: 2,
        label: "client.created:x",
        seqAsNumber: 1,
      });
      assert.equal(await eventRow(db.read, { partnerId: "p2", eventId: "evt_1", suffix: "x" }), undefined);
      await assert.rejects(
        eventRow(db.read, { partnerId: "p1", eventId: "evt_1" }),
        /no value for placeholder "suffix"/,
      );
    } finally {
      db.close();
    }
  });
}
