/**
 * rowInsert's multi-row writes (`insertAll`, `insertAllUnlessConflicting`) on
 * the embedded engine and on `@libsql/client` over a file: rows in chunks of
 * powers of two keep their order and their values (nulls, JSON), and a row a
 * unique index refuses is left out, not written over.
 */
import assert from "node:assert/strict";
import { asc, eq } from "drizzle-orm";
import { type Database, isUniqueViolation, openDatabase, withTransaction } from "../../db/client.ts";
import { rowInsert } from "../../db/row_insert.ts";
import { events, settings } from "../../db/schema.ts";

const ENGINES = ["embedded", "client"] as const;

async function fresh(engine: (typeof ENGINES)[number]): Promise<Database> {
  const dir = await Deno.makeTempDir({ prefix: "svc-rows-" });
  return await openDatabase(`file:${dir}/db.db`, { engine });
}

for (const engine of ENGINES) {
  Deno.test(`rowInsert (${engine}): insertAll writes 100 rows in order (64 + 32 + 4), nulls and JSON intact`, async () => {
    const db = await fresh(engine);
    try {
      const rows = Array.from({ length: 100 }, (_, i) => ({
        eventId: `evt_${String(i).padStart(3, "0")}`,
        eventType: "statement.created",
        partnerId: "p1",
        tenantId: i % 3 ? `t${i}` : null,
        externalUserId: null,
        occurredAt: 1_700_000_000_000 + i,
        data: { index: i, note: i % 2 ? null : "ímpar não", nested: { amountUsd: "12.345678" } },
      }));
      // The order given is the feed order: reversed ids show seq follows the rows, not the ids.
      rows.reverse();
      await withTransaction(db, (tx) => rowInsert(events).insertAll(tx, rows));
      const stored = await db.read.select().from(events).orderBy(asc(events.seq));
      assert.equal(stored.length, 100);
      assert.deepEqual(stored.map(({ seq: _, ...row }) => row), rows);
      assert.ok(stored.every((row, i) => i === 0 || row.seq > stored[i - 1].seq));
    } finally {
      db.close();
    }
  });

  Deno.test(`rowInsert (${engine}): insertAllUnlessConflicting answers the keys written, leaving rows held`, async () => {
    const db = await fresh(engine);
    try {
      const writer = rowInsert(settings);
      await withTransaction(
        db,
        (tx) => writer.insertAll(tx, [{ key: "b", value: "kept" }, { key: "d", value: "kept" }]),
      );
      const offered = ["a", "b", "c", "d", "e"].map((key) => ({ key, value: "new" }));
      const written = await withTransaction(db, (tx) => writer.insertAllUnlessConflicting(tx, offered));
      assert.deepEqual([...written].sort(), ["a", "c", "e"]);
      const stored = await db.read.select().from(settings).orderBy(asc(settings.key));
      assert.deepEqual(stored.map((row) => `${row.key}=${row.value}`), ["a=new", "b=kept", "c=new", "d=kept", "e=new"]);
      await assert.rejects(
        withTransaction(db, (tx) => writer.insertAll(tx, [{ key: "f", value: "v" }, { key: "a", value: "again" }])),
        (error) => isUniqueViolation(error, "settings.key"),
      );
      const keys = (await db.read.select().from(settings)).map((row) => row.key);
      assert.ok(!keys.includes("f"), "a failing insertAll writes none of its rows");
    } finally {
      db.close();
    }
  });

  Deno.test(`rowInsert (${engine}): insertFew answers each row under the key stored with it, in order`, async () => {
    const db = await fresh(engine);
    try {
      const writer = rowInsert(events);
      const row = (eventId: string, index: number) => ({
        eventId,
        eventType: "position.opened",
        partnerId: "p1",
        tenantId: null,
        externalUserId: index % 2 ? "u1" : null,
        occurredAt: 1_700_000_000_000 + index,
        data: { leg: eventId },
      });
      // A row before, so keys do not start at 1 by chance.
      await withTransaction(db, (tx) => writer.insert(tx, row("evt_first", 0)));
      // Ids that sort against the order given: the answer must follow the rows, not the ids.
      const rows = ["evt_stop", "evt_target_b", "evt_target_a"].map(row);
      const answered = await withTransaction(db, (tx) => writer.insertFew(tx, rows));
      assert.deepEqual(answered.map(({ seq: _, ...rest }) => rest), rows);
      assert.ok(answered.every((entry, i) => i === 0 || entry.seq > answered[i - 1].seq));
      for (const entry of answered) {
        const [stored] = await db.read.select().from(events).where(eq(events.seq, entry.seq));
        assert.deepEqual(stored, entry);
      }
      await assert.rejects(
        withTransaction(db, (tx) => writer.insertFew(tx, [row("evt_new", 4), row("evt_stop", 5)])),
        (error) => isUniqueViolation(error, "events.event_id"),
      );
      assert.equal((await db.read.select().from(events)).length, 4, "a failing insertFew writes none of its rows");
    } finally {
      db.close();
    }
  });
}
