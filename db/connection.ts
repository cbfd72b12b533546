/**
 * One database connection as drizzle's proxy driver sees it: run a statement
 * and hand back rows as arrays. The implementations behind it are chosen by
 * `openDatabase` from the URL: the embedded libSQL engine (`embedded.ts`), a
 * libSQL server over Hrana streams (`remote.ts`), and `@libsql/client` over a
 * local file for tests (`client_connection.ts`).
 *
 * Transactions are explicit (`begin`/`commit`/`rollback`) rather than SQL text,
 * because a remote connection must keep the statements of one transaction on
 * the stream that began it, and know when that stream is gone.
 */
export type QueryMethod = "run" | "all" | "get" | "values";

/** Values drizzle binds; booleans and dates are mapped by drizzle before they get here. */
export type SqlParam = string | number | bigint | null | Uint8Array;

export interface SqlConnection {
  /**
   * Run one statement. `get` answers the first row (an array) or undefined;
   * `all` and `values` answer every row as arrays; `run` answers no rows but
   * what the statement changed (see RunResult).
   */
  query(sql: string, params: SqlParam[], method: QueryMethod): Promise<{ rows: unknown }> | { rows: unknown };
  /** Statements without parameters or result, parsed each time: pragmas, DDL. */
  exec(sql: string): Promise<void> | void;
  /** Start a write transaction that holds the database's write lock from its first statement. */
  begin(): Promise<void> | void;
  commit(): Promise<void> | void;
  rollback(): Promise<void> | void;
  /**
   * Optional: a statement of the open transaction whose answer nobody reads
   * (the write queue's savepoints, the writes of held_write.ts), held and
   * sent with the transaction's next statement or COMMIT in one request,
   * where the next runs only if it succeeded. Its failure fails that next
   * statement with its own error and code, and leaves the transaction unable
   * to commit. Worth it where a statement costs a network round trip
   * (remote.ts); connections without it run such statements as queries, at
   * once.
   */
  runWithNext?(sql: string, params?: SqlParam[]): void;
  /** Whether a transaction is open: SQLite ends one by itself on some errors (disk full, I/O). */
  inTransaction(): boolean;
  close(): void;
}

/**
 * What a `run` changed: the rows it wrote and the last rowid it inserted.
 * Writes on hot paths read these instead of `RETURNING`, whose rows cost
 * more to hand across the driver than the write itself.
 */
export interface RunResult {
  rows: [];
  changes: number;
  lastInsertRowid: number;
}

/**
 * A driver's answer as drizzle's proxy driver takes it for `method`: rows as
 * arrays (drizzle maps them by position), the first row alone for `get`, and
 * for `run` what the statement changed.
 */
export function answerOf<Row>(
  method: QueryMethod,
  result: { rows: Row[]; changes: number; lastInsertRowid: bigint | number | null | undefined },
  asArray: (row: Row) => unknown[],
): { rows: unknown } {
  if (method === "get") return { rows: result.rows.length ? asArray(result.rows[0]) : undefined };
  if (method === "run") {
    const changed: RunResult = {
      rows: [],
      changes: result.changes,
      lastInsertRowid: Number(result.lastInsertRowid ?? 0),
    };
    return changed;
  }
  return { rows: result.rows.map(asArray) };
}

/**
 * A statement meant for the open write transaction found it gone: SQLite
 * ended it on an error (a full disk, an I/O error), or the server did. It is
 * refused, never run on its own outside it, so nothing of a unit, or of
 * statements issued together, commits without the rest; the whole
 * transaction was rolled back. The storage failed: the request can be tried
 * again once the cause is gone.
 */
export class TransactionEnded extends Error {
  readonly code = TRANSACTION_ENDED;
  constructor() {
    super("The write transaction ended before this statement: it was not run");
    this.name = "TransactionEnded";
  }
}

const TRANSACTION_ENDED = "TRANSACTION_ENDED";

/** The connection under each drizzle handle, and whether it is the writer's, registered as db/client.ts opens them. */
const connections = new WeakMap<object, { connection: SqlConnection; writer: boolean }>();

export function registerConnection(handle: object, connection: SqlConnection, writer: boolean): void {
  connections.set(handle, { connection, writer });
}

export function connectionOf(handle: object): SqlConnection | undefined {
  return connections.get(handle)?.connection;
}

/** The writer's connection under `handle`; undefined for any other handle (a reader's). */
export function writerConnectionOf(handle: object): SqlConnection | undefined {
  const entry = connections.get(handle);
  return entry?.writer ? entry.connection : undefined;
}

/**
 * The code of a libSQL server that could not be reached: its connection
 * dropped, or would not open (`remote.ts`).
 */
export const SERVER_UNREACHABLE = "SERVER_UNREACHABLE";

/** sqld's code for a transaction it rolled back because another writer waited too long for its lock. */
const SERVER_TRANSACTION_TIMEOUT = "TRANSACTION_TIMEOUT";

/**
 * The SQLite result code of a failure (`SQLITE_BUSY`, `SQLITE_CONSTRAINT_PRIMARYKEY`…),
 * looking through drizzle's wrapper, which keeps the driver's error as `cause`.
 */
export function sqliteCode(error: unknown): string | undefined {
  return codeOf(error, (code) => code.startsWith("SQLITE_"));
}

function hasCode(error: unknown, wanted: string): boolean {
  return codeOf(error, (code) => code === wanted) !== undefined;
}

/** The first code on the error or its causes that `wanted` accepts. */
function codeOf(error: unknown, wanted: (code: string) => boolean): string | undefined {
  for (let current = error, depth = 0; current && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && wanted(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export function isBusy(error: unknown): boolean {
  const code = sqliteCode(error);
  return code === "SQLITE_BUSY" || code?.startsWith("SQLITE_BUSY_") === true || code === "SQLITE_LOCKED";
}

/**
 * Why the storage itself, not the statement, failed: another process holds the
 * lock past the writer's wait (`BUSY`), the disk is full (`FULL`), or the
 * file cannot be read or written, or the libSQL server cannot be reached
 * (`IO`). SQLite rolls the statement (and on FULL and IO the transaction)
 * back, so nothing of it was kept, and the same request can succeed once the
 * cause is gone. (A server rolls back the transaction of a connection that
 * dropped; only a COMMIT whose answer was lost with it may have landed.)
 * Undefined for anything else.
 */
export function storageFailure(error: unknown): "BUSY" | "FULL" | "IO" | undefined {
  if (hasCode(error, SERVER_UNREACHABLE) || hasCode(error, TRANSACTION_ENDED)) return "IO";
  // sqld waits up to 5 s for its write lock, then takes it from the transaction holding it and rolls that one back:
  // the holder's next statement answers TRANSACTION_TIMEOUT. Nothing of it was kept: another writer was in the way.
  if (hasCode(error, SERVER_TRANSACTION_TIMEOUT)) return "BUSY";
  const code = sqliteCode(error);
  if (!code) return undefined;
  if (isBusy(error) || code.startsWith("SQLITE_LOCKED")) return "BUSY";
  if (code === "SQLITE_FULL") return "FULL";
  if (code.startsWith("SQLITE_IOERR") || code.startsWith("SQLITE_CANTOPEN")) return "IO";
  return undefined;
}
