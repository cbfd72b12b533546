/** What every engine's write queue must do with concurrent units: database_test.ts and remote_test.ts. */
import assert from "node:assert/strict";
import { type Database, withTransaction } from "../../db/client.ts";
import { settings } from "../../db/schema.ts";

/**
 * Twenty units at once, every fifth failing: the failing ones roll back
 * alone and the rest are kept; `sharedCommits` also asks that they shared
 * commits (an engine that answers synchronously may run each unit alone).
 */
export async function assertFailingUnitsRollBackAlone(db: Database, sharedCommits: boolean): Promise<void> {
  const write = (key: string, fail: boolean) =>
    withTransaction(db, async (tx) => {
      await tx.insert(settings).values({ key, value: "v" });
      if (fail) throw new Error(`unit ${key} fails`);
      return key;
    });
  const before = db.writes.stats;
  const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => write(`k${i}`, i % 5 === 2)));
  const failed = outcomes.flatMap((o, i) => (o.status === "rejected" ? [`k${i}`] : []));
  assert.deepEqual(failed, ["k2", "k7", "k12", "k17"]);
  const stored = (await db.read.select().from(settings)).map((row) => row.key).sort();
  const expected = Array.from({ length: 20 }, (_, i) => `k${i}`).filter((k) => !failed.includes(k)).sort();
  assert.deepEqual(stored, expected);
  const after = db.writes.stats;
  if (sharedCommits) assert.ok(after.groups - before.groups < after.units - before.units, "units shared commits");
}
