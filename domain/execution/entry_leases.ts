/**
 * One entry at a time per account, across instances: an entry (the engine's
 * or a manual opening) claims the account's lease in the database before it
 * is judged or recorded, holds it (renewed) through send, fill, position and
 * protection, and releases it. A second entry meanwhile is ACCOUNT_BUSY.
 *
 * A holder that goes silent (crashed, or frozen past its lease) is taken over
 * once its lease has run out; the claim raises the lease's fence, and every
 * write a holder makes as the entry's owner (the send's outcome, the position)
 * checks its fence inside that write's transaction, so a frozen holder that
 * wakes up writes nothing. What it may already have sent cannot land late
 * either: every send carries a deadline the venue enforces (send_intent.ts).
 *
 * The partial unique index on in-flight entry intents stays beside the lease:
 * an entry whose outcome is unknown (UNCERTAIN) keeps the next one out until a
 * query settles it, however long that takes, which no lease should decide.
 */
import { and, eq, isNotNull, isNull, lte, or, sql } from "drizzle-orm";
import { type Executor, preparedFor, type Tx, withTransaction } from "../../db/client.ts";
import { entryLeases } from "../../db/schema.ts";
import { wallClockNow } from "../clock.ts";
import { randomToken } from "../ids.ts";
import { LeaseRenewal, releaseLease } from "../lease_renewal.ts";
import type { Ctx } from "../context.ts";

/**
 * An entry's venue round trips take well under a second; a holder that is
 * merely slow renews its lease every third of it. Short, because after a
 * crash the account's next entry and its reconciliation wait it out.
 */
export const ENTRY_LEASE_MS = 10_000;

export interface AccountKey {
  clientId: number;
  providerId: string;
}

export interface EntryLease extends AccountKey {
  readonly owner: string;
  readonly fence: number;
}

/** A holder's write found its lease taken over: it writes nothing, the new holder settles the entry. */
export class EntryLeaseLost extends Error {
  constructor(lease: AccountKey) {
    super(`The entry lease of client ${lease.clientId} at ${lease.providerId} was taken over`);
    this.name = "EntryLeaseLost";
  }
}

/** A token for one holder (a dispatch run, a manual opening, a reconciliation). */
export const newLeaseOwner = () => randomToken(16);

/**
 * Claim the account's entry lease for `owner` in the caller's transaction: a
 * free, released or run-out lease is taken (its fence raised), a held one is
 * not. Answers the lease won, or null (another entry holds it).
 */
export async function claimEntryLease(tx: Tx, account: AccountKey, owner: string): Promise<EntryLease | null> {
  const wall = wallClockNow();
  const row = await claim(tx).get({ ...account, owner, leasedUntil: wall + ENTRY_LEASE_MS, wall });
  return row ? { ...account, owner, fence: row.fence } : null;
}

const claim = preparedFor((db) =>
  db.insert(entryLeases).values({
    clientId: sql`${sql.placeholder("clientId")}`,
    providerId: sql`${sql.placeholder("providerId")}`,
    owner: sql`${sql.placeholder("owner")}`,
    fence: 1,
    leasedUntil: sql`${sql.placeholder("leasedUntil")}`,
  }).onConflictDoUpdate({
    target: [entryLeases.clientId, entryLeases.providerId],
    set: { owner: sql`excluded.owner`, fence: sql`${entryLeases.fence} + 1`, leasedUntil: sql`excluded.leased_until` },
    setWhere: or(isNull(entryLeases.owner), lte(entryLeases.leasedUntil, sql.placeholder("wall"))),
  }).returning({ fence: entryLeases.fence }).prepare()
);

/**
 * Take over the account's lease only if its holder went silent (held, run out):
 * answers the new lease, or null when the lease is free or live. Used by the
 * reconciliation, which works on a free account without holding it (so it
 * never turns an entry away) and leaves a live holder to finish.
 */
