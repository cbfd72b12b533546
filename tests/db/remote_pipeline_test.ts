/**
 * A write transaction's statements that nobody waits for travel with the
 * next one, on a libSQL server (sqld): the write queue's savepoints go out in
 * one request with the statement after them, as a batch whose steps each run
 * only if the one before succeeded (db/remote.ts). What that must keep:
 * pipelined units commit together; a held statement that fails stops the
 * batch, keeps its SQLite code and leaves nothing committed; a statement's
 * own answer (a compare-and-set's count, a constraint violation) is still its
 * own; a link that drops mid-transaction still fails as unreachable, keeping
 * nothing.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { type Database, isUniqueViolation, openDatabase, type Tx, withTransaction } from "../../db/client.ts";
import { type RunResult, sqliteCode, storageFailure } from "../../db/connection.ts";
import { openRemote } from "../../db/remote.ts";
import { remoteEndpoint } from "../../db/remote_endpoint.ts";
import { Link } from "../../db/remote_link.ts";
import { settings } from "../../db/schema.ts";
import { failureOf, keys, withServer } from "./remote_fixtures.ts";
import { startTcpRelay } from "../_helpers/tcp_relay.ts";

/** What each request of the writers' links carried: the statements sent ahead of it, then its own. */
function recordRequests(): { requests: string[][]; restore(): void } {
  const requests: string[][] = [];
  const original = Link.prototype.executeAfter;
  Link.prototype.executeAfter = function (first, sql, params, wantRows) {
    requests.push([...first, sql]);
    return original.call(this, first, sql, params, wantRows);
  };
  return { requests, restore: () => Link.prototype.executeAfter = original };
}

/** `count` units queued at once, so they share one transaction; `work` gets the unit's index. */
function concurrentUnits<T>(db: Database, count: number, work: (i: number) => (tx: Tx) => Promise<T>) {
  return Promise.allSettled(Array.from({ length: count }, (_, i) => withTransaction(db, work(i))));
}

Deno.test("remote pipeline: units sharing a transaction send their savepoints with their statements, and commit together", () =>
  withServer(async (sqld) => {
    const db = await openDatabase(sqld.url);
    const recorded = recordRequests();
    try {
      const before = db.writes.stats;
      const outcomes = await concurrentUnits(db, 6, (i) => async (tx) => {
        await tx.insert(settings).values({ key: `k${i}`, value: "v" });
      });
      assert.ok(outcomes.every((outcome) => outcome.status === "fulfilled"), JSON.stringify(outcomes));
      const after = db.writes.stats;
      assert.ok(after.groups - before.groups < after.units - before.units, "the units shared a transaction");
      const alone = recorded.requests.filter((request) => /^(SAVEPOINT|RELEASE|ROLLBACK TO)/.test(request.at(-1)!));
      assert.deepEqual(alone, [], "no savepoint statement paid a round trip of its own");
      assert.ok(
        recorded.requests.some((request) => request[0].startsWith("RELEASE") && request.at(-1) === "COMMIT"),
        "the last unit's RELEASE went out with COMMIT",
      );
      assert.deepEqual(await keys(db), ["k0", "k1", "k2", "k3", "k4", "k5"]);
    } finally {
      recorded.restore();
      db.close();
    }
  }));

Deno.test("remote pipeline: a held statement that fails stops its batch, keeps its SQLite code, and nothing commits", () =>
  withServer(async (sqld) => {
    const db = await openDatabase(sqld.url);
    db.close();
    const { writer } = openRemote(sqld.url);
    const holdForNext = (sql: string) => writer.runWithNext!(sql);
    const insert = (key: string) => writer.query("INSERT INTO settings (key, value) VALUES (?, 'v')", [key], "run");
    try {
      await writer.begin();
      await insert("before");
      // Held statements are the write queue's savepoints; a duplicate stands in for one that fails, with a known code.
      holdForNext("SAVEPOINT unit_1");
      holdForNext("INSERT INTO settings (key, value) VALUES ('before', 'v')");
      const error = await failureOf(insert("after"));
      assert.equal(sqliteCode(error), "SQLITE_CONSTRAINT", String(error));
      assert.ok(isUniqueViolation(error, "settings.key"), String(error));
      assert.equal(writer.inTransaction(), true, "the transaction is still open on the server, for the rollback");
      assert.equal(await failureOf(writer.commit()), error, "COMMIT refuses with the held statement's failure");
      assert.equal(
        await failureOf(writer.query("SELECT 1", [], "get")),
        error,
        "no later statement runs in a broken transaction",
      );
      await writer.rollback();
      const { rows } = await writer.query("SELECT key FROM settings", [], "all");
      assert.deepEqual(rows, [], "neither the statement before the failure nor the one after was kept");
    } finally {
      writer.close();
    }
  }));

