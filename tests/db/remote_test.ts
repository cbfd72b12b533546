/**
 * The db/ layer on a libSQL server (sqld) over long-lived Hrana streams
 * (db/remote.ts): what every instance relies on (a read sees the latest
 * commit, whoever made it; a duplicate is a unique violation; a failing unit
 * rolls back alone), and what happens when a connection drops: a read is sent
 * once more on a fresh stream, a write inside a transaction never is (it fails
 * as a storage failure, having kept nothing), and the next statements reopen.
 * Drops are made by restarting sqld, or by a TCP relay that cuts its
 * connections, holding the server's answers first so that a statement is in
 * flight when it does. SQLITE_BUSY, which sqld never answers (it waits for
 * its write lock itself), comes from a scripted Hrana server.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { type Database, isUniqueViolation, openDatabase, withTransaction } from "../../db/client.ts";
import { isBusy, sqliteCode, storageFailure } from "../../db/connection.ts";
import { openRemote } from "../../db/remote.ts";
import { remoteEndpoint } from "../../db/remote_endpoint.ts";
import { assertFailingUnitsRollBackAlone } from "./write_units.ts";
import { settings } from "../../db/schema.ts";
import { WriteQueue } from "../../db/write_queue.ts";
import { failureOf, keys, withServer } from "./remote_fixtures.ts";
import { startTcpRelay } from "../_helpers/tcp_relay.ts";

const put = (db: Database, key: string) => withTransaction(db, (tx) => tx.insert(settings).values({ key, value: "v" }));

Deno.test("remote: a read sees a write another instance committed, at once", () =>
  withServer(async (sqld) => {
    const [writer, reader] = [await openDatabase(sqld.url), await openDatabase(sqld.url)];
    try {
      for (let i = 0; i < 20; i++) {
        // Reads pipelined on the reader's stream around each commit: none may keep an older snapshot.
        const around = Array.from({ length: 10 }, () => reader.read.select().from(settings));
        await put(writer, `k${i}`);
        await Promise.all(around);
        const [row] = await reader.read.select().from(settings).where(eq(settings.key, `k${i}`));
        assert.equal(row?.value, "v", `k${i} is read on the other instance right after its commit`);
      }
    } finally {
      writer.close();
      reader.close();
    }
  }));

Deno.test("remote: a duplicate is a unique violation with the server's SQLite code, and the writer goes on", () =>
  withServer(async (sqld) => {
    const db = await openDatabase(sqld.url);
    try {
      await put(db, "once");
      const error = await failureOf(put(db, "once"));
      assert.ok(isUniqueViolation(error, "settings.key"), String(error));
      assert.equal(sqliteCode(error), "SQLITE_CONSTRAINT");
      assert.equal(storageFailure(error), undefined);
      await put(db, "after");
      assert.deepEqual(await keys(db), ["after", "once"]);
    } finally {
      db.close();
    }
  }));

Deno.test("remote: concurrent write units share a transaction, and a failing one rolls back alone", () =>
  withServer(async (sqld) => {
    const db = await openDatabase(sqld.url);
    try {
      await assertFailingUnitsRollBackAlone(db, true);
    } finally {
      db.close();
    }
  }));

Deno.test("remote: integers, reals, text, blobs and nulls come back as @libsql/client answered them", () =>
  withServer(async (sqld) => {
    const { reader, writer } = openRemote(sqld.url);
    try {
      await writer.exec("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n)");
      const run = await writer.query("INSERT INTO t VALUES (?, ?, ?, ?, ?)", [
        2 ** 53 - 1,
        1.5,
        "ação 😀",
        new Uint8Array([0, 255]),
        null,
      ], "run");
      assert.deepEqual(run, { rows: [], changes: 1, lastInsertRowid: 1 });
      const [row] = (await reader.query("SELECT * FROM t", [], "all")).rows as unknown[][];
      assert.deepEqual(row.slice(0, 3), [2 ** 53 - 1, 1.5, "ação 😀"]);
      assert.ok(row[3] instanceof ArrayBuffer);
      assert.deepEqual([...new Uint8Array(row[3] as ArrayBuffer)], [0, 255]);
      assert.equal(row[4], null);
      assert.deepEqual((await reader.query("SELECT i FROM t", [], "get")).rows, [2 ** 53 - 1]);
      assert.equal((await reader.query("SELECT i FROM t WHERE 0", [], "get")).rows, undefined);
      assert.deepEqual((await reader.query("SELECT i, s FROM t", [], "values")).rows, [[2 ** 53 - 1, "ação 😀"]]);
      assert.ok(await failureOf(reader.query("SELECT 9007199254740993", [], "get")) instanceof RangeError);
      // Foreign keys are enforced on every stream (a pragma of the connection, which each stream is).
      await writer.exec("CREATE TABLE parent (id INTEGER PRIMARY KEY)");
      await writer.exec("CREATE TABLE child (parent_id INTEGER REFERENCES parent (id))");
      const refused = await failureOf(writer.query("INSERT INTO child VALUES (?)", [1], "run"));
      assert.match(String(refused), /FOREIGN KEY constraint failed/);
    } finally {
      reader.close();
      writer.close();
    }
  }));

Deno.test("remote: a statement of more than 1 KB is not held back 40 ms by Nagle's algorithm", () =>
  withServer(async (sqld) => {
    const { writer } = openRemote(sqld.url);
    try {
      await writer.exec("CREATE TABLE t (v TEXT)");
      const times: number[] = [];
      for (let i = 0; i < 9; i++) {
        const started = performance.now();
        await writer.query("INSERT INTO t VALUES (?)", ["x".repeat(2_000)], "run");
        times.push(performance.now() - started);
      }
      // Over Deno's own WebSocket each took 44 ms (the payload waited for the ACK of its frame's header).
      assert.ok(times.sort((a, b) => a - b)[4] < 20, `median ${times[4].toFixed(1)} ms`);
    } finally {
      writer.close();
    }
  }));

Deno.test("remote: after the server restarts, the transactions it cut fail as storage failures and keep nothing; the next reads and writes reopen", () =>
  withServer(async (sqld) => {
    const db = await openDatabase(sqld.url);
    try {
      await put(db, "before");
      assert.deepEqual(await keys(db), ["before"]);
      // A unit that writes again after the restart, and a group whose second unit comes after it.
      for (const writesAfter of [true, false]) {
        let entered!: () => void;
        const inside = new Promise<void>((resolve) => entered = resolve);
        let resume!: () => void;
        const restarted = new Promise<void>((resolve) => resume = resolve);
        const cut = withTransaction(db, async (tx) => {
          await tx.insert(settings).values({ key: "cut-1", value: "v" });
          entered();
          await restarted;
          if (writesAfter) await tx.insert(settings).values({ key: "cut-2", value: "v" });
        });
        const joined = writesAfter ? null : put(db, "joined");
        await inside;
        await sqld.restart();
        resume();
        for (const error of [await failureOf(cut), ...joined ? [await failureOf(joined)] : []]) {
          assert.equal(storageFailure(error), "IO", String(error));
          assert.equal(sqliteCode(error), undefined);
        }
        assert.deepEqual(await keys(db), ["before"], "the read reopened, and nothing of the cut transaction was kept");
      }
      await put(db, "after");
      assert.deepEqual(await keys(db), ["after", "before"]);
    } finally {
      db.close();
    }
  }));

Deno.test("remote: a read in flight when its connection drops is answered on a fresh one; a write in flight fails and is not sent again", () =>
  withServer(async (sqld) => {
    const relay = startTcpRelay(sqld.url);
    const db = await openDatabase(relay.url);
    try {
      await put(db, "before");
      assert.deepEqual(await keys(db), ["before"]);
      const opened = relay.connections;

      relay.holdAnswers();
      const read = keys(db);
      await delay(50);
      relay.cut();
      assert.deepEqual(await read, ["before"], "the read was sent once more on a fresh connection");
      assert.equal(relay.connections, opened + 1, "one new connection: the reader's");

      const error = await failureOf(withTransaction(db, async (tx) => {
        relay.holdAnswers();
        setTimeout(() => relay.cut(), 50);
        await tx.insert(settings).values({ key: "in-flight", value: "v" });
      }));
      assert.equal(storageFailure(error), "IO", String(error));
      // Sent again on a fresh stream, the insert would have run outside any transaction, and stayed.
      assert.deepEqual(await keys(db), ["before"], "the insert died with its transaction");
      await put(db, "after");
      assert.deepEqual(await keys(db), ["after", "before"]);
    } finally {
      db.close();
      await relay.close();
    }
  }));

Deno.test("remote: a connection that goes silent without closing fails its statements after the timeout, then reopens", () =>
  withServer(async (sqld) => {
    const relay = startTcpRelay(sqld.url);
    const db = await openDatabase(relay.url, { statementTimeoutMs: 300 });
    try {
      await put(db, "before");
      let started = 0;
      const error = await failureOf(withTransaction(db, async (tx) => {
        relay.holdAnswers();
        started = performance.now();
        await tx.insert(settings).values({ key: "unanswered", value: "v" });
      }));
      assert.equal(storageFailure(error), "IO", String(error));
      assert.ok(performance.now() - started < 5_000, "failed at its timeout, not held for ever");
      // The read's connection went silent too: after its timeout it is sent once more on a fresh one, which answers.
      assert.deepEqual(await keys(db), ["before"], "the silent connection's transaction was rolled back");
      await put(db, "after");
      assert.deepEqual(await keys(db), ["after", "before"]);
    } finally {
      db.close();
      await relay.close();
    }
  }));

Deno.test("remote: SQLITE_BUSY from the server is a busy failure, and the write queue waits it out", async () => {
  const server = startScriptedServer({ busyBegins: 2 });
  const { writer } = openRemote(server.url);
  try {
    const error = await failureOf(writer.begin());
    assert.ok(isBusy(error), String(error));
    assert.equal(storageFailure(error), "BUSY");
    const queue = new WriteQueue(writer, writer);
    await queue.run((connection) => Promise.resolve(connection.query("INSERT INTO t VALUES (1)", [], "run")));
    assert.deepEqual(server.statements, [
      "PRAGMA foreign_keys = ON",
      "BEGIN IMMEDIATE",
      "BEGIN IMMEDIATE",
      "BEGIN IMMEDIATE",
      "INSERT INTO t VALUES (1)",
      "COMMIT",
    ]);
  } finally {
    writer.close();
    await server.close();
  }
});

for (const [code, failure] of [["SQLITE_FULL", "FULL"], ["TRANSACTION_TIMEOUT", "BUSY"]] as const) {
  Deno.test(`remote: a transaction the server ended by itself (${code}) is seen as ended, a ${failure} storage failure, so the write queue does not go on outside it`, async () => {
    const server = startScriptedServer({ busyBegins: 0, failInserts: code });
    const { writer } = openRemote(server.url);
    try {
      await writer.begin();
      assert.equal(writer.inTransaction(), true);
      const error = await failureOf(writer.query("INSERT INTO t VALUES (1)", [], "run"));
      assert.equal(storageFailure(error), failure);
      assert.equal(writer.inTransaction(), false);
      await writer.rollback();
      assert.ok(!server.statements.includes("ROLLBACK"), "nothing left to roll back");
    } finally {
      writer.close();
      await server.close();
    }
  });
}

Deno.test("remote: a held write the server refuses by ending the transaction (SQLITE_FULL) stops every step after it: nothing runs outside the transaction, its group fails and the next one begins afresh", async () => {
  const server = startScriptedServer({ busyBegins: 0, failInserts: "SQLITE_FULL" });
  const { writer } = openRemote(server.url);
  try {
    const queue = new WriteQueue(writer, writer);
    // Three units queued at once: the first two share a transaction, the second holding an INSERT the disk refuses.
    const outcomes = await Promise.allSettled([0, 1, 2].map((i) =>
      queue.run(async (connection) => {
        if (i === 1) connection.runWithNext!("INSERT INTO t VALUES (?)", [i]);
        await connection.query(`UPDATE t SET v = ${i}`, [], "run");
      })
    ));
    assert.deepEqual(outcomes.map((outcome) => outcome.status), ["rejected", "rejected", "fulfilled"]);
    for (const outcome of outcomes.slice(0, 2)) {
      // Both units hear the disk's refusal (a 503 for their requests), not what a ROLLBACK TO after it would say.
      assert.equal(storageFailure((outcome as PromiseRejectedResult).reason), "FULL", String(outcome));
    }
    assert.deepEqual(server.statements, [
      "PRAGMA foreign_keys = ON",
      "BEGIN IMMEDIATE",
      "UPDATE t SET v = 0",
      "SAVEPOINT unit_1",
      "INSERT INTO t VALUES (?)",
      // The UPDATE that travelled with it never ran (it would have, alone, in autocommit), nor a COMMIT.
      "BEGIN IMMEDIATE",
      "UPDATE t SET v = 2",
      "COMMIT",
    ]);
  } finally {
    writer.close();
    await server.close();
  }
});

Deno.test("remote: database URLs map to the WebSocket endpoint of their host", () => {
  assert.deepEqual(remoteEndpoint("libsql://db-org.turso.io", "jwt"), {
    url: "wss://db-org.turso.io",
    authToken: "jwt",
  });
  assert.deepEqual(remoteEndpoint("libsql://127.0.0.1:8080?tls=0"), {
    url: "ws://127.0.0.1:8080",
    authToken: undefined,
  });
  assert.deepEqual(remoteEndpoint("https://db.example.com/?authToken=t"), {
    url: "wss://db.example.com/",
    authToken: "t",
  });
  assert.deepEqual(remoteEndpoint("http://127.0.0.1:8080"), { url: "ws://127.0.0.1:8080/", authToken: undefined });
  assert.deepEqual(remoteEndpoint("wss://db.example.com"), { url: "wss://db.example.com/", authToken: undefined });
  assert.throws(() => remoteEndpoint("libsql://db.example.com?tls=0"), /must name its port/);
  assert.throws(() => remoteEndpoint("libsql://db.example.com?sync=1"), /query parameter "sync"/);
  assert.throws(() => remoteEndpoint("postgres://db.example.com"), /scheme "postgres:"/);
});

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

type Condition =
  | { type: "ok"; step: number }
  | { type: "is_autocommit" }
  | { type: "not"; cond: Condition }
  | { type: "and"; conds: Condition[] };

/**
 * A Hrana 3 server over WebSocket that answers from a script instead of a
 * database: BEGIN IMMEDIATE is refused with SQLITE_BUSY `busyBegins` times,
 * every INSERT with `failInserts`, ending the transaction (as SQLite on a
 * full disk); every other statement succeeds. A batch runs its steps in turn,
 * each only if its condition holds. It records the SQL it ran.
 */
