/**
 * Per-partner fixed one-minute windows (UTC, business clock) for requests and
 * orders, shared by every instance over one database.
 *
 * The count of record is the `usage_buckets` row of the partner, kind and
 * minute. A database write per call would cost more than the call and
 * serialize every instance on the writer, so, as the venues' egress budget
 * does (domain/venues/egress_budget.ts), an instance claims room from that row
 * in chunks (one conditional write: the row never passes the limit) and
 * spends it locally. Every call is granted from room already counted, so:
 *
 * - the calls granted in a minute, across any number of instances, never pass
 *   the limit while the database takes claims;
 * - a call is refused only when the row is at the limit, while other instances
 *   may still hold room they have not spent: at most one chunk each, so at
 *   least `limit - (instances - 1) * chunk` calls were granted;
 * - a crash loses no count: the row already holds what the dead instance
 *   granted, plus at most one chunk it had claimed and not spent.
 *
 * Room left unspent is given back (the row lowered by it) when the instance
 * sees the minute has closed, when the partner's usage is read there, and at
 * shutdown; once every instance has done so the row is the calls granted.
 *
 * When the database refuses a claim (locked by another process past the
 * writer's wait, a full disk) an instance grants up to one more chunk a
 * minute per kind on credit, so reads keep answering, and writes that credit
 * to the row, unconditionally, as soon as the database takes writes again;
 * past that credit a call waits for a claim and answers its storage error
 * (503). A minute with such an outage may therefore grant up to
 * `limit + instances * chunk`.
 */
import { and, eq, sql } from "drizzle-orm";
import { type Database, type Tx, withTransaction } from "../../db/client.ts";
import { usageBuckets } from "../../db/schema.ts";
import { MINUTE_MS } from "../clock.ts";

export type UsageKind = "REQUEST" | "ORDER";

export interface LimitDecision {
  allowed: boolean;
  /** Seconds until the window that refused the call resets. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /**
   * Count one call of each kind if every kind is under its limit; count
   * nothing otherwise. Answers at once while this instance holds room, a
   * promise when it must first claim room from the shared count; throws (or
   * rejects with) the storage error when the database can take no claim and
   * no credit is left.
   */
  consume(
    partnerId: string,
    limits: Partial<Record<UsageKind, number>>,
    at: number,
  ): LimitDecision | Promise<LimitDecision>;
  /** Give back the room claimed and not spent (of one partner, or all) and write what was granted on credit. */
  flush(partnerId?: string): Promise<void>;
}

/** A minute's limit is claimed in this many chunks at most per instance: few writes, a small error. */
export const CLAIMS_PER_MINUTE = 60;

/** Room an instance claims at once, and the most it holds unspent, for a limit of `limit` a minute. */
export function chunkOf(limit: number): number {
  return limit <= 0 ? 0 : Math.max(1, Math.floor(limit / CLAIMS_PER_MINUTE));
}

export function windowStart(at: number): number {
  return at - (at % MINUTE_MS);
}

const ALLOWED: LimitDecision = Object.freeze({ allowed: true, retryAfterSeconds: 0 });

function refusal(at: number): LimitDecision {
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((windowStart(at) + MINUTE_MS - at) / 1000)) };
}

/**
 * With `db`, the shared limiter whose counts `GET /v1/usage` reports; without
 * one (the hosted pages' per-IP limit, which no report shows and which guards
 * load, not rights) a count in this process's memory.
 */
export function createRateLimiter(db: Database | null, onError: (error: unknown) => void): RateLimiter {
  return db ? new SharedRateLimiter(db, onError) : createMemoryRateLimiter();
}

/** Decides at once: nothing to wait for. */
export interface MemoryRateLimiter extends RateLimiter {
  consume(partnerId: string, limits: Partial<Record<UsageKind, number>>, at: number): LimitDecision;
}

