/**
 * An instruction stops asking for money once its obligation changes: in the
 * transaction of a reduction (a negative adjustment) its open instructions
 * become SUPERSEDED with `PAYMENT_SUPERSEDED`, and in that of a settlement
 * (paid by another instruction, or cancelled: reduced to nothing) with
 * `OBLIGATION_NOT_OPEN`, worded for what happened to it.
 * The payment page then refuses before any wallet is asked to sign, and a
 * confirmation answers 409 with that code. A transfer already made for it is
 * still honoured (confirmation, payments job): it pays what is owed then, or
 * is held for review whole once the obligation is settled.
 */
import { and, eq, inArray } from "drizzle-orm";
import type { Tx } from "../../db/client.ts";
import { payments } from "../../db/schema.ts";
import { ApiError, ERROR_CATALOG } from "../errors.ts";

/** Instructions a transfer may still credit. */
export const OPEN_STATUSES = ["PENDING", "SUBMITTED", "SUPERSEDED"];
/** Payments that hold a transfer: it paid the obligation (CONFIRMED), or it is held for review (REVIEW). */
export const HELD_STATUSES = ["CONFIRMED", "REVIEW"];

/** Why an instruction stopped asking for money: its obligation was reduced, paid or cancelled since. */
export type SupersededCause = "REDUCED" | "PAID" | "CANCELLED";

/**
 * What an instruction answers once its obligation is no longer OPEN, in the
 * words of the obligation's status (the pay page says the same).
 */
export const NOT_OPEN_MESSAGES: Record<"PAID" | "CANCELLED", string> = {
  PAID: "Esta cobrança já está paga; esta instrução não pode mais ser paga.",
  CANCELLED: "Esta cobrança foi dispensada; não há nada a pagar.",
};

/** The `failureReason` of an instruction superseded for `cause` (`<CODE>: <message>`, as confirm answers it). */
export function supersededReason(cause: SupersededCause): string {
  return cause === "REDUCED"
    ? `PAYMENT_SUPERSEDED: ${ERROR_CATALOG.PAYMENT_SUPERSEDED.message}`
    : `OBLIGATION_NOT_OPEN: ${NOT_OPEN_MESSAGES[cause]}`;
}

/** 409 OBLIGATION_NOT_OPEN for an obligation in `status`, said for that status, with `obligationStatus`. */
export function obligationNotOpen(status: string): ApiError {
  const message = (NOT_OPEN_MESSAGES as Record<string, string>)[status];
  return new ApiError("OBLIGATION_NOT_OPEN", { ...(message ? { message } : {}), extra: { obligationStatus: status } });
}

/**
 * Supersede the obligation's instructions still asking for money, inside the
 * caller's transaction (the one changing the obligation). A settlement also
 * restates those a reduction superseded before.
 */
export async function supersedeInstructions(tx: Tx, obligationId: string, cause: SupersededCause, now: number) {
  const from = cause === "REDUCED" ? ["PENDING", "SUBMITTED"] : OPEN_STATUSES;
  await tx.update(payments)
    .set({ status: "SUPERSEDED", failureReason: supersededReason(cause), updatedAt: now })
    .where(and(eq(payments.obligationId, obligationId), inArray(payments.status, from)));
}
