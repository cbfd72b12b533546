/**
 * Roles one instance at a time holds for the fleet (`service_leases`): the
 * holder renews its lease well before it runs out; another instance takes the
 * role only once the lease has run out (its holder died or froze), and from
 * then the old holder's renewal fails, so it learns it lost the role. Leases
 * run on the wall clock: they measure whether a process is alive.
 */
import { and, eq, lt, or } from "drizzle-orm";
import { type Database, withTransaction } from "../../db/client.ts";
import { serviceLeases } from "../../db/schema.ts";
import { wallClockNow } from "../clock.ts";

/** Claim or renew `name` for `owner` for `leaseMs`; true while `owner` holds it. */
export async function holdServiceLease(db: Database, name: string, owner: string, leaseMs: number): Promise<boolean> {
  const now = wallClockNow();
  return await withTransaction(db, async (tx) => {
    await tx.insert(serviceLeases).values({ name, owner, leasedUntil: now + leaseMs }).onConflictDoUpdate({
      target: serviceLeases.name,
      set: { owner, leasedUntil: now + leaseMs },
      setWhere: or(eq(serviceLeases.owner, owner), lt(serviceLeases.leasedUntil, now)),
    });
    const [row] = await tx.select().from(serviceLeases).where(eq(serviceLeases.name, name));
    return row.owner === owner;
  });
}

/** Give the role up at once (a clean stop), so another instance need not wait for the lease to run out. */
export async function releaseServiceLease(db: Database, name: string, owner: string): Promise<void> {
  await withTransaction(db, (tx) =>
    tx.update(serviceLeases).set({ leasedUntil: 0 })
      .where(and(eq(serviceLeases.name, name), eq(serviceLeases.owner, owner))));
}

/**
 * The instance holding `name` now, or null when nobody does. With
 * `leftAtLeastMs`, only a holder whose lease has that much left: one that
 * renews on time always has, one that stopped renewing (died, froze) soon
 * has not, long before another instance may take the role over.
 */
export async function serviceLeaseHolder(db: Database, name: string, leftAtLeastMs = 0): Promise<string | null> {
  const [row] = await db.read.select().from(serviceLeases).where(eq(serviceLeases.name, name));
  return row && row.leasedUntil > wallClockNow() + leftAtLeastMs ? row.owner : null;
}
