/**
 * Request weight per venue and egress IP, budgeted in the database so every
 * instance sending from one IP shares one count (the venues limit per IP, not
 * per process). The count is kept per ten-second window, and a claim is
 * granted only while the windows any minute ending now could overlap (this
 * one and the six before) together stay within SHARE of the published limit
 * per minute: any minute, fixed or rolling, stays under it, and a burst may
 * still use the minute's room at once. An instance claims
 * weight in chunks and spends it locally, so one database write serves many
 * requests; what it leaves unspent lapses with the window.
 *
 * Venue windows run on real time: the wall clock, never the QA test clock.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { and, eq, gte, lt, sql, sum } from "drizzle-orm";
import { type Database, type Executor, withTransaction } from "../../db/client.ts";
import { egressBudgets } from "../../db/schema.ts";
import { MINUTE_MS, wallClockNow } from "../clock.ts";
import type { Config } from "../../config.ts";
import { type ProviderId, type RequestBudget, VenueError } from "../../venues/types.ts";
import { venueBudgetRefused, venueBudgetUsed } from "../telemetry/metrics.ts";

const WINDOW_MS = 10_000;
/** Of the published limit: the rest is margin for clock skew and operators' own tools. */
const SHARE = 0.85;
/** A claim covers this part of the minute's room, so instances share finely and write rarely. */
const CLAIMS_PER_MINUTE = 60;
/**
 * Of each minute's room, what background work (the reconcile job's pass,
 * the protection monitor, the keeper's funding reads) leaves to news: a fill
 * or a fired stop a push just named is read within seconds only if the
 * minute still has room when it arrives. Two thirds: a read of what a push
 * named costs about 15 weight at VENUE_A and 30 at VENUE_B, and half of
 * VENUE_B's minute (about 17 such reads, fewer with a whole read among them)
 * left a busy minute's fills and stops waiting half a minute; the remaining
 * third still sweeps 5,000 accounts per venue within the hour (~40 min).
 */
const NEWS_SHARE = 2 / 3;

const patient = new AsyncLocalStorage<AbortSignal>();

/**
 * Runs `work` with every spend in it waiting for the budget rather than
 * refused, until `until` aborts (a stop): a read of what a push named, half
 * done when the minute filled, finishes a few seconds later instead of
 * starting over at the next round.
 */
export function waitingForBudget<T>(until: AbortSignal, work: () => Promise<T>): Promise<T> {
  return patient.run(until, work);
}

export class EgressBudget implements RequestBudget {
  /** Weight the egress may spend in any minute. */
  readonly perMinute: number;
  readonly #windowMs: number;
  readonly #chunk: number;
  readonly #now: () => number;
  #window = -1;
  #claimed = 0;
  /**
   * The claim in flight, if any: concurrent spends wait for it instead of
   * each making its own (which refused most of a burst while the first
   * claims held the minute's room unspent, and wrote once per request).
   */
  #claiming: Promise<boolean> | null = null;

  constructor(
    private readonly db: Database,
    readonly providerId: ProviderId,
    readonly egress: string,
    weightPerMinute: number,
    options: { now?: () => number; windowMs?: number } = {},
  ) {
    this.#now = options.now ?? wallClockNow;
    this.#windowMs = options.windowMs ?? WINDOW_MS;
    this.perMinute = Math.max(1, Math.floor(weightPerMinute * SHARE));
    this.#chunk = Math.max(1, Math.floor(this.perMinute / CLAIMS_PER_MINUTE));
  }

