/**
 * A libSQL server (`libsql:`, `wss:`, `ws:`, `https:`, `http:`) over long-lived
 * Hrana streams (`@libsql/hrana-client`), one WebSocket per connection.
 *
 * A stream is one SQLite connection on the server, kept while the stream
 * lives. `@libsql/client` opened a stream per statement, and sqld then opens a
 * fresh SQLite connection for each (~1.4 ms of its CPU even for `SELECT 1`
 * with our schema); a stream kept open costs ~0.18 ms, and statements that
 * concurrent callers send pipeline on it (~0.10 ms each). Measured against
 * sqld with a 60-table schema.
 *
 * Each of the two connections `openDatabase` asks for is one WebSocket with
 * one stream:
 * - the reader runs every statement in autocommit (it never sends BEGIN): each
 *   read is its own implicit transaction and sees every commit made before
 *   it, on any instance; no snapshot is ever held open;
 * - the writer: the write queue serializes transactions on it; BEGIN
 *   IMMEDIATE, the statements, the savepoints and COMMIT travel on its one
 *   stream (what `client.transaction("write")` sent, on a stream of its own).
 *
 * Failures. A link (socket and stream) that dropped is replaced by a fresh one
 * when the next statement comes; every stream first runs the per-connection
 * pragmas. A read that failed because its link dropped is sent once more on a
 * fresh link (sqld refuses `PRAGMA query_only`, so the reader cannot refuse
 * writes as the embedded one does; nothing writes through it, since every
 * test runs on the embedded engine too). A statement inside a transaction is
 * never sent again nor anywhere else: on a fresh stream it would run outside
 * the transaction, which died with its link (the server rolls back the
 * transaction of a stream that closes). It fails with `SERVER_UNREACHABLE`, a
 * storage failure (503) once the write queue fails its units. Only BEGIN is
 * tried once more on a fresh link, since nothing was written before it. SQL
 * errors keep the server's code (`SQLITE_CONSTRAINT`…) and message, as
 * `@libsql/client` reported them.
 *
 * Round trips. sqld spends ~0.2 ms of CPU on a Hrana request and ~0.05 ms
 * on each statement in it (the service ~0.1 ms and ~0.02 ms), so statements
 * travel together wherever nothing waits between them (remote_link.ts): a
 * link sends one request at a time, and the statements that came meanwhile
 * (concurrent reads of concurrent requests, a unit's `Promise.all`) leave
 * together in the next, as a batch whose steps are independent, each with
 * its own answer or refusal, as separate requests would have been. A
 * statement never waits for a request it could have joined: one that finds
 * the link idle leaves at once (with those issued in the same run of
 * microtasks). A write transaction pays one round trip per statement its
 * work waits for. The write queue's savepoints nobody waits for, nor the
 * writes whose answers nobody reads (held_write.ts): they are held
 * (`runWithNext`) and go out ahead of the next statement, chained so that
 * each step after them runs only if they succeeded; a group of units costs
 * no round trip for them. A held statement that fails stops its
 * batch there (the statements after it never run and fail with the held
 * one's error, its code kept), and the transaction is then broken: every
 * later statement and COMMIT fail with that error without being sent,
 * until the write queue rolls back. So COMMIT never lands on a transaction
 * missing one of its steps.
 *
 * A statement left unanswered for STATEMENT_TIMEOUT_MS (a route that dropped
 * without closing) closes its link and fails as unreachable, as above.
 *
 * Rows are arrays; integers are JS numbers (a RangeError past 2^53, as
 * `@libsql/client`'s default `intMode: "number"`), blobs ArrayBuffers.
 *
 * Here: the two connections and their rules. The socket and its stream are
 * remote_link.ts; a URL's endpoint remote_endpoint.ts; values remote_values.ts.
 */
import {
  answerOf,
  type QueryMethod,
  SERVER_UNREACHABLE,
  type SqlConnection,
  type SqlParam,
  TransactionEnded,
} from "./connection.ts";
import { type RemoteEndpoint, remoteEndpoint } from "./remote_endpoint.ts";
import { isUnreachable, LibsqlServerError, Link, type Statement, STATEMENT_TIMEOUT_MS } from "./remote_link.ts";
import { fromProto, type ProtoResult } from "./remote_values.ts";

/** The reader and writer connections of one database on a libSQL server. */
export function openRemote(
  databaseUrl: string,
  authToken?: string,
  statementTimeoutMs = STATEMENT_TIMEOUT_MS,
): { reader: SqlConnection; writer: SqlConnection } {
  const endpoint = remoteEndpoint(databaseUrl, authToken);
  return {
    reader: new StreamConnection(endpoint, "reader", statementTimeoutMs),
    writer: new StreamConnection(endpoint, "writer", statementTimeoutMs),
  };
}

/**
 * One connection as the db/ layer sees it. The reader sends a read once more
 * after its link dropped; the writer never sends a statement twice, except a
 * BEGIN.
 */
class StreamConnection implements SqlConnection {
  #link: Link | null = null;
  /** The link the open transaction runs on, or null. */
  #transaction: Link | null = null;
  /** Statements of the open transaction held to go out with its next statement (`runWithNext`). */
  #held: Statement[] = [];
  /** The failure of a held statement: the open transaction can no longer commit. */
  #broken: unknown = null;
  /**
   * The open transaction ended under its statements (SQLite or the server
   * ended it): until the write queue's ROLLBACK, a statement is refused
   * (TransactionEnded), never run, and committed, on its own outside it.
   */
  #endedUnder = false;
  #closed = false;

  constructor(
    readonly endpoint: RemoteEndpoint,
    readonly role: "reader" | "writer",
    readonly statementTimeoutMs: number,
  ) {}

