/**
 * Opening the database. `DATABASE_URL` decides the engine: a `file:` URL is the
 * embedded libSQL engine (the default, and the single-node production mode);
 * `libsql:`, `http(s):` and `ws(s):` reach a libSQL server over long-lived
 * Hrana streams (remote.ts). Both sit behind drizzle's proxy driver, so domain
 * code sees one `Db` type and never knows which it has.
 *
 * Reads and writes use separate connections. Every write goes through
 * `withTransaction`, which queues it on the one writer connection (see
 * write_queue.ts); reads never block it (WAL). The embedded read connection
 * refuses writes, so a write that bypasses a transaction fails loudly (sqld
 * refuses `PRAGMA query_only`, so a remote one cannot).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { drizzle, type SqliteRemoteDatabase } from "drizzle-orm/sqlite-proxy";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { isBusy, registerConnection, type SqlConnection } from "./connection.ts";
import { openEmbedded } from "./embedded.ts";
import { clientConnection } from "./client_connection.ts";
import { openRemote } from "./remote.ts";
import * as schema from "./schema.ts";
import { WriteQueue } from "./write_queue.ts";
import { inSpan } from "../domain/telemetry/tracing.ts";

export type Db = SqliteRemoteDatabase<typeof schema>;
/**
 * The handle inside a write transaction. Statements on it run on the writer
 * connection, inside the transaction `withTransaction` opened.
 */
export type Tx = Db;
/** Anything a query can run on: the read handle or an open transaction. */
export type Executor = Db;

export interface Database {
  /** Read handle. Use `withTransaction` for anything that writes. */
  read: Db;
  /** Internal: the writer handle; reach it through `withTransaction`. */
  writer: Tx;
  /** Write transactions, queued and group-committed on the writer connection. */
  writes: WriteQueue<Tx>;
  close(): void;
}

const MIGRATIONS_FOLDER = new URL("./migrations", import.meta.url).pathname;
/** A reader may meet a lock only while the WAL index is rebuilt: a short wait is enough. */
const READER_BUSY_TIMEOUT_MS = 100;

export interface OpenOptions {
  authToken?: string;
  /**
   * `embedded` (the default for `file:`) or `client` (the default for
   * servers, reached over Hrana streams). Tests pass `client` with a `file:`
   * URL for `@libsql/client` over the file: a connection that answers
   * asynchronously, as a server does, without starting one.
   */
  engine?: "embedded" | "client";
  /** A libSQL server: how long a statement waits for its answer before its connection counts as dead (remote.ts). */
  statementTimeoutMs?: number;
}

export async function openDatabase(url: string, options: OpenOptions = {}): Promise<Database> {
  const engine = options.engine ?? (url.startsWith("file:") ? "embedded" : "client");
  const { reader, writer } = engine === "embedded" ? await openFile(url) : await openClient(url, options);
  return assemble(reader, writer);
}

async function openFile(url: string): Promise<{ reader: SqlConnection; writer: SqlConnection }> {
  const path = await ensureParentDir(url);
  // The writer never waits inside SQLite (that would block the event loop): the write queue retries BEGIN.
  const writer = openEmbedded(path, { busyTimeoutMs: 0, checkpointInBackground: true, inTransactionOnly: true });
  // WAL is a property of the file (persists); synchronous=NORMAL in WAL loses no commit on a process crash.
  // Switching a fresh file needs it to itself: an instance starting beside another waits its turn.
  await waitingForStartLock(() => writer.exec("PRAGMA journal_mode = WAL"));
  writer.exec("PRAGMA synchronous = NORMAL");
  const reader = openEmbedded(path, { readOnly: true, busyTimeoutMs: READER_BUSY_TIMEOUT_MS });
  return { reader, writer };
}

async function openClient(
  url: string,
  { authToken, statementTimeoutMs }: OpenOptions,
): Promise<{ reader: SqlConnection; writer: SqlConnection }> {
  // Streams need no native module, so remote URLs also work on edge runtimes.
  if (!url.startsWith("file:")) return openRemote(url, authToken, statementTimeoutMs);
  await ensureParentDir(url);
  const { createClient } = await import("@libsql/client");
  const writer = clientConnection(createClient({ url, authToken }), { inTransactionOnly: true });
  const reader = clientConnection(createClient({ url, authToken }));
  await writer.exec("PRAGMA foreign_keys = ON");
  return { reader, writer };
}

async function assemble(reader: SqlConnection, writer: SqlConnection): Promise<Database> {
  const writerDb = drizzleOver(writer, true);
  const database: Database = {
    read: drizzleOver(reader),
    writer: writerDb,
    writes: new WriteQueue(writer, writerDb),
    close() {
      writer.close();
      reader.close();
    },
  };
  await migrate(database);
  return database;
}

