/**
 * One WebSocket to a libSQL server and its one Hrana stream (db/remote.ts).
 */
import * as hrana from "@libsql/hrana-client";
// @ts-types="npm:@types/ws@8.18.2"
import NodeWebSocket from "ws";
import { SERVER_UNREACHABLE, type SqlParam } from "./connection.ts";
import type { RemoteEndpoint } from "./remote_endpoint.ts";
import { type ProtoResult, type ProtoStmt, toProto } from "./remote_values.ts";

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
/**
 * How long a statement may wait for its answer. A connection whose route
 * dropped without closing (no FIN, a partition) would otherwise hold its
 * statements, and the write queue behind them, for ever: past this its link
 * is closed, and the statement fails as the server being unreachable (a read
 * is then sent once more on a fresh link). Far above any statement of ours.
 */
export const STATEMENT_TIMEOUT_MS = 30_000;
/** Run first on every stream: pragmas belong to the SQLite connection, and each stream is a new one. */
const STREAM_SETUP = ["PRAGMA foreign_keys = ON"];
/**
 * A statement the server refused (`code` is its SQLite code, `SQLITE_CONSTRAINT`…,
 * or a server code), or a server that could not be reached (`SERVER_UNREACHABLE`).
 * The message reads `<code>: <server's message>`, as `@libsql/client`'s did.
 */
export class LibsqlServerError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    cause: unknown,
    /** Set when a statement sent ahead of the one that failed (Link.executeAfter) was refused: this one never ran. */
    readonly statementAhead?: string,
  ) {
    super(code ? `${code}: ${message}` : message, { cause });
    this.name = "LibsqlServerError";
  }
}

export function isUnreachable(error: unknown): boolean {
  return error instanceof LibsqlServerError && error.code === SERVER_UNREACHABLE;
}

/** One WebSocket and its one stream. */
export class Link {
  readonly client: hrana.WsClient;
  readonly stream: hrana.WsStream;
  /** The Hrana version the server chose; 0 until the link is ready. */
  version = 0;
  /** Settles once the stream's setup ran; null after it did. Only the first statements wait for it. */
  #setup: Promise<void> | null;

  constructor(endpoint: RemoteEndpoint, readonly statementTimeoutMs: number) {
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
    return await this.executeAfter([], sql, params, wantRows);
  }

  /**
   * The statement after the statements `first` (parameterless, answering
   * nothing: a transaction's savepoints), all in one request: a batch in which
   * each step runs only if the one before it succeeded (Hrana's `ok`
   * condition, evaluated by the server). One round trip instead of one per
   * statement. If a step of `first` fails, no later step runs and its error,
   * with its own code, is what this answers; without `first`, a plain execute.
   */
  async executeAfter(
    first: readonly string[],
    sql: string,
    params: SqlParam[],
    wantRows: boolean,
  ): Promise<ProtoResult> {
    const stmt: ProtoStmt = { sql, sqlId: undefined, args: params.map(toProto), namedArgs: [], wantRows };
    // Closing the link fails every statement waiting on it, this one included, as unreachable.
    const silence = setTimeout(() => this.close(), this.statementTimeoutMs);
    try {
      if (this.#setup) await this.#setup;
      return first.length ? await this.#batch([...first.map(plain), stmt]) : await this.stream._execute(stmt);
    } catch (error) {
      throw this.#failure(error);
    } finally {
      clearTimeout(silence);
    }
  }

  /** The last step's result, or the first step's error that stopped the batch (each step runs only after `ok`). */
  async #batch(stmts: ProtoStmt[]): Promise<ProtoResult> {
    const steps = stmts.map((stmt, step) => ({
      stmt,
      condition: step === 0 ? undefined : { type: "ok" as const, step: step - 1 },
    }));
    const { stepResults, stepErrors } = await this.stream._batch({ steps });
    for (let step = 0; step < stmts.length; step++) {
      const error = stepErrors.get(step);
      if (!error) continue;
      const refusal = new hrana.ResponseError(error.message, error);
      if (step === stmts.length - 1) throw refusal;
      throw new LibsqlServerError(error.message, error.code, refusal, stmts[step].sql);
    }
    const result = stepResults.get(stmts.length - 1);
    // Every step ran (no error, and conditions that held): a missing answer is the server's fault, not success.
    if (!result) throw new hrana.ProtoError("The libSQL server skipped a batch step without an error");
    return result;
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

function plain(sql: string): ProtoStmt {
  return { sql, sqlId: undefined, args: [], namedArgs: [], wantRows: false };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
