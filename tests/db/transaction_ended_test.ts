/**
 * A statement meant for the write transaction never runs outside it. When the
 * transaction ends under a unit (SQLite rolls it back on a full disk or an
 * I/O error; a server ends it on its timeout; here the unit's own ROLLBACK
 * stands in for them), every later statement of the group is refused with
 * TransactionEnded instead of running, and committing, on its own in
 * autocommit: on the embedded engine, `@libsql/client` over a file and a
 * libSQL server, where statements issued together leave in one request and
 * each step runs only while a transaction is open.
 */
import assert from "node:assert/strict";
import { sql } from "drizzle-orm";
import { type Database, openDatabase, type Tx, withTransaction } from "../../db/client.ts";
import { storageFailure, TransactionEnded } from "../../db/connection.ts";
import { settings } from "../../db/schema.ts";
import { keys, withServer } from "./remote_fixtures.ts";

/** What stands in for SQLite or the server ending the transaction under the unit. */
const endTransaction = (tx: Tx) => tx.run(sql`ROLLBACK`);
const insert = (tx: Tx, key: string) => tx.insert(settings).values({ key, value: "v" });

/** Whether `error` or one of its causes (drizzle wraps the driver's) is a TransactionEnded. */
function isTransactionEnded(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof TransactionEnded) return true;
  }
  return false;
}

async function assertNothingRunsOutside(db: Database): Promise<void> {
  // One unit: the transaction ends, then a write waits for nothing but the end.
  const alone = await withTransaction(db, async (tx) => {
    await insert(tx, "before");
    await endTransaction(tx);
    await insert(tx, "after");
  }).then(() => assert.fail("the write after the end committed"), (error: unknown) => error);
  assert.ok(isTransactionEnded(alone), String(alone));
  assert.equal(storageFailure(alone), "IO", "a storage failure: the request may be tried again");

  // Issued together: the end and a write in the same turn (one request on a server), and a second unit sharing the
  // group. Neither write may outlive the transaction.
  const [together, neighbour] = await Promise.allSettled([
    withTransaction(db, async (tx) => {
      const [, write] = await Promise.allSettled([endTransaction(tx), insert(tx, "beside")]);
      if (write.status === "rejected") throw write.reason;
    }),
    withTransaction(db, (tx) => insert(tx, "neighbour")),
  ]);
  assert.equal(together.status, "rejected");
  assert.ok(isTransactionEnded((together as PromiseRejectedResult).reason), String(together));
  // The neighbour committed only if it ran in a transaction of its own (a later group); never inside the ended one.
  const kept = await keys(db);
  assert.deepEqual(kept.filter((key) => key !== "neighbour"), [], `nothing of the ended transactions: ${kept}`);
  if (neighbour.status === "rejected") assert.ok(storageFailure(neighbour.reason), String(neighbour.reason));

  // A unit that catches the refusal and writes on: that write is refused too, never run on its own.
  const caught = await withTransaction(db, async (tx) => {
    await endTransaction(tx);
    await insert(tx, "caught").catch(() => {});
    await insert(tx, "alone");
  }).then(() => assert.fail("the write after the caught refusal committed"), (error: unknown) => error);
  assert.ok(isTransactionEnded(caught), String(caught));

  // Ended under a unit that is not the first of its group: every unit of the group hears the storage failure, not a
  // refused ROLLBACK TO; the unit queued after them runs in a group of its own.
  const group = await Promise.allSettled(["first", "ender", "later"].map((key) =>
    withTransaction(db, async (tx) => {
      if (key === "ender") await endTransaction(tx);
      await insert(tx, key);
    })
  ));
  for (const outcome of group.slice(0, 2)) {
    assert.equal(outcome.status, "rejected");
    assert.equal(storageFailure((outcome as PromiseRejectedResult).reason), "IO", String(outcome));
  }
  assert.deepEqual((await keys(db)).filter((key) => ["first", "ender", "caught", "alone"].includes(key)), []);

  // The next transaction is whole again.
  await withTransaction(db, (tx) => insert(tx, "next"));
  assert.ok((await keys(db)).includes("next"));
}

for (const engine of ["embedded", "client"] as const) {
  Deno.test(`transaction ended (${engine}): no statement of it runs outside it, the next one works`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "svc-ended-" });
    const db = await openDatabase(`file:${dir}/db.db`, { engine });
    try {
      await assertNothingRunsOutside(db);
    } finally {
      db.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  });
}

Deno.test("transaction ended (server): no statement of it runs outside it, the next one works", () =>
  withServer(async (sqld) => {
    const db = await openDatabase(sqld.url);
    try {
      await assertNothingRunsOutside(db);
    } finally {
      db.close();
    }
  }));
