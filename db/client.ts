/**
 * Opening the database: an embedded libSQL file by default, or a libSQL server
 * (`libsql:`, `http(s):`, `ws(s):`) through the web client, with the same code.
 *
 * Writes and reads use separate handles. Every write goes through
 * `withTransaction`, which runs on a single-connection writer handle one
 * transaction at a time: SQLite allows one writer anyway, and queueing in
 * process is cheaper than spinning on SQLITE_BUSY. The writer connection keeps
 * `foreign_keys=ON` for its lifetime; reads use a pool and never block it (WAL).
 */
import type { Client, Config as LibsqlConfig } from "@libsql/client";
import { drizzle, type LibSQLDatabase } from "drizzle-orm/libsql";
import { migrate } from "drizzle-orm/libsql/migrator";
import * as schema from "./schema.ts";

export type Db = LibSQLDatabase<typeof schema>;
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
/** Anything a query can run on: the read handle or an open transaction. */
export type Executor = Db | Tx;

export interface Database {
  /** Read handle (pooled). Use `withTransaction` for anything that writes. */
  read: Db;
  /** Internal: the serialized writer; reach it through `withTransaction`. */
  writer: Db;
  /** Queue of write transactions on the writer connection. */
  lock: AsyncLock;
  close(): void;
}

const MIGRATIONS_FOLDER = new URL("./migrations", import.meta.url).pathname;
const BUSY_TIMEOUT_MS = 5_000;

export async function openDatabase(url: string, authToken?: string): Promise<Database> {
  const local = url.startsWith("file:");
  if (local) await ensureParentDir(url);
  const writerClient = await createClient({ url, authToken, concurrency: 1, timeout: BUSY_TIMEOUT_MS }, local);
  const readerClient = await createClient({ url, authToken, timeout: BUSY_TIMEOUT_MS }, local);
  if (local) {
    // WAL is a property of the file (persists); foreign_keys and synchronous are per connection.
    await writerClient.execute("PRAGMA journal_mode=WAL");
    await writerClient.execute("PRAGMA synchronous=NORMAL");
  }
  await writerClient.execute("PRAGMA foreign_keys=ON");
  const writer = drizzle(writerClient, { schema });
  await migrate(writer, { migrationsFolder: MIGRATIONS_FOLDER });
  return {
    read: drizzle(readerClient, { schema }),
    writer,
    lock: new AsyncLock(),
    close() {
      writerClient.close();
      readerClient.close();
    },
  };
}

async function createClient(config: LibsqlConfig, local: boolean): Promise<Client> {
  // The web client needs no native module, so remote URLs also work on edge runtimes.
  const module = local ? await import("@libsql/client") : await import("@libsql/client/web");
  return module.createClient(config);
}

async function ensureParentDir(url: string): Promise<void> {
  const path = url.slice("file:".length);
  const slash = path.lastIndexOf("/");
  if (slash > 0) await Deno.mkdir(path.slice(0, slash), { recursive: true });
}

/**
 * Run `work` in one write transaction: everything it writes, events included,
 * commits together or not at all. Called with an open transaction it simply
 * joins it, so domain verbs compose.
 */
export async function withTransaction<T>(
  database: Database,
  work: (tx: Tx) => Promise<T>,
  outer?: Tx,
): Promise<T> {
  if (outer) return await work(outer);
  return await database.lock.run(() => database.writer.transaction(work, { behavior: "immediate" }));
}

/** A FIFO mutex: callers run one at a time in arrival order. */
export class AsyncLock {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(task);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}

/**
 * A query built once per executor and reused with placeholders: on hot reads,
 * building drizzle's SQL and preparing the statement cost more than running it.
 */
export function preparedFor<Q>(build: (db: Executor) => Q): (db: Executor) => Q {
  const built = new WeakMap<Executor, Q>();
  return (db) => {
    let query = built.get(db);
    if (!query) built.set(db, query = build(db));
    return query;
  };
}
