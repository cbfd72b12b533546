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
import { HranaTally } from "../_helpers/hrana_tally.ts";
import type { Sqld } from "../_helpers/sqld.ts";
import { startTcpRelay, type TcpRelay } from "../_helpers/tcp_relay.ts";

/** sqld behind a relay that keeps each Hrana request's statements as they went on the wire. */
function recordedLink(sqld: Sqld): { relay: TcpRelay; sent: string[][]; clear(): void } {
  const tally = new HranaTally({ keepRequests: true });
  return { relay: startTcpRelay(sqld.url, { tally }), sent: tally.sent, clear: () => tally.take() };
}

/** `count` units queued at once, so they share one transaction; `work` gets the unit's index. */
function concurrentUnits<T>(db: Database, count: number, work: (i: number) => (tx: Tx) => Promise<T>) {
  return Promise.allSettled(Array.from({ length: count }, (_, i) => withTransaction(db, work(i))));
}

Deno.test("remote pipeline: units sharing a transaction send their savepoints with their statements, and commit together", () =>
  withServer(async (sqld) => {
    const { relay, sent } = recordedLink(sqld);
    const db = await openDatabase(relay.url);
    try {
      const before = db.writes.stats;
      const outcomes = await concurrentUnits(db, 6, (i) => async (tx) => {
        await tx.insert(settings).values({ key: `k${i}`, value: "v" });
      });
      assert.ok(outcomes.every((outcome) => outcome.status === "fulfilled"), JSON.stringify(outcomes));
      const after = db.writes.stats;
      assert.ok(after.groups - before.groups < after.units - before.units, "the units shared a transaction");
      const alone = sent.filter((request) => /^(SAVEPOINT|RELEASE|ROLLBACK TO)/.test(request.at(-1)!));
      assert.deepEqual(alone, [], "no savepoint statement paid a round trip of its own");
      assert.ok(
        sent.some((request) => request[0].startsWith("RELEASE") && request.at(-1) === "COMMIT"),
        "the last unit's RELEASE went out with COMMIT",
      );
      assert.deepEqual(await keys(db), ["k0", "k1", "k2", "k3", "k4", "k5"]);
    } finally {
      db.close();
      await relay.close();
    }
  }));

Deno.test("remote pipeline: statements issued together leave in one request, each with its own answer; a refusal stops none of the others", () =>
  withServer(async (sqld) => {
    const { relay, sent, clear } = recordedLink(sqld);
    const { reader, writer } = openRemote(relay.url);
    const read = (sql: string) => reader.query(sql, [], "get");
    try {
      const alone = await failureOf(read("SELECT * FROM missing"));
      clear();
      const answers = await Promise.allSettled([read("SELECT 1"), read("SELECT * FROM missing"), read("SELECT 2")]);
      assert.deepEqual(sent, [["SELECT 1", "SELECT * FROM missing", "SELECT 2"]], "one request, in the order issued");
      assert.deepEqual(answers[0], { status: "fulfilled", value: { rows: [1] } });
      assert.equal(answers[1].status, "rejected");
      const refusal = (answers[1] as PromiseRejectedResult).reason;
      assert.equal(String(refusal), String(alone), "refused as when it went alone");
      assert.equal(sqliteCode(refusal), sqliteCode(alone));
      assert.deepEqual(
        answers[2],
        { status: "fulfilled", value: { rows: [2] } },
        "the refusal before it stopped nothing",
      );

      // Statements that come while a request is in flight wait for its answer, then leave together, whenever each came.
      clear();
      relay.holdAnswers();
      const first = read("SELECT 10");
      while (sent.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const second = read("SELECT 11");
      await new Promise((resolve) => setTimeout(resolve, 20));
      const third = read("SELECT 12");
      relay.releaseAnswers();
      assert.deepEqual(await Promise.all([first, second, third]), [{ rows: [10] }, { rows: [11] }, { rows: [12] }]);
      assert.deepEqual(sent, [["SELECT 10"], ["SELECT 11", "SELECT 12"]]);
    } finally {
      reader.close();
      writer.close();
      await relay.close();
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
      // Two statements issued together after them: neither may run past the failed one, both hear its failure.
      const [error, alsoError] = await Promise.all([failureOf(insert("after")), failureOf(insert("beside"))]);
      assert.equal(sqliteCode(error), "SQLITE_CONSTRAINT", String(error));
      assert.ok(isUniqueViolation(error, "settings.key"), String(error));
      assert.ok(isUniqueViolation(alsoError, "settings.key"), String(alsoError));
      assert.equal(writer.inTransaction(), true, "the transaction is still open on the server, for the rollback");
      assert.equal(await failureOf(writer.commit()), error, "COMMIT refuses with the held statement's failure");
      assert.equal(
        await failureOf(writer.query("SELECT 1", [], "get")),
        error,
        "no later statement runs in a broken transaction",
      );
      await writer.rollback();
      const { rows } = await writer.query("SELECT key FROM settings", [], "all");
      assert.deepEqual(rows, [], "neither the statement before the failure nor those after it were kept");
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
          ].map((sql) => ({ sql, params: [] })),
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
