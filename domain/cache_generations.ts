/**
 * Keeping the in-process caches (domain/cache.ts) true across instances.
 * Every write that changes what a shared cache holds bumps that cache's
 * generation in `cache_generations`, in the write's own transaction; each
 * instance reads all the generations once per request (and once per job
 * run) before its caches are asked, and clears its copy of every cache whose
 * generation moved since it last looked. A revoke or a suspension committed
 * on one instance thus applies to the next request on every other one,
 * without waiting for the TTL. The TTL stays as the bound for what no write
 * of ours announces.
 *
 * The markets cache is not shared this way: it mirrors the venues' rules,
 * which change on the venues' schedule, not through our writes, so only its
 * TTL can refresh it.
 */
import { setImmediate } from "node:timers";
import { sql } from "drizzle-orm";
import { type Executor, preparedFor, type Tx } from "../db/client.ts";
import { cacheGenerations } from "../db/schema.ts";

/** The caches whose content our own writes change. */
export const SHARED_CACHES = ["credentials", "partners", "providerSettings"] as const;
export type SharedCache = typeof SHARED_CACHES[number];

const bumpGeneration = preparedFor((db) =>
  db.insert(cacheGenerations).values({ cache: sql.placeholder("cache"), generation: 1 })
    .onConflictDoUpdate({
      target: cacheGenerations.cache,
      set: { generation: sql`${cacheGenerations.generation} + 1` },
    })
    .prepare()
);

/**
 * The sum of every generation (a handful of rows): generations only grow, so
 * the sum moves exactly when one of them does. One number crosses the driver
 * on every request; the generations themselves are read only when it moved.
 */
const generationsSum = preparedFor((db) =>
  db.select({ sum: sql<number>`total(${cacheGenerations.generation})` }).from(cacheGenerations).prepare()
);

/** Every generation, as one JSON cell: one value crosses the driver. */
const allGenerations = preparedFor((db) =>
  db.select({ all: sql<string>`json_group_object(${cacheGenerations.cache}, ${cacheGenerations.generation})` })
    .from(cacheGenerations).prepare()
);

/**
 * Inside the transaction of a write that changes what `caches` hold: every
 * instance clears its copies at its next request. (The writer also clears its
 * own after the commit, as before, so its next read in this process is fresh
 * even before then.)
 */
export async function bumpCacheGenerations(tx: Tx, ...caches: SharedCache[]): Promise<void> {
  for (const cache of caches) await bumpGeneration(tx).run({ cache });
}

/** This process's view of the generations, and the caches it clears when one moves. */
export class CacheGenerations {
  #seen = new Map<SharedCache, number>();
  /** The sum of the generations last read; -1 before the first read, so that one reads them all. */
  #seenSum = -1;
  /** The read the callers arrived so far will share, not issued yet. */
  #upcoming: Promise<void> | undefined;

  constructor(private readonly caches: Record<SharedCache, { clear(): void }>) {}

  /**
   * Read the generations and clear the caches that moved. The read is issued
   * at the next turn of the event loop and shared by every caller that
   * arrived before it: each of them was received before the read began, so
   * the read sees every change committed before any of them arrived. A
   * caller arriving once the read has begun waits for the next one. Under
   * load one read serves many requests.
   */
  refresh(db: Executor): Promise<void> {
    return this.#upcoming ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.#upcoming = undefined;
      return this.#read(db);
    });
  }

  async #read(db: Executor): Promise<void> {
    let current: Record<string, number>;
    try {
      const sum = (await generationsSum(db).get())?.sum ?? 0;
      if (sum === this.#seenSum) return;
      const row = await allGenerations(db).get();
      current = row?.all ? JSON.parse(row.all) : {};
      this.#seenSum = sum;
    } catch {
      // Nothing tells what moved: drop every copy (the loads that follow meet the same database).
      for (const name of SHARED_CACHES) this.caches[name].clear();
      this.#seen.clear();
      this.#seenSum = -1;
      return;
    }
    for (const name of SHARED_CACHES) {
      // A cache never bumped is at 0; the first read of a process clears what it may have loaded before.
      const generation = current[name] ?? 0;
      if (this.#seen.get(name) === generation) continue;
      this.caches[name].clear();
      this.#seen.set(name, generation);
    }
  }
}
