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

/**
 * `new Date(ms).toISOString()`, byte for byte, at a tenth of its cost: the
 * date part is kept for the last day seen (a page of rows rarely spans
 * many days) and the time of day is plain arithmetic. A list of 100 clients
 * formats 200 timestamps, which cost ~280 µs through `Date`.
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
  return `${cachedDayPrefix}${two(hours)}:${two(minutes)}:${two(seconds)}.${
    millis < 10 ? "00" : millis < 100 ? "0" : ""
  }${millis}Z`;
}

function two(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