function startScriptedServer(script: { busyBegins: number; failInserts?: "SQLITE_FULL" | "TRANSACTION_TIMEOUT" }) {
  const statements: string[] = [];
  let busy = script.busyBegins;
  let autocommit = true;
  const run = (sql: string) => {
    statements.push(sql);
    if (sql === "BEGIN IMMEDIATE" && busy > 0) {
      busy--;
      throw { message: "database is locked", code: "SQLITE_BUSY" };
    }
    if (sql.startsWith("INSERT") && script.failInserts) {
      autocommit = true;
      throw { message: "the statement failed", code: script.failInserts };
    }
    if (sql.startsWith("BEGIN")) autocommit = false;
    if (sql === "COMMIT" || sql === "ROLLBACK") autocommit = true;
    return { cols: [], rows: [], affected_row_count: 1, last_insert_rowid: null };
  };
  const answer = (request: Record<string, unknown>): Record<string, unknown> => {
    if (request.type === "execute") return { type: "execute", result: run((request.stmt as { sql: string }).sql) };
    if (request.type === "batch") {
      const { steps } = request.batch as { steps: { stmt: { sql: string }; condition?: Condition }[] };
      const results: unknown[] = [];
      const errors: unknown[] = [];
      // The conditions db/remote_link.ts sends: `ok` (the step named ran and succeeded), `is_autocommit`, `not`, `and`.
      const holds = (condition: Condition): boolean =>
        condition.type === "ok"
          ? results[condition.step] !== null
          : condition.type === "is_autocommit"
          ? autocommit
          : condition.type === "not"
          ? !holds(condition.cond)
          : condition.conds.every(holds);
      for (const { stmt, condition } of steps) {
        const runs = !condition || holds(condition);
        let result = null;
        let error = null;
        try {
          if (runs) result = run(stmt.sql);
        } catch (refusal) {
          error = refusal;
        }
        results.push(result);
        errors.push(error);
      }
      return { type: "batch", result: { step_results: results, step_errors: errors } };
    }
    if (request.type === "get_autocommit") return { type: "get_autocommit", is_autocommit: autocommit };
    return { type: request.type };
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    // Set by hand: Deno's check of the offered protocols expects ", " between them, and `ws` sends ",".
    const { socket, response } = Deno.upgradeWebSocket(request);
    response.headers.set("sec-websocket-protocol", "hrana3");
    socket.onmessage = (event) => {
      const message = JSON.parse(event.data);
      if (message.type === "hello") return socket.send(JSON.stringify({ type: "hello_ok" }));
      try {
        const ok = answer(message.request);
        socket.send(JSON.stringify({ type: "response_ok", request_id: message.request_id, response: ok }));
      } catch (error) {
        socket.send(JSON.stringify({ type: "response_error", request_id: message.request_id, error }));
      }
    };
    return response;
  });
  return {
    url: `ws://127.0.0.1:${server.addr.port}`,
    statements,
    close: () => server.shutdown(),
  };
}
