/**
 * The one source of business time. Domain code and jobs ask the clock, never
 * `Date.now()`, so billing cycles, grace periods and expiries can be tested by
 * moving a test clock (QA only) instead of waiting.
 */
export interface Clock {
  now(): number;
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

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export const MINUTE_MS = 60_000;
export const DAY_MS = 24 * 60 * MINUTE_MS;