/** Fixed windows counted in memory: per process, lost with it. */
export function createMemoryRateLimiter(): MemoryRateLimiter {
  const open = new Map<string, { start: number; count: number }>();
  const windowFor = (key: string, start: number) => {
    const current = open.get(key);
    if (current && current.start === start) return current;
    const fresh = { start, count: 0 };
    open.set(key, fresh);
    return fresh;
  };
  return {
    consume(partnerId, limits, at) {
      const start = windowStart(at);
      const kinds = Object.keys(limits) as UsageKind[];
      const windows = kinds.map((kind) => windowFor(`${partnerId}\u0000${kind}`, start));
      if (windows.some((w, i) => w.count >= limits[kinds[i]]!)) return refusal(at);
      for (const w of windows) w.count++;
      return ALLOWED;
    },
    flush() {
      return Promise.resolve();
    },
  };
}

/** This instance's share of one partner's count of one kind in one minute. */
interface Allowance {
  readonly partnerId: string;
  readonly kind: UsageKind;
  readonly start: number;
  /** Added to the row by this instance: by claims, and by credit once written. */
  claimed: number;
  /** Calls granted here; `claimed - used` is room held, `used - claimed` (in an outage) credit not yet written. */
  used: number;
  /** The chunk of the last limit seen: the most this allowance claims at once, and its credit in an outage. */
  chunk: number;
  /** The one write of this allowance in flight: its changes are computed from the counts when it starts. */
  writing: Promise<Claim> | null;
}

type Claim = "GRANTED" | "FULL" | { failed: unknown };

class SharedRateLimiter implements RateLimiter {
  /** Allowances of the current minute (or older, for partners not seen since), by partner and kind. */
  readonly #open = new Map<string, Allowance>();
  /** Allowances of closed minutes with room to give back or credit to write. */
  readonly #closed = new Set<Allowance>();
  /** The minute of the last call: a call in a later one gives back the room of closed minutes. */
  #minute = -1;
  /** The last claim failed: calls short of room spend credit instead of waiting on the database. */
  #outage = false;

  constructor(private readonly db: Database, private readonly onError: (error: unknown) => void) {}

  consume(
    partnerId: string,
    limits: Partial<Record<UsageKind, number>>,
    at: number,
  ): LimitDecision | Promise<LimitDecision> {
    const start = windowStart(at);
    if (start !== this.#minute) this.#newMinute(start);
    const request = limits.REQUEST === undefined ? null : this.#allowance(partnerId, "REQUEST", start);
    const order = limits.ORDER === undefined ? null : this.#allowance(partnerId, "ORDER", start);
    // The hot path: room held for every kind, no promise, no write.
    if ((!request || request.used < request.claimed) && (!order || order.used < order.claimed)) {
      if (request) request.used++;
      if (order) order.used++;
      return ALLOWED;
    }
    return this.#consumeClaiming([request, order].filter((a) => a !== null), limits, at);
  }

  async #consumeClaiming(
    allowances: Allowance[],
    limits: Partial<Record<UsageKind, number>>,
    at: number,
  ): Promise<LimitDecision> {
    for (;;) {
      const short = allowances.find((a) => !this.#hasRoom(a));
      if (!short) {
        for (const a of allowances) {
          if (a.used >= a.claimed && !a.writing) this.#claim(a, limits[a.kind]!); // an outage: probe for its end
          a.used++;
        }
        return ALLOWED;
      }
      const claim = await this.#claim(short, limits[short.kind]!);
      if (claim === "FULL") return refusal(at);
      if (claim !== "GRANTED" && !this.#hasRoom(short)) throw claim.failed;
    }
  }

  #hasRoom(a: Allowance): boolean {
    return a.used < a.claimed + (this.#outage ? a.chunk : 0);
  }

  #allowance(partnerId: string, kind: UsageKind, start: number): Allowance {
    const key = `${partnerId}\u0000${kind}`;
    const current = this.#open.get(key);
    if (current && current.start === start) return current;
    if (current && (current.used !== current.claimed || current.writing)) this.#closed.add(current);
    const fresh: Allowance = { partnerId, kind, start, claimed: 0, used: 0, chunk: 1, writing: null };
    this.#open.set(key, fresh);
    return fresh;
  }

  /** A call in a new minute: the room of every closed minute is given back, in the background. */
  #newMinute(start: number): void {
    this.#minute = start;
    for (const [key, a] of this.#open) {
      if (a.start >= start) continue;
      this.#open.delete(key);
      if (a.used !== a.claimed || a.writing) this.#closed.add(a);
    }
    if (this.#closed.size) this.#settle([...this.#closed]).catch(this.onError);
  }

  /**
   * Claim a chunk of the minute's room for this instance (single flight per
   * allowance), first writing any credit spent: the read and the conditional
   * write share one transaction, so instances never claim past the limit.
   */
  #claim(a: Allowance, limit: number): Promise<Claim> {
    if (a.writing) return a.writing;
    a.chunk = chunkOf(limit);
    const credit = Math.max(0, a.used - a.claimed);
    const wanted = a.chunk;
    const claim = withTransaction(this.db, async (tx) => {
      if (credit) await addToRow(tx, a, credit);
      const [row] = await tx.select({ count: usageBuckets.count }).from(usageBuckets).where(rowOf(a));
      const take = Math.min(wanted, limit - (row?.count ?? 0));
      if (take <= 0) return 0;
      await addToRow(tx, a, take);
      return take;
    }).then(
      (take): Claim => {
        a.claimed += credit + take;
        this.#outage = false;
        return take > 0 ? "GRANTED" : "FULL";
      },
      (error): Claim => {
        this.#outage = true;
        this.onError(error);
        return { failed: error };
      },
    ).finally(() => {
      a.writing = null;
    });
    a.writing = claim;
    return claim;
  }

