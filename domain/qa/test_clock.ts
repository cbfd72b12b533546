/**
 * The QA test clock: the operator freezes business time at an instant and
 * moves it, like Stripe's test clocks. The frozen instant is kept in the
 * database so a restart does not silently jump back to real time.
 */
import { eq } from "drizzle-orm";
import { type Database, withTransaction } from "../../db/client.ts";
import { settings } from "../../db/schema.ts";
import { iso, type TestableClock } from "../clock.ts";

const KEY = "qa.test_clock";

export async function restoreTestClock(db: Database, clock: TestableClock): Promise<void> {
  const [row] = await db.read.select().from(settings).where(eq(settings.key, KEY));
  clock.freeze(row ? Number(row.value) : null);
}

export async function setTestClock(db: Database, clock: TestableClock, at: number | null) {
  await withTransaction(db, async (tx) => {
    if (at === null) await tx.delete(settings).where(eq(settings.key, KEY));
    else {
      await tx.insert(settings).values({ key: KEY, value: String(at) })
        .onConflictDoUpdate({ target: settings.key, set: { value: String(at) } });
    }
  });
  clock.freeze(at);
  return { now: iso(clock.now()), frozen: at !== null };
}
