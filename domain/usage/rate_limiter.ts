/**
 * Per-partner fixed one-minute windows for requests and orders.
 *
 * Counting happens in memory (a database write per request would cost more
 * than the request); the counts are written to `usage_buckets` when a window
 * closes and whenever usage is read, so `GET /v1/usage` reports them. One
 * process holds the authoritative count; a deployment with several instances
 * would put a shared implementation of `RateLimiter` behind the same interface.
 */
import { sql } from "drizzle-orm";
import { type Database, withTransaction } from "../../db/client.ts";
import { usageBuckets } from "../../db/schema.ts";
import { MINUTE_MS } from "../clock.ts";

export type UsageKind = "REQUEST" | "ORDER";

export interface LimitDecision {
  allowed: boolean;
  /** Seconds until the window that refused the call resets. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Count one call of each kind if every kind is under its limit; count nothing otherwise. */
  consume(partnerId: string, limits: Partial<Record<UsageKind, number>>, at: number): LimitDecision;
  /** Persist the open windows' counts (of one partner, or all). */
  flush(partnerId?: string): Promise<void>;
}

interface Window {
  partnerId: string;
  kind: UsageKind;
  start: number;
  count: number;
}

export function windowStart(at: number): number {
  return at - (at % MINUTE_MS);
}

/**
 * `db` keeps the counts for usage reports; without one (the hosted pages'
 * per-IP limit, which no report shows) they live in memory only.
 */
export function createRateLimiter(db: Database | null, onError: (error: unknown) => void): RateLimiter {
  const open = new Map<string, Window>();

  /**
   * Closed windows whose write failed (the database locked by another process,
   * a full disk): kept and written with the next write, so their counts are
   * not lost. Writing one twice is harmless (the upsert keeps the larger count).
   */
  const unsaved = new Map<string, Window>();
  const unsavedKey = (w: Window) => `${w.partnerId}\u0000${w.kind}\u0000${w.start}`;

  async function persist(windows: Window[]): Promise<void> {
    if (!db) return;
    const batch = [...unsaved.values(), ...windows];
    if (!batch.length) return;
    try {
      await write(db, batch);
    } catch (error) {
      for (const w of windows) {
        const kept = unsaved.get(unsavedKey(w));
        if (!kept || kept.count < w.count) unsaved.set(unsavedKey(w), w);
      }
      throw error;
    }
    for (const w of batch) if (unsaved.get(unsavedKey(w)) === w) unsaved.delete(unsavedKey(w));
  }

  async function write(db: Database, windows: Window[]): Promise<void> {
    await withTransaction(db, async (tx) => {
      for (const w of windows) {
        await tx.insert(usageBuckets)
          .values({ partnerId: w.partnerId, kind: w.kind, windowStart: w.start, count: w.count })
          .onConflictDoUpdate({
            target: [usageBuckets.partnerId, usageBuckets.kind, usageBuckets.windowStart],
            set: { count: sql`max(${usageBuckets.count}, excluded.count)` },
          });
      }
    });
  }

  function windowFor(partnerId: string, kind: UsageKind, at: number): Window {
    const key = `${partnerId}\u0000${kind}`;
    const start = windowStart(at);
    const current = open.get(key);
    if (current && current.start === start) return current;
    if (current && current.count > 0) persist([{ ...current }]).catch(onError);
    const fresh = { partnerId, kind, start, count: 0 };
    open.set(key, fresh);
    return fresh;
  }

  return {
    consume(partnerId, limits, at) {
      const windows = (Object.keys(limits) as UsageKind[]).map((kind) => windowFor(partnerId, kind, at));
      const refused = windows.some((w) => w.count >= limits[w.kind]!);
      if (refused) {
        return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((windowStart(at) + MINUTE_MS - at) / 1000)) };
      }
      for (const w of windows) w.count++;
      return { allowed: true, retryAfterSeconds: 0 };
    },
    async flush(partnerId) {
      const windows = [...open.values()].filter((w) => w.count > 0 && (!partnerId || w.partnerId === partnerId));
      await persist(windows.map((w) => ({ ...w })));
    },
  };
}
