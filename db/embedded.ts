/**
 * The embedded libSQL engine (the `libsql` package that `@libsql/client`
 * itself wraps), used directly so a statement is prepared once per connection
 * and rows come back as plain arrays.
 *
 * Measured on the 2-core machine (one indexed lookup of 100,000 clients):
 * `@libsql/client` ~210 µs (it prepares on every call and builds a row object
 * per row), this connection ~13 µs, and ~18 µs through drizzle's prepared query.
 *
 * The engine is synchronous: every statement runs on the event loop. That is
 * what makes it fast, and why work on many rows must be set-based and batched.
 */
import Libsql from "libsql";
import { type QueryMethod, type RunResult, type SqlConnection, type SqlParam, TransactionEnded } from "./connection.ts";

/** Prepared statements kept per connection; the hot set is a few dozen. */
const STATEMENT_CACHE_SIZE = 500;
/**
 * The read connection reads pages through a memory map of the file (the OS
 * page cache) instead of a read syscall per page missing from SQLite's small
 * per-connection cache: a random indexed lookup among 100,000 clients goes
 * from ~18 µs to ~14 µs. Address space, not memory: only pages touched become
 * resident. (Measured on the writer it changed nothing, so it stays default.)
 */
const MMAP_BYTES = 256 * 1024 * 1024;
/** Commits before the background checkpointer starts: short-lived databases (tests, the CLI) never need it. */
const COMMITS_BEFORE_BACKGROUND_CHECKPOINTS = 500;

type Statement = ReturnType<InstanceType<typeof Libsql>["prepare"]>;

/**
 * Every engine opened, kept reachable for the life of the process. When the
 * garbage collector reclaims a libsql connection object, its native
 * finalizer can crash the process with a segmentation fault (seen in test
 * runs that open and close many databases: a third of the runs of
 * tests/db/database_test.ts; none with this list in 16 runs). close() still
 * frees the connection's memory and file; only the small wrapper stays. A
 * service opens its database once, so this costs nothing outside tests.
 * A closed connection's prepared statements stay here too: their finalizers
 * reach into the closed connection (a clean-clone suite run crashed, SIGSEGV,
 * right after a test closed its database).
 */
const opened: unknown[] = [];

export interface EmbeddedOptions {
  /** Refuse writes on this connection (the read handle). */
  readOnly?: boolean;
  /**
   * The writer: checkpoint the WAL in a background worker instead of inside
   * commits (SQLite's default), started once the database sees real write
   * traffic; on close, fold the WAL back into the file.
   */
  checkpointInBackground?: boolean;
  /** How long SQLite itself may wait on a lock, blocking the event loop meanwhile. */
  busyTimeoutMs: number;
  /**
   * The writer: every statement belongs to a write queue's transaction, so one
   * that finds none open is refused (TransactionEnded) instead of running, and
   * committing, on its own after SQLite ended the transaction on an error.
   */
  inTransactionOnly?: boolean;
}

export function openEmbedded(path: string, options: EmbeddedOptions): SqlConnection {
  const engine = new Libsql(path);
  opened.push(engine);
  const statements = new Map<string, Statement>();

  function statement(sql: string): Statement {
    let prepared = statements.get(sql);
    if (prepared) return prepared;
    prepared = engine.prepare(sql);
    if (prepared.reader) prepared.raw(true);
    // Evict the oldest entry: statements built from varying SQL (IN lists) must not grow it forever.
    if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
    statements.set(sql, prepared);
    return prepared;
  }

  engine.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs}`);
  engine.exec("PRAGMA foreign_keys = ON");
  if (options.readOnly) {
    engine.exec("PRAGMA query_only = ON");
    engine.exec(`PRAGMA mmap_size = ${MMAP_BYTES}`);
  }
  if (options.checkpointInBackground) engine.exec("PRAGMA wal_autocheckpoint = 0");
  let commits = 0;
  let checkpointer: Worker | null = null;

  /** Checkpoints are an optimisation: no failure of theirs may reach a commit or the process. */
  function startCheckpointer() {
    try {
      checkpointer = new Worker(new URL("./checkpoint_worker.ts", import.meta.url).href, { type: "module" });
      checkpointer.onmessage = (event) => console.error("WAL checkpoint failed:", event.data.error);
      checkpointer.onerror = (event) => {
        event.preventDefault();
        console.error("WAL checkpointer stopped:", event.message);
      };
      checkpointer.postMessage({ path });
    } catch (error) {
      console.error("WAL checkpointer could not start:", String(error));
    }
  }

  return {
    query(sql: string, params: SqlParam[], method: QueryMethod) {
      if (options.inTransactionOnly && !engine.inTransaction) throw new TransactionEnded();
      const prepared = statement(sql);
      switch (method) {
        case "get":
          return { rows: prepared.get(params) };
        case "run": {
          const { changes, lastInsertRowid } = prepared.run(params);
          return { rows: [], changes, lastInsertRowid: Number(lastInsertRowid) } satisfies RunResult;
        }
        default:
          return { rows: prepared.all(params) };
      }
    },
    exec(sql: string) {
      engine.exec(sql);
    },
    begin() {
      statement("BEGIN IMMEDIATE").run([]);
    },
    commit() {
      statement("COMMIT").run([]);
      if (options.checkpointInBackground && !checkpointer && ++commits === COMMITS_BEFORE_BACKGROUND_CHECKPOINTS) {
        queueMicrotask(startCheckpointer);
      }
    },
    rollback() {
      if (engine.inTransaction) statement("ROLLBACK").run([]);
    },
    inTransaction() {
      return engine.inTransaction;
    },
    close() {
      checkpointer?.terminate();
      opened.push([...statements.values()]);
      statements.clear();
      try {
        if (options.checkpointInBackground) engine.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      } finally {
        engine.close();
      }
    },
  };
}