/** The drizzle handle over a connection (exported for tests that wrap a connection to watch it). */
export function drizzleOver(connection: SqlConnection, writer = false): Db {
  const db = drizzle(
    // deno-lint-ignore no-explicit-any
    (sql, params, method) => connection.query(sql, params as never, method) as any,
    { schema },
  );
  registerConnection(db, connection, writer);
  return db;
}

async function ensureParentDir(url: string): Promise<string> {
  const path = url.slice("file:".length);
  const slash = path.lastIndexOf("/");
  if (slash > 0) await Deno.mkdir(path.slice(0, slash), { recursive: true });
  return path;
}

/** How long an instance starting beside another waits for that one to finish migrating (a write waits 5 s). */
const MIGRATION_LOCK_WAIT_MS = 120_000;

/**
 * Apply the pending drizzle-kit migrations in one immediate transaction, so
 * instances starting together on one database apply each migration once;
 * the others wait for the write lock as long as a whole migration run may
 * take on a busy machine, then find it done. The bookkeeping table is
 * drizzle's own (`__drizzle_migrations`).
 */
async function migrate(database: Database): Promise<void> {
  await waitingForStartLock(() => applyMigrations(database));
}

/**
 * `work`, tried again while another instance starting on the same file holds
 * its lock (switching it to WAL, migrating), for as long as a whole migration
 * run may take on a busy machine.
 */
async function waitingForStartLock<T>(work: () => T | Promise<T>): Promise<T> {
  const deadline = performance.now() + MIGRATION_LOCK_WAIT_MS;
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if (!isBusy(error) || performance.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

async function applyMigrations(database: Database): Promise<void> {
  const migrations = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
  await withTransaction(database, async (tx) => {
    await tx.run(
      "CREATE TABLE IF NOT EXISTS __drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)",
    );
    const [last] = await tx.values<[number]>(
      "SELECT created_at FROM __drizzle_migrations ORDER BY created_at DESC LIMIT 1",
    );
    for (const migration of migrations) {
      if (last && Number(last[0]) >= migration.folderMillis) continue;
      for (const statement of migration.sql) if (statement.trim()) await tx.run(statement);
      await tx.run(
        `INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('${migration.hash}', ${migration.folderMillis})`,
      );
    }
  });
}

/** The write transaction the current call runs in, carried along its async calls. */
interface OpenTransaction {
  database: Database;
  tx: Tx;
  /** False once its unit of work has ended: a call still holding it started work it did not wait for. */
  open: boolean;
}

const currentTransaction = new AsyncLocalStorage<OpenTransaction>();

/**
 * Run `work` in one write transaction: everything it writes, events included,
 * commits together or not at all, and the promise settles after the commit.
 *
 * Called inside another transaction's work on the same database, it joins that
 * transaction (the open one travels with the call), so domain verbs compose
 * without passing it along; queueing behind it instead would wait forever for
 * the writer it holds. Work that outlives its transaction (a promise it did
 * not await) fails loudly rather than writing outside any transaction.
 */
export async function withTransaction<T>(database: Database, work: (tx: Tx) => Promise<T>): Promise<T> {
  const current = currentTransaction.getStore();
  if (current?.database === database) {
    if (!current.open) throw new Error("A write started after its transaction ended: await it inside the work");
    return await work(current.tx);
  }
  // One span per write group: its time includes the wait in the write queue, which is what a caller pays.
  return await inSpan("db.write_group", WRITE_GROUP_ATTRIBUTES, () =>
    database.writes.run(async (tx) => {
      const open: OpenTransaction = { database, tx, open: true };
      try {
        return await currentTransaction.run(open, () => work(tx));
      } finally {
        open.open = false;
      }
    }));
}

const WRITE_GROUP_ATTRIBUTES = { "db.system.name": "sqlite", "db.operation.name": "TRANSACTION" };

/**
 * A query built once per handle and reused with placeholders: building
 * drizzle's SQL costs ~130 µs, ten times running the statement. Transactions
 * run on the writer handle itself, so a query prepared for it serves them all.
 */
export function preparedFor<Q>(build: (db: Executor) => Q): (db: Executor) => Q {
  const built = new WeakMap<Executor, Q>();
  return (db) => {
    let query = built.get(db);
    if (!query) built.set(db, query = build(db));
    return query;
  };
}

/**
 * Whether `error` (or one of its causes: drivers wrap it) is SQLite refusing
 * a duplicate of the unique columns `columns` ("table.column, table.column"):
 * SQLite names the columns, not the index.
 */
export function isUniqueViolation(error: unknown, columns: string): boolean {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (cause.message.includes(`UNIQUE constraint failed: ${columns}`)) return true;
  }
  return false;
}
