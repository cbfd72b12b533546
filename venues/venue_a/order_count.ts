/**
 * VENUE_A's order-count limits, which the venue keeps per account (not per
 * IP): by default 300 new orders in 10 seconds and 1,200 a minute, announced
 * as `ORDERS` in exchangeInfo's rateLimits. Every order response reports the
 * account's counts (`X-MBX-ORDER-COUNT-10S`, `-1M`); this keeps the highest
 * seen plus what was sent since, and refuses locally, before the venue would
 * answer 429 -1015, once an account reaches its share of either limit.
 *
 * The counts live in this process: each instance learns an account's counts
 * from the venue's own answers, so the state can only hold an order back,
 * never let one through that the venue would take otherwise.
 */
import { ORDER_COUNT_10S_HEADER, ORDER_COUNT_1M_HEADER, WEIGHT_BUDGET_SHARE } from "./constants.ts";
import { localError } from "./errors.ts";

export interface OrderLimits {
  per10Seconds: number;
  perMinute: number;
}

/** The venue's documented defaults, used until exchangeInfo says otherwise. */
export const DEFAULT_ORDER_LIMITS: OrderLimits = { per10Seconds: 300, perMinute: 1200 };

/** Accounts idle this long are forgotten: both windows have passed. */
const FORGET_AFTER_MS = 60_000;
const SWEEP_ABOVE_ACCOUNTS = 10_000;

interface Window {
  start: number;
  used: number;
}

interface AccountCounts {
  tenSeconds: Window;
  minute: Window;
  pausedUntil: number;
  lastSeen: number;
}

export class OrderCountBudget {
  #limits = DEFAULT_ORDER_LIMITS;
  readonly #accounts = new Map<string, AccountCounts>();

  setLimits(limits: Partial<OrderLimits>): void {
    this.#limits = {
      per10Seconds: limits.per10Seconds && limits.per10Seconds > 0 ? limits.per10Seconds : this.#limits.per10Seconds,
      perMinute: limits.perMinute && limits.perMinute > 0 ? limits.perMinute : this.#limits.perMinute,
    };
  }

  /** Count one new order of `apiKey`, or refuse it (RATE_LIMITED, nothing sent). */
  reserve(apiKey: string, now: number): void {
    const counts = this.#countsOf(apiKey, now);
    if (now < counts.pausedUntil) {
      throw localError(
        "RATE_LIMITED",
        "The venue refused more orders of this account for now; order not sent",
        counts.pausedUntil - now,
      );
    }
    for (const [window, limit, length] of this.#windows(counts)) {
      if (window.used + 1 > Math.floor(limit * WEIGHT_BUDGET_SHARE)) {
        throw localError(
          "RATE_LIMITED",
          "Order count budget of this account is spent; order not sent",
          window.start + length - now,
        );
      }
    }
    counts.tenSeconds.used++;
    counts.minute.used++;
  }

  /** The counts an order response reported (answers can arrive out of order: the highest is the truest). */
  observe(apiKey: string, headers: Headers, now: number): void {
    const counts = this.#countsOf(apiKey, now);
    const tenSeconds = Number(headers.get(ORDER_COUNT_10S_HEADER) ?? NaN);
    const minute = Number(headers.get(ORDER_COUNT_1M_HEADER) ?? NaN);
    if (Number.isFinite(tenSeconds)) counts.tenSeconds.used = Math.max(counts.tenSeconds.used, tenSeconds);
    if (Number.isFinite(minute)) counts.minute.used = Math.max(counts.minute.used, minute);
  }

  /** The venue answered -1015 for this account: hold its orders back until it said, or the minute ends. */
  pause(apiKey: string, untilMs: number, now: number): void {
    const counts = this.#countsOf(apiKey, now);
    counts.pausedUntil = Math.max(counts.pausedUntil, untilMs);
  }

  #windows(counts: AccountCounts): [Window, number, number][] {
    return [[counts.tenSeconds, this.#limits.per10Seconds, 10_000], [counts.minute, this.#limits.perMinute, 60_000]];
  }

  #countsOf(apiKey: string, now: number): AccountCounts {
    let counts = this.#accounts.get(apiKey);
    if (!counts) {
      if (this.#accounts.size >= SWEEP_ABOVE_ACCOUNTS) this.#forgetIdle(now);
      counts = { tenSeconds: { start: 0, used: 0 }, minute: { start: 0, used: 0 }, pausedUntil: 0, lastSeen: now };
      this.#accounts.set(apiKey, counts);
    }
    counts.lastSeen = now;
    for (const [window, , length] of this.#windows(counts)) {
      const start = now - (now % length);
      if (window.start !== start) {
        window.start = start;
        window.used = 0;
      }
    }
    return counts;
  }

  #forgetIdle(now: number): void {
    for (const [apiKey, counts] of this.#accounts) {
      if (now - counts.lastSeen > FORGET_AFTER_MS && now >= counts.pausedUntil) this.#accounts.delete(apiKey);
    }
  }
}