  async query(sql: string, params: SqlParam[], method: QueryMethod): Promise<{ rows: unknown }> {
    const result = await this.#run(sql, params, method !== "run");
    const answer = { rows: result.rows, changes: result.affectedRowCount, lastInsertRowid: result.lastInsertRowid };
    return answerOf(method, answer, (row) => row.map(fromProto));
  }

  async exec(sql: string): Promise<void> {
    await this.#run(sql, [], false);
  }

  async begin(): Promise<void> {
    for (let attempt = 1;; attempt++) {
      const link = this.#current();
      try {
        await link.execute("BEGIN IMMEDIATE", [], false);
        this.#transaction = link;
        this.#endedUnder = false;
        return;
      } catch (error) {
        // Nothing was written yet, and a transaction begun on a link that dropped died with it.
        if (attempt > 1 || !isUnreachable(error)) throw error;
      }
    }
  }

  /**
   * Held until the transaction's next statement (or COMMIT) goes out, in the
   * same request, which runs only if this succeeded (see the top of the file).
   * Only inside a transaction: its statements leave on its own stream, in order.
   */
  runWithNext(sql: string, params: SqlParam[] = []): void {
    // Ended under its statements (SQLite or the server ended it): a storage failure, as for any of its statements.
    if (this.#endedUnder) throw new TransactionEnded();
    if (!this.#transaction) throw new Error("Only a statement inside a transaction can wait for the next one");
    // Its transaction already died with its link: failing now is what sending it would have done.
    if (!this.#transaction.alive) throw transactionLost();
    this.#held.push({ sql, params });
  }

  async commit(): Promise<void> {
    const link = this.#transaction;
    if (!link) return;
    try {
      // Held statements go with it: one request, COMMIT running only if they all succeeded.
      await this.#inTransaction(link, "COMMIT", [], false);
      this.#ended();
    } catch (error) {
      // Lost with its link, a COMMIT may or may not have landed; refused (a busy commit, a held statement that
      // failed), the transaction stays open for the write queue's ROLLBACK, unless the server says it ended.
      if (isUnreachable(error)) this.#ended();
      throw error;
    }
  }

  async rollback(): Promise<void> {
    const link = this.#transaction;
    // Held statements that never left are simply dropped: ROLLBACK would undo them anyway.
    this.#ended();
    this.#endedUnder = false;
    // None open, or it died with its link: the server rolls back the transaction of a stream that closes.
    if (!link?.alive) return;
    try {
      await link.execute("ROLLBACK", [], false);
    } catch {
      // Whatever refused the ROLLBACK (SQLite had ended the transaction itself, the link dropped), closing the link
      // ends any transaction left on the server; the next statement opens a fresh one.
      link.close();
    }
  }

  /**
   * A transaction whose link dropped still reads as open until it is rolled
   * back: its next statement (the write queue's SAVEPOINT or COMMIT) then
   * fails as unreachable, never sent anywhere else, and that storage failure
   * is what every unit of its group hears.
   */
  inTransaction(): boolean {
    return this.#transaction !== null;
  }

  close(): void {
    this.#closed = true;
    this.#ended();
    this.#link?.close();
    this.#link = null;
  }

  /** No transaction open any more: nothing held for it, nothing broken. */
  #ended(): void {
    this.#transaction = null;
    this.#held = [];
    this.#broken = null;
  }

  /** The live link, a fresh one when there is none or the last one dropped. */
  #current(): Link {
    if (this.#closed) throw new Error("The database connection is closed");
    if (!this.#link?.alive) {
      this.#link?.close();
      this.#link = new Link(this.endpoint, this.statementTimeoutMs);
    }
    return this.#link;
  }

  async #run(sql: string, params: SqlParam[], wantRows: boolean): Promise<ProtoResult> {
    if (this.#transaction) return await this.#inTransaction(this.#transaction, sql, params, wantRows);
    if (this.#endedUnder) throw new TransactionEnded();
    if (this.role === "writer") return await this.#current().execute(sql, params, wantRows);
    try {
      return await this.#current().execute(sql, params, wantRows);
    } catch (error) {
      // A read changes nothing: once more on a fresh link, after a dropped one (a restarted server, a cut idle socket).
      if (!isUnreachable(error)) throw error;
      return await this.#current().execute(sql, params, wantRows);
    }
  }

  /** Only ever on the transaction's own link: on another stream the statement would run outside it. */
  async #inTransaction(link: Link, sql: string, params: SqlParam[], wantRows: boolean): Promise<ProtoResult> {
    if (!link.alive) throw transactionLost();
    // A held statement failed: nothing after it may run in this transaction, COMMIT least of all.
    if (this.#broken) throw this.#broken;
    const held = this.#held;
    this.#held = [];
    try {
      return await link.executeAfter(held, sql, params, wantRows, true);
    } catch (error) {
      if (error instanceof LibsqlServerError && error.statementAhead !== undefined && this.#transaction === link) {
        // Statements issued together all hear the failure: the first to report it stands for it.
        this.#broken ??= error;
      }
      // SQLite ends a transaction by itself on some errors (disk full, I/O): the write queue must know before its next
      // SAVEPOINT or COMMIT, which would otherwise run outside any transaction.
      if (!isUnreachable(error) && this.#transaction === link && await link.inTransaction() === false) {
        this.#ended();
        this.#endedUnder = true;
      }
      throw error;
    }
  }
}

function transactionLost(): LibsqlServerError {
  return new LibsqlServerError(
    "The connection of the open write transaction was lost: the server rolled the transaction back",
    SERVER_UNREACHABLE,
    undefined,
  );
}
