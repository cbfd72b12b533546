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
 * Rows are arrays; integers are JS numbers (a RangeError past 2^53, as
 * `@libsql/client`'s default `intMode: "number"`), blobs ArrayBuffers.
 */
import * as hrana from "@libsql/hrana-client";
// @ts-types="npm:@types/ws@8.18.2"
import NodeWebSocket from "ws";
import {
  type QueryMethod,
  type RunResult,
  SERVER_UNREACHABLE,
  type SqlConnection,
  type SqlParam,
} from "./connection.ts";

type ProtoStmt = Parameters<hrana.WsStream["_execute"]>[0];
type ProtoResult = Awaited<ReturnType<hrana.WsStream["_execute"]>>;
type ProtoValue = ProtoStmt["args"][number];

/**
 * Hrana 3 (a stream can say whether a transaction is open) in JSON: decoding
 * protobuf in JavaScript cost the service ~40% more CPU per read (one row of
 * 21 columns: ~85 µs against ~120-145 µs) for ~10% less of sqld's. Hrana 2
 * servers still work, without that answer.
 */
const SUBPROTOCOLS = ["hrana3", "hrana2"];
/**
 * How long opening a connection may take: a server that does not answer (a
 * dropped route) fails the statements waiting for it instead of holding them.
 */
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** Run first on every stream: pragmas belong to the SQLite connection, and each stream is a new one. */
const STREAM_SETUP = ["PRAGMA foreign_keys = ON"];
const MIN_INTEGER = -9223372036854775808n;
const MAX_INTEGER = 9223372036854775807n;

/** Where the WebSocket goes and with which token (`DATABASE_AUTH_TOKEN`, or `authToken` in the URL). */
export interface RemoteEndpoint {
  url: string;
  authToken?: string;
}

/**
 * The WebSocket endpoint of a database URL. `libsql:` is `wss:` (`ws:` with
 * `?tls=0`, as `@libsql/client` reads it). `http(s):` goes to the WebSocket
 * endpoint of the same host: sqld (and Turso) accept the upgrade on their HTTP
 * port, and a reused HTTP stream measured 0.87 ms wall and 0.44 ms of sqld's
 * CPU per `SELECT 1` against 0.30 and 0.16 over a WebSocket. An HTTP stream
 * also has one request in flight at a time (each answer carries the baton the
 * next request needs): statements that arrive meanwhile wait for its answer.
 */
export function remoteEndpoint(databaseUrl: string, authToken?: string): RemoteEndpoint {
  const url = new URL(databaseUrl);
  const scheme = url.protocol.slice(0, -1);
  let tls: boolean | undefined;
  for (const [key, value] of url.searchParams) {
    if (key === "authToken") authToken = value;
    else if (key === "tls" && scheme === "libsql" && (value === "0" || value === "1")) tls = value === "1";
    else throw new Error(`The database URL's query parameter "${key}" is not supported`);
  }
  if (url.hash) throw new Error("The database URL must not have a fragment");
  const socketScheme =
    ({ libsql: tls === false ? "ws" : "wss", wss: "wss", https: "wss", ws: "ws", http: "ws" } as Record<
      string,
      string
    >)[scheme];
  if (!socketScheme) {
    throw new Error(`The database URL scheme "${scheme}:" is not supported: use libsql:, wss:, ws:, https: or http:`);
  }
  if (scheme === "libsql" && tls === false && !url.port) {
    throw new Error('A "libsql:" database URL with ?tls=0 must name its port');
  }
  return { url: `${socketScheme}://${url.host}${url.pathname}`, authToken };
}

/** The reader and writer connections of one database on a libSQL server. */
export function openRemote(databaseUrl: string, authToken?: string): { reader: SqlConnection; writer: SqlConnection } {
  const endpoint = remoteEndpoint(databaseUrl, authToken);
  return { reader: new StreamConnection(endpoint, "reader"), writer: new StreamConnection(endpoint, "writer") };
}

/**
 * A statement the server refused (`code` is its SQLite code, `SQLITE_CONSTRAINT`…,
 * or a server code), or a server that could not be reached (`SERVER_UNREACHABLE`).
 * The message reads `<code>: <server's message>`, as `@libsql/client`'s did.
 */
export class LibsqlServerError extends Error {
  constructor(message: string, readonly code: string | undefined, cause: unknown) {
    super(code ? `${code}: ${message}` : message, { cause });
    this.name = "LibsqlServerError";
  }
}

function isUnreachable(error: unknown): boolean {
  return error instanceof LibsqlServerError && error.code === SERVER_UNREACHABLE;
}

/** One WebSocket and its one stream. */
class Link {
  readonly client: hrana.WsClient;
  readonly stream: hrana.WsStream;
  /** The Hrana version the server chose; 0 until the link is ready. */
  version = 0;
  /** Settles once the stream's setup ran; null after it did. Only the first statements wait for it. */
  #setup: Promise<void> | null;

  constructor(endpoint: RemoteEndpoint) {
    // `ws` (through node:net), not Deno's WebSocket: Deno leaves Nagle's algorithm on for the sockets it opens, and
    // writes a frame's header and payload apart once the payload passes ~1 KB; the payload then waits for the header's
    // ACK, which the server delays by 40 ms: every statement of more than ~1 KB of SQL and arguments took 44 ms (an
    // idempotency key's stored answer, a setup). `ws` sets TCP_NODELAY: 0.4 ms; it costs ~10-20 µs more CPU per read.
    const socket = new NodeWebSocket(endpoint.url, SUBPROTOCOLS, {
      perMessageDeflate: false,
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
    });
    // Not hrana.openWs: it offers protobuf first whenever it offers Hrana 3 (see SUBPROTOCOLS).
    this.client = new hrana.WsClient(
      socket as unknown as ConstructorParameters<typeof hrana.WsClient>[0],
      endpoint.authToken,
    );
    this.stream = this.client.openStream();
    // Sent behind the handshake without waiting for it; statements queue behind them on the stream.
    const setup = Promise.all([this.client.getVersion(), ...STREAM_SETUP.map((sql) => this.stream.run(sql))]).then(
      ([version]) => {
        this.version = version;
        this.#setup = null;
      },
    );
    // A stream whose setup failed is of no use (its statements would run without the pragmas): closed, it is replaced
    // at the next statement. The handler also keeps a setup nobody waited for from being an unhandled rejection.
    setup.catch(() => this.close());
    this.#setup = setup;
  }

  get alive(): boolean {
    return !this.client.closed && !this.stream.closed;
  }

  /**
   * The stream's own `execute` (marked internal, pinned with the package's
   * version): its public `query` builds a row object per row with a property
   * per column and name, which cost 3-4 times the CPU of the whole read for
   * a page of 50 rows; the rows here are mapped straight to arrays.
   */
  async execute(sql: string, params: SqlParam[], wantRows: boolean): Promise<ProtoResult> {
    const stmt: ProtoStmt = { sql, sqlId: undefined, args: params.map(toProto), namedArgs: [], wantRows };
    try {
      if (this.#setup) await this.#setup;
      return await this.stream._execute(stmt);
    } catch (error) {
      throw this.#failure(error);
    }
  }

  /** Whether the stream is inside a transaction; undefined when the server cannot say (Hrana 2) or the link dropped. */
  async inTransaction(): Promise<boolean | undefined> {
    if (this.version < 3 || !this.alive) return undefined;
    try {
      return !(await this.stream.getAutocommit());
    } catch {
      return undefined;
    }
  }

  close(): void {
    this.client.close();
  }

  /**
   * A failure that closed the link (socket closed or refused, stream closed,
   * authentication refused) is the server being unreachable, whatever the
   * client called it; a refusal on a live link is the statement's.
   */
  #failure(error: unknown): unknown {
    if (!this.alive) {
      this.close();
      return new LibsqlServerError(
        `The libSQL server could not be reached: ${messageOf(error)}`,
        SERVER_UNREACHABLE,
        error,
      );
    }
    if (error instanceof hrana.ResponseError) return new LibsqlServerError(error.message, error.code, error);
    return error;
  }
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
  #closed = false;

  constructor(readonly endpoint: RemoteEndpoint, readonly role: "reader" | "writer") {}

  async query(sql: string, params: SqlParam[], method: QueryMethod): Promise<{ rows: unknown }> {
    const result = await this.#run(sql, params, method !== "run");
    if (method === "get") return { rows: result.rows.length ? result.rows[0].map(fromProto) : undefined };
    if (method === "run") {
      const changed: RunResult = {
        rows: [],
        changes: result.affectedRowCount,
        lastInsertRowid: Number(result.lastInsertRowid ?? 0),
      };
      return changed;
    }
    return { rows: result.rows.map((row) => row.map(fromProto)) };
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
        return;
      } catch (error) {
        // Nothing was written yet, and a transaction begun on a link that dropped died with it.
        if (attempt > 1 || !isUnreachable(error)) throw error;
      }
    }
  }

  async commit(): Promise<void> {
    const link = this.#transaction;
    if (!link) return;
    try {
      await this.#inTransaction(link, "COMMIT", [], false);
      this.#transaction = null;
    } catch (error) {
      // Lost with its link, a COMMIT may or may not have landed; refused (a busy commit), the transaction stays open
      // for the write queue's ROLLBACK, unless the server says it ended.
      if (isUnreachable(error)) this.#transaction = null;
      throw error;
    }
  }

  async rollback(): Promise<void> {
    const link = this.#transaction;
    this.#transaction = null;
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
    this.#transaction = null;
    this.#link?.close();
    this.#link = null;
  }

  /** The live link, a fresh one when there is none or the last one dropped. */
  #current(): Link {
    if (this.#closed) throw new Error("The database connection is closed");
    if (!this.#link?.alive) {
      this.#link?.close();
      this.#link = new Link(this.endpoint);
    }
    return this.#link;
  }

  async #run(sql: string, params: SqlParam[], wantRows: boolean): Promise<ProtoResult> {
    if (this.#transaction) return await this.#inTransaction(this.#transaction, sql, params, wantRows);
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
    if (!link.alive) {
      throw new LibsqlServerError(
        "The connection of the open write transaction was lost: the server rolled the transaction back",
        SERVER_UNREACHABLE,
        undefined,
      );
    }
    try {
      return await link.execute(sql, params, wantRows);
    } catch (error) {
      // SQLite ends a transaction by itself on some errors (disk full, I/O): the write queue must know before its next
      // SAVEPOINT or COMMIT, which would otherwise run outside any transaction.
      if (!isUnreachable(error) && this.#transaction === link && await link.inTransaction() === false) {
        this.#transaction = null;
      }
      throw error;
    }
  }
}

