/**
 * What an instruction's expiry means for a transfer that pays it: the
 * expiry closes the time in which a transfer may be made, not the time in
 * which it may be seen. A transfer mined before the instruction expired pays
 * it whenever it is confirmed or found by the payments scan, even once the
 * instruction reads EXPIRED (the credit goes from EXPIRED straight to
 * CONFIRMED or REVIEW, never through an open status whose amount a newer
 * instruction may ask for again); one mined after refuses
 * (`PAYMENT_EXPIRED`), whatever the instruction's status.
 * Block times are real time, so the expiry is compared on the wall clock
 * the instruction was issued by (`issuedWallAt`), whatever the QA test
 * clock says.
 */
import type { PaymentRow } from "./payment_view.ts";

type Timed = Pick<PaymentRow, "issuedAt" | "issuedWallAt" | "expiresAt">;

/** The instruction's expiry on the wall clock (its lifetime added to when it was really issued). */
export function expiryWallAt(payment: Timed): number {
  return payment.issuedWallAt + (payment.expiresAt - payment.issuedAt);
}

/** The instruction no longer asks for a transfer: EXPIRED, or PENDING past its expiry on the service clock. */
export function lapsed(payment: Pick<PaymentRow, "status" | "expiresAt">, now: number): boolean {
  return payment.status === "EXPIRED" || (payment.status === "PENDING" && now >= payment.expiresAt);
}

/** A transfer whose block is dated `blockTimeMs` was made while the instruction was open. */
export function minedInTime(payment: Timed, blockTimeMs: number): boolean {
  return blockTimeMs <= expiryWallAt(payment);
}