export async function takeOverSilentLease(tx: Tx, account: AccountKey, owner: string): Promise<EntryLease | null> {
  const wall = wallClockNow();
  const row = await takeOver(tx).get({ ...account, owner, leasedUntil: wall + ENTRY_LEASE_MS, wall });
  return row ? { ...account, owner, fence: row.fence } : null;
}

const accountIs = and(
  eq(entryLeases.clientId, sql.placeholder("clientId")),
  eq(entryLeases.providerId, sql.placeholder("providerId")),
);

const takeOver = preparedFor((db) =>
  db.update(entryLeases).set({
    owner: sql`${sql.placeholder("owner")}`,
    fence: sql`${entryLeases.fence} + 1`,
    leasedUntil: sql`${sql.placeholder("leasedUntil")}`,
  }).where(and(accountIs, isNotNull(entryLeases.owner), lte(entryLeases.leasedUntil, sql.placeholder("wall"))))
    .returning({ fence: entryLeases.fence }).prepare()
);

/** FREE (never claimed, or released), HELD (an entry is at work), SILENT (held, but its lease ran out). */
export type EntryLeaseState = "FREE" | "HELD" | "SILENT";

export async function entryLeaseState(db: Executor, account: AccountKey): Promise<EntryLeaseState> {
  const row = await leaseOf(db).get({ ...account });
  if (!row?.owner) return "FREE";
  return row.leasedUntil > wallClockNow() ? "HELD" : "SILENT";
}

const leaseOf = preparedFor((db) =>
  db.select({ owner: entryLeases.owner, leasedUntil: entryLeases.leasedUntil }).from(entryLeases).where(accountIs)
    .prepare()
);

/**
 * Fails the caller's transaction when `lease` is no longer this holder's (its
 * fence moved: another holder took over). Run inside the write it guards, the
 * check and the write commit together.
 */
export async function assertHoldsEntryLease(tx: Tx, lease: EntryLease): Promise<void> {
  if (!await heldBy(tx).get({ ...lease })) throw new EntryLeaseLost(lease);
}

const ownerIs = and(
  accountIs,
  eq(entryLeases.owner, sql.placeholder("owner")),
  eq(entryLeases.fence, sql.placeholder("fence")),
);

const heldBy = preparedFor((db) => db.select({ fence: entryLeases.fence }).from(entryLeases).where(ownerIs).prepare());

const renew = preparedFor((db) =>
  db.update(entryLeases).set({ leasedUntil: sql`${sql.placeholder("leasedUntil")}` }).where(ownerIs)
    .returning({ fence: entryLeases.fence }).prepare()
);

const release = preparedFor((db) => db.update(entryLeases).set({ owner: null }).where(ownerIs).prepare());

/** Free the account for its next entry, in the caller's transaction (a claim whose entry could not be recorded). */
export async function releaseEntryLease(tx: Tx, lease: EntryLease): Promise<void> {
  await release(tx).run({ ...lease });
}

/**
 * Run `work` holding `lease`: renewed while it runs, released after it (also
 * when it fails; a release the database refuses is tried again in the
 * background, lease_renewal.ts). Work that freed the account in its own last
 * write (releaseEntryLease in that transaction, entry_fills.ts) spares the
 * release a write of its own: a committed read tells.
 */
export async function holdingEntryLease<T>(ctx: Ctx, lease: EntryLease, work: () => Promise<T>): Promise<T> {
  const renewal = new LeaseRenewal(
    ENTRY_LEASE_MS,
    async (leasedUntil) => !!await withTransaction(ctx.db, (tx) => renew(tx).get({ ...lease, leasedUntil })),
  );
  try {
    return await work();
  } finally {
    renewal.stop();
    if (await stillHeld(ctx, lease)) {
      await releaseLease(() => withTransaction(ctx.db, (tx) => releaseEntryLease(tx, lease)), ENTRY_LEASE_MS);
    }
  }
}

/** Whether the lease is still this holder's as committed; when the read fails, as if it were (release it). */
async function stillHeld(ctx: Ctx, lease: EntryLease): Promise<boolean> {
  try {
    return await heldBy(ctx.db.read).get({ ...lease }) !== undefined;
  } catch {
    return true;
  }
}
