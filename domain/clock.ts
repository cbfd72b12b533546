/**
 * The one source of business time. Domain code and jobs ask the clock, never
 * `Date.now()`, so billing cycles, grace periods and expiries can be tested by
 * moving a test clock (QA only) instead of waiting.
 */
export interface Clock {
  now(): number;
}

/**
 * Real time, for what runs on it whatever the QA test clock says: the venues'
 * clocks (an order's action window, an order book's age) and process liveness
 * (idempotency leases). Business time (billing, expiries, halts) asks `Clock`.
 */
export function wallClockNow(): number {
  return Date.now();
}

/** Wall-clock time, optionally frozen at a chosen instant (Stripe-style test clock). */
export class TestableClock implements Clock {
  #frozenAt: number | null = null;

  now(): number {
    return this.#frozenAt ?? Date.now();
  }

  /** The frozen instant, or null when the clock follows real time. */
  get frozenAt(): number | null {
    return this.#frozenAt;
  }

  freeze(at: number | null): void {
    this.#frozenAt = at;
  }
}

const DAY = 86_400_000;
/** Years 0000-9999: beyond them `toISOString` uses the six-digit extended form. */
const LAST_FOUR_DIGIT_YEAR_MS = 253_402_300_800_000;
let cachedDay = Number.NaN;
let cachedDayPrefix = "";

/** "00".."59" and "000".."999": the digits of a time of day, looked up instead of formatted. */
const TWO_DIGITS = Array.from({ length: 60 }, (_, n) => String(n).padStart(2, "0"));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, "0"));

/**
 * `new Date(ms).toISOString()`, byte for byte, at a tenth of its cost: the
 * date part is kept for the last day seen (a page of rows rarely spans
 * many days) and the time of day is arithmetic and looked-up digits. A list
 * of 100 clients formats 200 timestamps: ~280 µs through `Date`, ~18 µs with
 * the digits formatted per call, ~11 µs looked up.
 */
export function iso(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms >= LAST_FOUR_DIGIT_YEAR_MS) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY);
  if (day !== cachedDay) {
    cachedDayPrefix = new Date(day * DAY).toISOString().slice(0, 11);
    cachedDay = day;
  }
  let rest = ms - day * DAY;
  const millis = rest % 1000;
  rest = (rest - millis) / 1000;
  const seconds = rest % 60;
  rest = (rest - seconds) / 60;
  const minutes = rest % 60;
  const hours = (rest - minutes) / 60;
  return cachedDayPrefix + TWO_DIGITS[hours] + ":" + TWO_DIGITS[minutes] + ":" + TWO_DIGITS[seconds] + "." +
    THREE_DIGITS[millis] + "Z";
}

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