Deno.test("remote pipeline: the steps after a failed one never run (the server checks each step's condition)", () =>
  withServer(async (sqld) => {
    const db = await openDatabase(sqld.url);
    db.close();
    const { writer } = openRemote(sqld.url);
    const link = new Link(remoteEndpoint(sqld.url), 10_000);
    try {
      const error = await failureOf(
        link.executeAfter(
          [
            "BEGIN IMMEDIATE",
            "INSERT INTO settings (key, value) VALUES ('ran', 'v')",
            "INSERT INTO settings (key, value) VALUES ('ran', 'again')",
          ],
          "INSERT INTO settings (key, value) VALUES ('skipped', 'v')",
          [],
          false,
        ),
      );
      assert.equal(sqliteCode(error), "SQLITE_CONSTRAINT", String(error));
      // The same stream, still inside the transaction the batch began: the steps before the failure ran, not after.
      const inside = await link.execute("SELECT key FROM settings", [], true);
      assert.deepEqual(inside.rows.map((row) => row[0]), ["ran"]);
      await link.execute("ROLLBACK", [], false);
      const { rows } = await writer.query("SELECT key FROM settings", [], "all");
      assert.deepEqual(rows, []);
    } finally {
      link.close();
      writer.close();
    }
  }));

Deno.test("remote pipeline: a compare-and-set in a shared transaction still sees its own count; a duplicate its own code", () =>
  withServer(async (sqld) => {
    const db = await openDatabase(sqld.url);
    try {
      await withTransaction(db, (tx) => tx.insert(settings).values({ key: "cas", value: "v0" }));
      // Six units at once, each swapping v0 for its own value: exactly one may see its UPDATE change a row.
      const swaps = await concurrentUnits(db, 6, (i) => async (tx) => {
        const result = await tx.update(settings).set({ value: `v${i + 1}` })
          .where(eq(settings.value, "v0")).run() as unknown as RunResult;
        return result.changes;
      });
      const counts = swaps.map((outcome) => outcome.status === "fulfilled" ? outcome.value : NaN);
      assert.deepEqual([...counts].sort(), [0, 0, 0, 0, 0, 1], "one swap won, the others saw they lost");
      const [row] = await db.read.select().from(settings).where(eq(settings.key, "cas"));
      assert.equal(row.value, `v${counts.indexOf(1) + 1}`, "the winner's value is the one kept");

      // A duplicate inside a shared transaction: its own unique violation, and the other units commit.
      const outcomes = await concurrentUnits(db, 4, (i) => async (tx) => {
        await tx.insert(settings).values({ key: i === 2 ? "cas" : `new${i}`, value: "v" });
      });
      const failed = outcomes[2];
      assert.equal(failed.status, "rejected");
      assert.equal(sqliteCode(failed.reason), "SQLITE_CONSTRAINT", String(failed.reason));
      assert.ok(isUniqueViolation(failed.reason, "settings.key"));
      assert.deepEqual(await keys(db), ["cas", "new0", "new1", "new3"]);
    } finally {
      db.close();
    }
  }));

Deno.test("remote pipeline: a link that drops with a held savepoint in flight fails its transaction's units as unreachable, keeping nothing of them", () =>
  withServer(async (sqld) => {
    const relay = startTcpRelay(sqld.url);
    const db = await openDatabase(relay.url);
    try {
      await withTransaction(db, (tx) => tx.insert(settings).values({ key: "before", value: "v" }));
      let cutOnce = false;
      const outcomes = await concurrentUnits(db, 4, (i) => async (tx) => {
        // The second unit's first statement carries its SAVEPOINT: cut while the two fly.
        if (i === 1 && !cutOnce) {
          cutOnce = true;
          relay.holdAnswers();
          setTimeout(() => relay.cut(), 50);
        }
        await tx.insert(settings).values({ key: `cut${i}`, value: "v" });
      });
      // The first two ran in the transaction that died; the others, not begun yet, ran in a fresh one or failed too.
      const kept = ["before"];
      for (const [i, outcome] of outcomes.entries()) {
        if (outcome.status === "fulfilled" && i > 1) {
          kept.push(`cut${i}`);
          continue;
        }
        assert.equal(outcome.status, "rejected", `unit ${i}`);
        assert.equal(storageFailure(outcome.reason), "IO", String(outcome.reason));
        assert.equal(sqliteCode(outcome.reason), undefined);
      }
      assert.deepEqual(await keys(db), kept.sort(), "nothing of the cut transaction was kept");
      await withTransaction(db, (tx) => tx.insert(settings).values({ key: "after", value: "v" }));
      assert.deepEqual(await keys(db), ["after", ...kept].sort());
    } finally {
      db.close();
      await relay.close();
    }
  }));