/** As `@libsql/hrana-client` converts arguments (`valueToProto`), for the values drizzle binds. */
function toProto(value: unknown): ProtoValue {
  if (value === null || typeof value === "string" || value instanceof Uint8Array) return value;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) {
      throw new RangeError("Only finite numbers (not Infinity or NaN) can be passed as arguments");
    }
    return value;
  }
  if (typeof value === "bigint") {
    if (value < MIN_INTEGER || value > MAX_INTEGER) {
      throw new RangeError(
        "This bigint value is too large to be represented as a 64-bit integer and passed as argument",
      );
    }
    return value;
  }
  if (typeof value === "boolean") return value ? 1n : 0n;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (value instanceof Date) return value.valueOf();
  if (typeof value === "object") return String(value);
  throw new TypeError("Unsupported type of value");
}

/** As `@libsql/client` with its default `intMode: "number"`: blobs arrive as ArrayBuffers. */
function fromProto(value: ProtoValue): unknown {
  if (typeof value === "bigint") {
    const number = Number(value);
    if (!Number.isSafeInteger(number)) {
      throw new RangeError("Received integer which is too large to be safely represented as a JavaScript number");
    }
    return number;
  }
  if (value instanceof Uint8Array) return value.slice().buffer;
  if (value === undefined) throw new Error("The libSQL server sent a value of an unknown type");
  return value;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