  /**
   * Spend before a request: from what this instance claimed, else a new
   * claim, else RATE_LIMITED; within `waitingForBudget`, wait for a window to
   * turn instead.
   */
  async spend(weight: number): Promise<void> {
    if (weight <= 0) return;
    for (;;) {
      if (await this.#holding(weight, true)) return venueBudgetUsed.add(weight, { venue: this.providerId });
      const retryAfterMs = this.#currentWindow() + this.#windowMs - this.#now();
      const until = patient.getStore();
      if (!until || until.aborted) {
        venueBudgetRefused.add(1, { venue: this.providerId });
        throw new VenueError("RATE_LIMITED", "Request weight budget of this egress is spent; request not sent", {
          providerId: this.providerId,
          retryAfterMs,
        });
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.max(1, retryAfterMs));
        until.addEventListener("abort", done, { once: true });
        function done() {
          clearTimeout(timer);
          until!.removeEventListener("abort", done);
          resolve();
        }
      });
    }
  }

  /**
   * Count weight a request turned out to cost once served (VENUE_B's history
   * reads weigh 1 more per 20 items returned): from what this instance holds,
   * the rest written to the egress's window even past its room, so the spends
   * after it find the minute that much fuller. Never refused: the venue has
   * already counted it.
   */
  async charge(weight: number): Promise<void> {
    if (weight <= 0) return;
    venueBudgetUsed.add(weight, { venue: this.providerId });
    const window = this.#currentWindow();
    const held = Math.min(this.#claimed, weight);
    this.#claimed -= held;
    const rest = weight - held;
    if (rest === 0) return;
    await withTransaction(this.db, async (tx) => {
      await tx.insert(egressBudgets)
        .values({ providerId: this.providerId, egress: this.egress, windowStart: window, spent: rest })
        .onConflictDoUpdate({
          target: [egressBudgets.providerId, egressBudgets.egress, egressBudgets.windowStart],
          set: { spent: sql`${egressBudgets.spent} + ${rest}` },
        });
    });
  }

  /**
   * Wait until `weight` is claimed for this instance, for the requests about
   * to follow (a fan-out paces itself here rather than be refused).
   */
  async reserve(weight: number): Promise<void> {
    if (weight <= 0) return;
    // More than a minute holds is never granted at once: take what a minute can give.
    weight = Math.min(weight, this.perMinute);
    for (;;) {
      if (await this.#holding(weight, false)) return;
      const window = this.#currentWindow();
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, window + this.#windowMs - this.#now())));
    }
  }

  /**
   * Whether background work may go on: more than the news' share of the
   * minute is unclaimed (what this instance holds unspent counts as room).
   */
  async backgroundMayGoOn(): Promise<boolean> {
    const [{ spent }] = await this.db.read.select({ spent: sum(egressBudgets.spent).mapWith(Number) })
      .from(egressBudgets)
      .where(and(
        eq(egressBudgets.providerId, this.providerId),
        eq(egressBudgets.egress, this.egress),
        gte(egressBudgets.windowStart, this.#currentWindow() - MINUTE_MS),
      ));
    return this.perMinute - (spent ?? 0) + this.#claimed > this.perMinute * NEWS_SHARE;
  }

  /** Whether background work may go on by `deadline` (wall clock), waiting for windows to turn meanwhile. */
  async backgroundRoomBy(deadline: number): Promise<boolean> {
    for (;;) {
      if (await this.backgroundMayGoOn()) return true;
      const now = this.#now();
      if (now >= deadline) return false;
      const window = this.#currentWindow();
      await new Promise((resolve) => setTimeout(resolve, Math.min(window + this.#windowMs, deadline) - now));
    }
  }

  /** The weight a claim would count against the limit now (every instance's, this egress), read without claiming. */
  async usedInCountedMinute(db: Executor): Promise<number> {
    const now = this.#now();
    const [{ spent }] = await db.select({ spent: sum(egressBudgets.spent).mapWith(Number) }).from(egressBudgets)
      .where(and(
        eq(egressBudgets.providerId, this.providerId),
        eq(egressBudgets.egress, this.egress),
        gte(egressBudgets.windowStart, now - now % this.#windowMs - MINUTE_MS),
      ));
    return spent ?? 0;
  }

  #currentWindow(): number {
    const now = this.#now();
    const window = now - now % this.#windowMs;
    if (window !== this.#window) {
      this.#window = window;
      this.#claimed = 0;
    }
    return window;
  }

  /**
   * Whether this instance holds `weight` now, claiming more when it does not:
   * one claim at a time, the others waiting for its outcome. A claim that
   * found no room answers every waiter at once (no room for them either).
   * `spend` deducts in the same step as the check, so two spends never count
   * on the same weight. A window that turns while a claim is in flight starts
   * the check again in the new one (its room is not the old window's).
   */
  async #holding(weight: number, spend: boolean): Promise<boolean> {
    for (;;) {
      const window = this.#currentWindow();
      if (this.#claimed >= weight) {
        if (spend) this.#claimed -= weight;
        return true;
      }
      const claim = this.#claiming ??= this.#claim(window, weight).finally(() => this.#claiming = null);
      const found = await claim;
      if (!found && this.#claimed < weight && this.#currentWindow() === window) return false;
    }
  }

  /** Move at least `weight` (a chunk when there is room) from the egress's minute to this instance. */
  async #claim(window: number, weight: number): Promise<boolean> {
    const wanted = Math.max(weight, this.#chunk);
    // Any minute the venue may count, ending in this window, overlaps this window and the six before it.
    const oldestCounted = window - MINUTE_MS;
    const egress = and(eq(egressBudgets.providerId, this.providerId), eq(egressBudgets.egress, this.egress));
    const granted = await withTransaction(this.db, async (tx) => {
      await tx.delete(egressBudgets).where(and(egress, lt(egressBudgets.windowStart, oldestCounted)));
      const [{ spent }] = await tx.select({ spent: sum(egressBudgets.spent).mapWith(Number) }).from(egressBudgets)
        .where(egress);
      const room = this.perMinute - (spent ?? 0);
      if (room < weight) return 0;
      const take = Math.min(wanted, room);
      await tx.insert(egressBudgets)
        .values({ providerId: this.providerId, egress: this.egress, windowStart: window, spent: take })
        .onConflictDoUpdate({
          target: [egressBudgets.providerId, egressBudgets.egress, egressBudgets.windowStart],
          set: { spent: sql`${egressBudgets.spent} + ${take}` },
        });
      return take;
    });
    if (this.#window === window) this.#claimed += granted;
    return granted >= weight;
  }
}

export type EgressBudgets = Record<ProviderId, EgressBudget>;

export function createEgressBudgets(db: Database, config: Config): EgressBudgets {
  const budget = (providerId: ProviderId) =>
    new EgressBudget(db, providerId, config.egressId, config.ipWeightPerMinute[providerId]);
  return { VENUE_A: budget("VENUE_A"), VENUE_B: budget("VENUE_B") };
}