  /**
   * Lower (or, for credit, raise) the rows of these allowances to what they
   * granted, in one transaction. An allowance with a write in flight is
   * waited for first, so the change is computed from settled counts.
   */
  async #settle(allowances: Allowance[]): Promise<void> {
    await Promise.all(allowances.map((a) => a.writing));
    const changes = allowances
      .filter((a) => !a.writing && a.used !== a.claimed)
      .map((a) => ({ a, delta: a.used - a.claimed }));
    if (!changes.length) return this.#forgetSettled(allowances);
    const done = withTransaction(this.db, async (tx) => {
      for (const { a, delta } of changes) await addToRow(tx, a, delta);
    });
    // Marked as writing, so no claim computes its change from the same counts meanwhile; and room being given
    // back is withdrawn at once, so no call spends it (it is restored if the write fails: the row still holds it).
    const marked = done.then((): Claim => "GRANTED", (error): Claim => ({ failed: error }));
    for (const { a, delta } of changes) {
      a.writing = marked;
      if (delta < 0) a.claimed += delta;
    }
    try {
      await done;
    } catch (error) {
      for (const { a, delta } of changes) if (delta < 0) a.claimed -= delta;
      this.#outage = true;
      throw error;
    } finally {
      for (const { a } of changes) a.writing = null;
    }
    this.#outage = false;
    for (const { a, delta } of changes) if (delta > 0) a.claimed += delta;
    this.#forgetSettled(allowances);
  }

  #forgetSettled(allowances: Allowance[]): void {
    for (const a of allowances) if (!a.writing && a.used === a.claimed) this.#closed.delete(a);
  }

  async flush(partnerId?: string): Promise<void> {
    const mine = (a: Allowance) => !partnerId || a.partnerId === partnerId;
    const all = [...this.#closed, ...this.#open.values()].filter(mine);
    await this.#settle(all);
  }
}

function rowOf(a: Allowance) {
  return and(
    eq(usageBuckets.partnerId, a.partnerId),
    eq(usageBuckets.kind, a.kind),
    eq(usageBuckets.windowStart, a.start),
  );
}

/** `count += delta` on the allowance's row (created at `delta`), never below zero. */
async function addToRow(tx: Tx, a: Allowance, delta: number): Promise<void> {
  await tx.insert(usageBuckets)
    .values({ partnerId: a.partnerId, kind: a.kind, windowStart: a.start, count: Math.max(0, delta) })
    .onConflictDoUpdate({
      target: [usageBuckets.partnerId, usageBuckets.kind, usageBuckets.windowStart],
      set: { count: sql`max(0, ${usageBuckets.count} + ${delta})` },
    });
}
