/**
 * What an instruction's expiry means for a transfer that pays it: the
 * expiry closes the time in which a transfer may be made, not the time in
 * which it may be seen. A transfer mined before the instruction expired pays
 * it whenever it is confirmed or found by the payments scan, even once the
 * instruction reads EXPIRED; one mined after refuses (`PAYMENT_EXPIRED`).
 * Block times are real time, so the expiry is compared on the wall clock
 * the instruction was issued by (`issuedWallAt`), whatever the QA test
 * clock says.
 */
import { and, eq, inArray } from "drizzle-orm";
import type { Tx } from "../../db/client.ts";
import { payments } from "../../db/schema.ts";
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

/**
 * Inside the transaction that credits it: an instruction that lapsed (or is
 * lapsing under a concurrent expiry) is SUBMITTED again, so the credit's
 * compare-and-set finds it. Fails with the open-amount unique index when a
 * newer open instruction asks for the same amount of the same recipient:
 * then the transfer is left for that one or a person.
 */
export async function reopenLapsed(tx: Tx, payment: PaymentRow): Promise<void> {
  await tx.update(payments).set({ status: "SUBMITTED" })
    .where(and(eq(payments.paymentId, payment.paymentId), inArray(payments.status, ["PENDING", "EXPIRED"])));
}
