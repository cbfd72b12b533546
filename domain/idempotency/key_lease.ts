/**
 * Claims on an idempotency key, for verbs whose effect lies outside the
 * database (a venue call): there, the effect's own transaction cannot decide
 * which of two requests with one key runs, because the call happens before it.
 *
 * A claim is a row IN_PROGRESS with an owner token and a lease. The owner
 * renews the lease while its work is in flight, so a request that is merely
 * slow keeps the key; only a lease nobody renewed (a crashed or frozen owner)
 * can be taken over, and then under a new token. Every later write of the key
 * names its token (fencing): an owner that lost the key can neither answer
 * nor release it, so a takeover and a late owner never both record.
 *
 * Leases run on the wall clock: they measure whether a process is alive, not
 * business time, which the QA test clock may freeze or move by days.
 */
import { wallClockNow } from "../clock.ts";
import { and, eq, sql } from "drizzle-orm";
import { type Database, preparedFor, type Tx, withTransaction } from "../../db/client.ts";
import { idempotencyKeys } from "../../db/schema.ts";
import { randomToken } from "../ids.ts";
import { LeaseRenewal, releaseLease } from "../lease_renewal.ts";
import { AnsweredMeanwhile, findKey, type KeyScope, RETENTION_MS, type StoredAnswer } from "./idempotency_keys.ts";

/** How long a claim survives its owner's silence; the owner renews it three times per lease. */
export const LEASE_MS = 30_000;
/** Between attempts to free a key whose release the database refused. */

const scopeMatches = and(
  eq(idempotencyKeys.partnerId, sql.placeholder("partnerId")),
  eq(idempotencyKeys.route, sql.placeholder("route")),
  eq(idempotencyKeys.key, sql.placeholder("key")),
);
const ownedClaim = and(
  scopeMatches,
  eq(idempotencyKeys.owner, sql.placeholder("owner")),
  eq(idempotencyKeys.state, "IN_PROGRESS"),
);

/**
 * Insert the claim, or take over a row past its retention, or a claim of the
 * same request whose lease ran out. Nothing is written over an answer or a
 * live claim.
 */
const claimKey = preparedFor((db) =>
  db.insert(idempotencyKeys).values({
    partnerId: sql.placeholder("partnerId"),
    route: sql.placeholder("route"),
    key: sql.placeholder("key"),
    requestHash: sql.placeholder("requestHash"),
    state: "IN_PROGRESS",
    owner: sql.placeholder("owner"),
    lockedUntil: sql.placeholder("lockedUntil"),
    createdAt: sql.placeholder("now"),
    expiresAt: sql.placeholder("expiresAt"),
  }).onConflictDoUpdate({
    target: [idempotencyKeys.partnerId, idempotencyKeys.route, idempotencyKeys.key],
    set: {
      requestHash: sql`excluded.request_hash`,
      state: "IN_PROGRESS",
      owner: sql`excluded.owner`,
      lockedUntil: sql`excluded.locked_until`,
      responseStatus: null,
      responseBody: null,
      createdAt: sql`excluded.created_at`,
      expiresAt: sql`excluded.expires_at`,
    },
    setWhere: sql`${idempotencyKeys.expiresAt} <= excluded.created_at OR (${idempotencyKeys.state} = 'IN_PROGRESS'
      AND ${idempotencyKeys.lockedUntil} <= ${sql.placeholder("wallNow")}
      AND ${idempotencyKeys.requestHash} = excluded.request_hash)`,
  }).returning({ key: idempotencyKeys.key }).prepare()
);

const renewClaim = preparedFor((db) =>
  db.update(idempotencyKeys).set({ lockedUntil: sql`${sql.placeholder("lockedUntil")}` }).where(ownedClaim)
    .returning({ key: idempotencyKeys.key }).prepare()
);

const completeClaim = preparedFor((db) =>
  db.update(idempotencyKeys).set({
    state: "DONE",
    responseStatus: sql`${sql.placeholder("status")}`,
    responseBody: sql`${sql.placeholder("body")}`,
    expiresAt: sql`${sql.placeholder("expiresAt")}`,
  }).where(ownedClaim).returning({ key: idempotencyKeys.key }).prepare()
);

const releaseClaim = preparedFor((db) =>
  db.delete(idempotencyKeys).where(ownedClaim).returning({ key: idempotencyKeys.key }).prepare()
);

export class KeyLease {
  #renewal: LeaseRenewal | undefined;

  private constructor(
    readonly db: Database,
    readonly scope: KeyScope,
    readonly owner: string,
    readonly leaseMs: number,
  ) {}

  /**
   * Claim the key and keep it while the work runs. Throws AnsweredMeanwhile
   * when an answer or a live claim holds it.
   */
  static async take(db: Database, scope: KeyScope, hash: string, now: number, leaseMs: number): Promise<KeyLease> {
    const owner = randomToken(24);
    await withTransaction(db, async (tx) => {
      const row = await claimKey(tx).get({
        ...scope,
        requestHash: hash,
        owner,
        lockedUntil: wallClockNow() + leaseMs,
        wallNow: wallClockNow(),
        now,
        expiresAt: now + RETENTION_MS,
      });
      if (!row) throw new AnsweredMeanwhile(await findKey(tx, scope, now));
    });
    const lease = new KeyLease(db, scope, owner, leaseMs);
    // Taken over (this owner was silent past its lease): renewing stops; its answer will be refused.
    lease.#renewal = new LeaseRenewal(
      leaseMs,
      async (lockedUntil) => !!await withTransaction(db, (tx) => renewClaim(tx).get({ ...scope, owner, lockedUntil })),
    );
    return lease;
  }

  /**
   * Store the answer in `tx`, the transaction of the effect's record, if this
   * owner still holds the key; otherwise roll that transaction back with
   * AnsweredMeanwhile carrying whatever holds the key now.
   */
  async complete(tx: Tx, answer: StoredAnswer, now: number): Promise<void> {
    const done = await completeClaim(tx).get({
      ...this.scope,
      owner: this.owner,
      ...answer,
      expiresAt: now + RETENTION_MS,
    });
    this.stop();
    if (!done) throw new AnsweredMeanwhile(await findKey(tx, this.scope, now));
  }

  /**
   * Free the key for a retry: only for outcomes where nothing happened. The
   * caller already has its answer (try again); a release the database refuses
   * frees the key as soon as it takes writes, so the retry does not meet
   * IDEMPOTENCY_IN_PROGRESS until the lease runs out.
   */
  async release(): Promise<void> {
    this.stop();
    await releaseLease(
      () => withTransaction(this.db, (tx) => releaseClaim(tx).get({ ...this.scope, owner: this.owner })),
      this.leaseMs,
    );
  }

  /** Stop renewing (the work is over, or the process is leaving and the lease may run out). */
  stop(): void {
    this.#renewal?.stop();
    this.#renewal = undefined;
  }
}
