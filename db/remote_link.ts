/**
 * One WebSocket to a libSQL server and its one Hrana stream (db/remote.ts).
 *
 * One request at a time: a statement that finds the link idle leaves at once
 * (with any issued in the same run of microtasks, e.g. by `Promise.all`);
 * those that come while a request is in flight wait for its answer and then
 * leave together in one batch. The stream runs its requests one after
 * another anyway, so this costs a statement at most the round trip it waits
 * for, and under load sqld answers several statements for the cost of one
 * request (measured against sqld: ~0.26 ms of its CPU a statement sent
 * alone, ~0.08 ms each in batches of 8; the service's ~0.12 ms, ~0.03 ms).
 */
import * as hrana from "@libsql/hrana-client";
// @ts-types="npm:@types/ws@8.18.2"
import NodeWebSocket from "ws";
import { SERVER_UNREACHABLE, type SqlParam, TransactionEnded } from "./connection.ts";
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
/**
 * Statements in one request at most: under load everything that waited
 * for the link's answer leaves together, which bounds one message's size.
 */
const MAX_STATEMENTS_PER_REQUEST = 128;
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
  /** Statements not sent yet, in the order they came. */
  #waiting: Waiting[] = [];
  /** A request of this link is on its way or in flight: statements that come meanwhile wait for its answer. */
  #sending = false;

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
   * The statement after the statements `first` (whose answers nobody reads:
   * a transaction's savepoints, its held writes), which go out ahead of it,
   * each step running only if the one before it succeeded (Hrana's `ok`
   * condition, evaluated by the server). If a step of `first` fails, no
   * later step runs and its error, with its own code, is what this answers.
   *
   * Statements do not each go out at once: those that arrive while the
   * link's request is in flight, or in the same turn of the event loop
   * (`Promise.all`), leave together in one request (see the top of the file).
   *
   * `inTransaction`: they belong to the stream's open transaction, so on a
   * Hrana 3 server each step also runs only while one is open (`not
   * is_autocommit`). A statement that ended it (a full disk) cannot let one
   * sent beside or after it run, and commit, on its own: that one is refused
   * unrun (TransactionEnded), whatever it waited for.
   */
  executeAfter(
    first: readonly Statement[],
    sql: string,
    params: SqlParam[],
    wantRows: boolean,
    inTransaction = false,
  ): Promise<ProtoResult> {
    const stmt = protoStmt({ sql, params }, wantRows);
    return new Promise((resolve, reject) => {
      this.#waiting.push({ first, stmt, inTransaction, resolve, reject });
      if (this.#sending) return;
      this.#sending = true;
      // Statements issued together (Promise.all) reach here within the same run of microtasks: they join this one.
      queueMicrotask(() => void this.#sendWaiting());
    });
  }

  /** Sends what waits, one request at a time, until nothing does; settles every statement, never throws. */
  async #sendWaiting(): Promise<void> {
    try {
      if (this.#setup) await this.#setup.catch(() => {});
      while (this.#waiting.length) await this.#send(this.#waiting.splice(0, MAX_STATEMENTS_PER_REQUEST));
    } finally {
      this.#sending = false;
    }
  }

  /** One request for `group`: a plain execute for a statement alone and unguarded, else a batch. */
  async #send(group: Waiting[]): Promise<void> {
    // Closing the link fails the request, and so every statement of it, as unreachable.
    const silence = setTimeout(() => this.close(), this.statementTimeoutMs);
    // Hrana 2 has no is_autocommit condition: there the write queue's own checks are all (remote.ts).
    const guarded = this.version >= 3;
    try {
      if (group.length === 1 && !group[0].first.length && !(guarded && group[0].inTransaction)) {
        group[0].resolve(await this.stream._execute(group[0].stmt));
        return;
      }
      const batch = batchOf(group, guarded);
      const answered = await this.stream._batch({ steps: batch.steps });
      for (const [index, { resolve, reject }] of group.entries()) {
        const answer = answerOf(batch, batch.answers[index], answered);
        if (answer instanceof Error) reject(this.#failure(answer));
        else resolve(answer);
      }
    } catch (error) {
      for (const { reject } of group) reject(this.#failure(error));
    } finally {
      clearTimeout(silence);
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

/** A statement and the values bound to its placeholders. */
export interface Statement {
  sql: string;
  params: SqlParam[];
}

/** A statement waiting to be sent, the statements to go ahead of it, and its caller. */
interface Waiting {
  first: readonly Statement[];
  stmt: ProtoStmt;
  /** It and `first` belong to the open transaction: guarded, they run only inside one. */
  inTransaction: boolean;
  resolve: (result: ProtoResult) => void;
  reject: (error: unknown) => void;
}

type BatchStep = Parameters<hrana.WsStream["_batch"]>[0]["steps"][number];
type BatchAnswer = Awaited<ReturnType<hrana.WsStream["_batch"]>>;

/**
 * The steps of one request for `group`, the step that answers each of its
 * statements, and which steps were sent ahead (`first`). Those are chained:
 * every step after one runs only if it succeeded (so nothing runs past a
 * failed savepoint, as when each went out with its own statement). The
 * other statements are independent, as separate requests would have been:
 * one's failure does not stop the next. When `guarded`, every step of a
 * transaction's statements also runs only while a transaction is open.
 */
function batchOf(group: Waiting[], guarded: boolean): { steps: BatchStep[]; answers: number[]; ahead: Set<number> } {
  const steps: BatchStep[] = [];
  const answers: number[] = [];
  const ahead = new Set<number>();
  let lastAhead: number | undefined;
  const add = (stmt: ProtoStmt, inTransaction: boolean) => {
    const conds: BatchCond[] = [];
    if (lastAhead !== undefined) conds.push({ type: "ok", step: lastAhead });
    if (guarded && inTransaction) conds.push(INSIDE_TRANSACTION);
    steps.push({ stmt, condition: conds.length > 1 ? { type: "and", conds } : conds[0] });
    return steps.length - 1;
  };
  for (const { first, stmt, inTransaction } of group) {
    for (const statement of first) ahead.add(lastAhead = add(protoStmt(statement, false), inTransaction));
    answers.push(add(stmt, inTransaction));
  }
  return { steps, answers, ahead };
}

type BatchCond = NonNullable<BatchStep["condition"]>;
const INSIDE_TRANSACTION: BatchCond = { type: "not", cond: { type: "is_autocommit" } };

/**
 * The answer of `step`: its result, its own refusal, or, when its condition
 * kept it from running, the refusal of the statement sent ahead that failed
 * (the first that did: the chain stops there).
 */
function answerOf(
  batch: { steps: BatchStep[]; ahead: Set<number> },
  step: number,
  { stepResults, stepErrors }: BatchAnswer,
): ProtoResult | Error {
  const result = stepResults.get(step);
  if (result) return result;
  const error = stepErrors.get(step);
  if (error) return new hrana.ResponseError(error.message, error);
  for (const ahead of batch.ahead) {
    const failed = stepErrors.get(ahead);
    if (ahead > step || !failed) continue;
    const refusal = new hrana.ResponseError(failed.message, failed);
    return new LibsqlServerError(failed.message, failed.code, refusal, batch.steps[ahead].stmt.sql);
  }
  // Nothing ahead failed: a step that runs only inside a transaction found none open (something ended it).
  const { condition } = batch.steps[step];
  if (condition === INSIDE_TRANSACTION || (condition?.type === "and" && condition.conds.includes(INSIDE_TRANSACTION))) {
    return new TransactionEnded();
  }
  // Every step ran (no error, and conditions that held): a missing answer is the server's fault, not success.
  return new hrana.ProtoError("The libSQL server skipped a batch step without an error");
}

function protoStmt({ sql, params }: Statement, wantRows: boolean): ProtoStmt {
  return { sql, sqlId: undefined, args: params.map(toProto), namedArgs: [], wantRows };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
