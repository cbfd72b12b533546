/**
 * Keeping a wall-clock lease on a database row while the work it guards runs
 * (an idempotency key's claim, a job run): the owner extends it three times
 * per lease, so a merely slow owner keeps its row and only a silent one (a
 * crashed or frozen process) lets the lease run out.
 */
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
