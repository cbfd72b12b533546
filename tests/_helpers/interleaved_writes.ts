/**
 * Races made deterministic: the database as a job sees it, with `before`
 * run (and committed) ahead of every write transaction the job queues after
 * its first, so another writer's change lands between the job's reads and
 * its writes exactly where a concurrent instance's could.
 */
import type { Database } from "../../db/client.ts";

export function interleavedWrites(db: Database, before: () => Promise<void>): Database {
  let units = 0;
  const writes = {
    run: async <T>(work: Parameters<Database["writes"]["run"]>[0]) => {
      if (units++ > 0) await before();
      return await db.writes.run(work) as T;
    },
  } as unknown as Database["writes"];
  return { ...db, writes };
}
