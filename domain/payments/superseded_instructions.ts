/**
 * An instruction stops asking for money once its obligation changes: in the
 * transaction of a reduction (a negative adjustment) its open instructions
 * become SUPERSEDED with `PAYMENT_SUPERSEDED`, and in that of a settlement
 * (paid by another instruction, or cancelled) with `OBLIGATION_NOT_OPEN`.
 * The payment page then refuses before any wallet is asked to sign, and a
 * confirmation answers 409 with that code. A transfer already made for it is
 * still honoured (confirmation, payments job): it pays what is owed then, or
 * is held for review whole once the obligation is settled.
 */
import { and, eq, inArray } from "drizzle-orm";
import type { Tx } from "../../db/client.ts";
import { payments } from "../../db/schema.ts";

/** Instructions a transfer may still credit. */
export const OPEN_STATUSES = ["PENDING", "SUBMITTED", "SUPERSEDED"];
/** Payments that hold a transfer: it paid the obligation (CONFIRMED), or it is held for review (REVIEW). */
export const HELD_STATUSES = ["CONFIRMED", "REVIEW"];

export type SupersededCode = "PAYMENT_SUPERSEDED" | "OBLIGATION_NOT_OPEN";

const REASONS: Record<SupersededCode, string> = {
  PAYMENT_SUPERSEDED: "O valor da cobrança mudou depois desta instrução; peça uma nova instrução de pagamento.",
  OBLIGATION_NOT_OPEN: "A cobrança já foi quitada; esta instrução não pode mais ser paga.",
};

/**
 * Supersede the obligation's instructions still asking for money, inside the
 * caller's transaction (the one changing the obligation). A settlement also
 * restates those a reduction superseded before.
 */
export async function supersedeInstructions(tx: Tx, obligationId: string, code: SupersededCode, now: number) {
  const from = code === "OBLIGATION_NOT_OPEN" ? OPEN_STATUSES : ["PENDING", "SUBMITTED"];
  await tx.update(payments)
    .set({ status: "SUPERSEDED", failureReason: `${code}: ${REASONS[code]}`, updatedAt: now })
    .where(and(eq(payments.obligationId, obligationId), inArray(payments.status, from)));
}
