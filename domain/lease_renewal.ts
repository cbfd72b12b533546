/**
 * Keeping a wall-clock lease on a database row while the work it guards runs
 * (an idempotency key's claim, a job run): the owner extends it three times
 * per lease, so a merely slow owner keeps its row and only a silent one (a
 * crashed or frozen process) lets the lease run out.
 */
import { storageFailure } from "../db/connection.ts";
import { wallClockNow } from "./clock.ts";

export class LeaseRenewal {
  #timer: ReturnType<typeof setInterval> | undefined;

  /**
   * `renew(leasedUntil)` writes the new end of the lease and answers whether
   * the row was still this owner's; once it answers false (taken over, fenced
   * out) renewing stops. A renewal the database refused is tried again at the
   * next tick; if none passes, the lease runs out as for a crash.
   */
  constructor(readonly leaseMs: number, renew: (leasedUntil: number) => Promise<boolean>) {
    this.#timer = setInterval(async () => {
      try {
        if (!await renew(wallClockNow() + leaseMs)) this.stop();
      } catch {
        // Retried at the next tick.
      }
    }, Math.max(1, Math.floor(leaseMs / 3)));
  }

  /** Stop renewing (the work is over, or the process is leaving and the lease may run out). */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * Release a lease whose holder is done. If the database refuses the write
 * (locked by another process, full), the row would stay held until its lease
 * runs out, keeping out whoever comes next; so the release is tried again in
 * the background until it passes or the lease has run out anyway. Anything
 * but a storage failure is the caller's.
 */
export async function releaseLease(release: () => Promise<unknown>, leaseMs: number): Promise<void> {
  try {
    await release();
  } catch (error) {
    if (!storageFailure(error)) throw error;
    releaseLater(release, wallClockNow() + leaseMs);
  }
}

const RELEASE_RETRY_MS = 250;

function releaseLater(release: () => Promise<unknown>, until: number): void {
  setTimeout(async () => {
    try {
      await release();
    } catch (error) {
      if (storageFailure(error) && wallClockNow() < until) releaseLater(release, until);
    }
  }, RELEASE_RETRY_MS);
}
