/**
 * The write queue when the transaction itself fails: every unit's promise
 * settles (none waits forever), and nothing of the failed group is durable.
 * The failure is injected into a real embedded connection, since SQLite
 * cannot be made to refuse a SAVEPOINT on demand.
 */
import assert from "node:assert/strict";
import type { SqlConnection } from "../../db/connection.ts";
import { openEmbedded } from "../../db/embedded.ts";
import { WriteQueue, WriteWaitTimeout } from "../../db/write_queue.ts";

function withFailingSavepoint(connection: SqlConnection, failAt: number): SqlConnection {
  let savepoints = 0;
  return {
    ...connection,
    query(sql, params, method) {
      if (sql.startsWith("SAVEPOINT") && ++savepoints === failAt) throw new Error("injected: disk I/O error");
      return connection.query(sql, params, method);
    },
  };
}

Deno.test("a failing SAVEPOINT settles every unit of its group and keeps none of their writes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-queue-" });
  const connection = openEmbedded(`${dir}/q.db`, { busyTimeoutMs: 0 });
  try {
    connection.exec("CREATE TABLE t (k TEXT PRIMARY KEY)");
    const faulty = withFailingSavepoint(connection, 2);
    const queue = new WriteQueue(faulty, faulty);
    const insert = (key: string) =>
      queue.run(async (c) => {
        await c.query("INSERT INTO t (k) VALUES (?)", [key], "run");
        return key;
      });
    const outcomes = await Promise.allSettled(["a", "b", "c", "d"].map(insert));
    assert.deepEqual(outcomes.map((o) => o.status), ["rejected", "rejected", "rejected", "fulfilled"]);
    const rows = connection.query("SELECT k FROM t ORDER BY k", [], "all") as { rows: string[][] };
    assert.deepEqual(rows.rows, [["d"]], "only the unit of the next, healthy group committed");
  } finally {
    connection.close();
  }
});

Deno.test("a ROLLBACK that keeps failing settles every unit and does not bring the process down", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-queue-" });
  const connection = openEmbedded(`${dir}/q.db`, { busyTimeoutMs: 0 });
  try {
    connection.exec("CREATE TABLE t (k TEXT PRIMARY KEY)");
    let broken = true;
    // A connection that cannot roll back (say, the disk went away): every unit must still hear of it.
    const faulty: SqlConnection = {
      ...connection,
      rollback() {
        if (broken) throw new Error("injected: rollback failed");
        return connection.rollback();
      },
    };
    const queue = new WriteQueue(faulty, faulty);
    const insert = (key: string, fail = false) =>
      queue.run(async (c) => {
        await c.query("INSERT INTO t (k) VALUES (?)", [key], "run");
        if (fail) throw new Error(`unit ${key} fails`);
        return key;
      });
    const outcomes = await Promise.allSettled([insert("a", true), insert("b"), insert("c")]);
    assert.deepEqual(outcomes.map((o) => o.status), ["rejected", "rejected", "rejected"]);
    // Once the connection heals, the queue serves again and nothing of the failed units was kept.
    broken = false;
    connection.rollback();
    assert.equal(await insert("d"), "d");
    const rows = connection.query("SELECT k FROM t ORDER BY k", [], "all") as { rows: string[][] };
    assert.deepEqual(rows.rows, [["d"]]);
  } finally {
    connection.close();
  }
});

Deno.test("a unit that never finishes makes the writes behind it fail loudly, not hang", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-queue-" });
  const connection = openEmbedded(`${dir}/q.db`, { busyTimeoutMs: 0 });
  let release!: () => void;
  try {
    connection.exec("CREATE TABLE t (k TEXT PRIMARY KEY)");
    const queue = new WriteQueue(connection, connection, 50);
    // Holds the writer, as a transaction awaiting something outside the database would.
    const stuck = queue.run(() => new Promise<void>((resolve) => (release = resolve)));
    const waiting = queue.run(async (c) => await c.query("INSERT INTO t (k) VALUES ('x')", [], "run"));
    await assert.rejects(waiting, WriteWaitTimeout);
    release();
    await stuck;
    const later = await queue.run(async (c) => {
      await c.query("INSERT INTO t (k) VALUES ('y')", [], "run");
      return "written";
    });
    assert.equal(later, "written", "the queue works again once the writer is free");
    const rows = connection.query("SELECT k FROM t ORDER BY k", [], "all") as { rows: string[][] };
    assert.deepEqual(rows.rows, [["y"]]);
  } finally {
    connection.close();
  }
});
