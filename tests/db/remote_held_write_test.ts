/**
 * A write nobody reads the answer of (db/held_write.ts `writeWithNext`): on a
 * libSQL server (sqld) it is held and travels, with its parameters, in one
 * request with its transaction's next statement or COMMIT, chained so that
 * nothing after it runs unless it succeeded; a held write that fails
 * therefore leaves its whole group uncommitted, every unit refused. On the
 * embedded engine (and `@libsql/client` over a file) it is an awaited write:
 * its failure is its own unit's, at the call.
 */
import assert from "node:assert/strict";
import { eq, sql } from "drizzle-orm";
import { type Database, type Executor, openDatabase, preparedFor, type Tx, withTransaction } from "../../db/client.ts";
import { sqliteCode } from "../../db/connection.ts";
import { writeWithNext } from "../../db/held_write.ts";
import { settings } from "../../db/schema.ts";
import { failureOf, keys, withServer } from "./remote_fixtures.ts";
import { HranaTally } from "../_helpers/hrana_tally.ts";
import { startTcpRelay } from "../_helpers/tcp_relay.ts";

const insertSetting = preparedFor((db: Executor) =>
  db.insert(settings).values({ key: sql.placeholder("key"), value: sql.placeholder("value") }).prepare()
);
/** A held write SQLite refuses whatever else happened: `value` is NOT NULL. */
const refusedSetting = (tx: Tx, key: string) => writeWithNext(tx, insertSetting(tx), { key, value: null });

/** Whether `error` or one of its causes (drizzle wraps the driver's) is that refusal. */
function isNotNullRefusal(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause.message.includes("NOT NULL constraint failed: settings.value")) return true;
  }
  return false;
}

/** `count` units queued at once, so they share one transaction; `work` gets the unit's index. */
function concurrentUnits<T>(db: Database, count: number, work: (i: number) => (tx: Tx) => Promise<T>) {
  return Promise.allSettled(Array.from({ length: count }, (_, i) => withTransaction(db, work(i))));
}

const isInsert = (statement: string) => statement.startsWith(`insert into "settings"`);

Deno.test("held write (server): travels with its parameters in the request of the unit's next statement, and commits with it", () =>
  withServer(async (sqld) => {
    const tally = new HranaTally({ keepRequests: true });
    const relay = startTcpRelay(sqld.url, { tally });
    const db = await openDatabase(relay.url);
    try {
      tally.take();
      const read = await withTransaction(db, async (tx) => {
        await writeWithNext(tx, insertSetting(tx), { key: "held", value: "with the read" });
        return await tx.select().from(settings).where(eq(settings.key, "held"));
      });
      assert.deepEqual(read, [{ key: "held", value: "with the read" }], "the read after it, in its request, sees it");
      // A held write as a unit's last statement goes out with the COMMIT.
      await withTransaction(db, (tx) => writeWithNext(tx, insertSetting(tx), { key: "last", value: "with COMMIT" }));
      assert.deepEqual(
        tally.sent.filter((request) => request.some(isInsert)).map((request) => request.map((s) => s.split(" ")[0])),
        [["insert", "select"], ["insert", "COMMIT"]],
        "each held write left in the request of the statement after it, never alone",
      );
      const stored = await db.read.select().from(settings).orderBy(settings.key);
      assert.deepEqual(stored, [{ key: "held", value: "with the read" }, { key: "last", value: "with COMMIT" }]);
    } finally {
      db.close();
      await relay.close();
    }
  }));

Deno.test("held write (server): one that fails stops everything after it; its group commits nothing, every unit refused", () =>
  withServer(async (sqld) => {
    const db = await openDatabase(sqld.url);
    try {
      await withTransaction(db, (tx) => tx.insert(settings).values({ key: "before", value: "v" }));
      // Four units in one transaction; the second holds a write SQLite refuses, then writes on as if it had not.
      const outcomes = await concurrentUnits(db, 4, (i) => async (tx) => {
        if (i === 1) await refusedSetting(tx, "refused");
        await tx.insert(settings).values({ key: `after${i}`, value: "v" });
      });
      for (const [i, outcome] of outcomes.entries()) {
        assert.equal(outcome.status, "rejected", `unit ${i} was refused with the held write's failure`);
        const reason = (outcome as PromiseRejectedResult).reason;
        assert.equal(sqliteCode(reason), "SQLITE_CONSTRAINT", String(reason));
        assert.ok(isNotNullRefusal(reason), String(reason));
      }
      assert.deepEqual(await keys(db), ["before"], "nothing of the group was kept, not even the writes before it");

      // Alone, as a unit's last statement: its COMMIT is refused with its failure.
      const alone = await failureOf(withTransaction(db, async (tx) => {
        await tx.insert(settings).values({ key: "beside", value: "v" });
        await refusedSetting(tx, "last");
      }));
      assert.ok(isNotNullRefusal(alone), String(alone));
      assert.deepEqual(await keys(db), ["before"]);
      // The writer goes on: the next transaction is a fresh one.
      await withTransaction(db, (tx) => writeWithNext(tx, insertSetting(tx), { key: "next", value: "v" }));
      assert.deepEqual(await keys(db), ["before", "next"]);
    } finally {
      db.close();
    }
  }));

for (const engine of ["embedded", "client"] as const) {
  Deno.test(`held write (${engine}): an awaited write, whose failure is its own unit's, at the call`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "svc-held-" });
    const db = await openDatabase(`file:${dir}/db.db`, { engine });
    try {
      const outcomes = await concurrentUnits(db, 4, (i) => async (tx) => {
        if (i === 1) {
          const refusal = await failureOf(refusedSetting(tx, "refused"));
          // Refused at the call itself, before anything after it ran.
          assert.equal(await keysIn(tx, "after1"), 0);
          throw refusal;
        }
        await writeWithNext(tx, insertSetting(tx), { key: `held${i}`, value: "v" });
        // Already written when the call returns: the same order of effects as an awaited write.
        assert.equal(await keysIn(tx, `held${i}`), 1);
        await tx.insert(settings).values({ key: `after${i}`, value: "v" });
      });
      assert.deepEqual(outcomes.map((outcome) => outcome.status), ["fulfilled", "rejected", "fulfilled", "fulfilled"]);
      const refusal = (outcomes[1] as PromiseRejectedResult).reason;
      assert.ok(isNotNullRefusal(refusal), String(refusal));
      assert.deepEqual(await keys(db), ["after0", "after2", "after3", "held0", "held2", "held3"]);
      await assert.rejects(
        writeWithNext(db.read, insertSetting(db.read), { key: "outside", value: "v" }),
        /only inside a write transaction/,
      );
    } finally {
      db.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  });
}

async function keysIn(tx: Tx, key: string): Promise<number> {
  return (await tx.select().from(settings).where(eq(settings.key, key))).length;
}
