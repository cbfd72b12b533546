/**
 * The payments job: a PENDING instruction past its expiry is EXPIRED (a new
 * one is needed); a SUBMITTED one (its transaction seen but not credited:
 * awaiting confirmations, or not yet verifiable) is checked again on chain
 * with the hash it was given, until a day after its expiry, then EXPIRED. A
 * check credits exactly as the partner's confirmation does. A SUPERSEDED
 * instruction whose transfer was already on its way (an EVM hash given, a
 * VENUE_B send relayed) is looked for as long: what arrives is honoured
 * (credited, or held for review once the obligation is settled). Each payment is
 * checked on its own: one that fails in an unforeseen way (a corrupt row, an
 * answer nobody expected) is logged with its id and counted as `failed`, and
 * the payments behind it are still checked.
 */
import { and, asc, eq, gt, isNotNull, lte, or, sql } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { payments, paymentSessions } from "../../db/schema.ts";
import { DAY_MS } from "../clock.ts";
import { yieldToEventLoop } from "../concurrency.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { errorFields } from "../logger.ts";
import { settle } from "./confirm_payment.ts";
import type { PaymentRow } from "./payment_view.ts";
import { checkSendLedger } from "./venue_b_send.ts";

const BATCH = 100;
/** A VENUE_B send whose signature was relayed (qualified by hand: see reducedSoFar in fee_obligations.ts). */
const relayedSend = sql`EXISTS (SELECT 1 FROM ${paymentSessions} s
  WHERE s.payment_id = ${payments}.payment_id AND s.status = 'SIGNED')`;
/** How long after its expiry a submitted transaction is still looked for. */
const SUBMITTED_GRACE_MS = DAY_MS;

export interface PaymentCheckSummary {
  expired: number;
  checked: number;
  credited: number;
  /** Transfers that arrived for an obligation already settled: held for review (REVIEW), nothing credited. */
  reviewed: number;
  /** Checks that failed unexpectedly (logged with the payment's id); tried again at the next run. */
  failed: number;
}

export async function checkPayments(ctx: Ctx): Promise<PaymentCheckSummary> {
  const summary: PaymentCheckSummary = { expired: 0, checked: 0, credited: 0, reviewed: 0, failed: 0 };
  const now = ctx.clock.now();
  const expired = await withTransaction(ctx.db, (tx) =>
    tx.update(payments).set({ status: "EXPIRED", updatedAt: now })
      .where(and(eq(payments.status, "PENDING"), lte(payments.expiresAt, now)))
      .returning({ paymentId: payments.paymentId }));
  summary.expired += expired.length;
  const submitted = await ctx.db.read.select().from(payments).where(or(
    eq(payments.status, "SUBMITTED"),
    and(
      eq(payments.status, "SUPERSEDED"),
      gt(payments.expiresAt, now - SUBMITTED_GRACE_MS),
      or(isNotNull(payments.txHash), relayedSend),
    ),
  )).orderBy(asc(payments.expiresAt)).limit(BATCH);
  for (const payment of submitted) {
    try {
      await checkSubmitted(ctx, payment, now, summary);
    } catch (error) {
      if (error instanceof ApiError) {
        // The hash credited another payment meanwhile, or the like: the payment keeps its reason.
      } else {
        summary.failed++;
        ctx.logger.error("payment check failed", { paymentId: payment.paymentId, ...errorFields(error) });
      }
    }
    await yieldToEventLoop();
  }
  return summary;
}

/** One submitted payment: expired past its grace, else looked for again (counted in `summary`). */
async function checkSubmitted(ctx: Ctx, payment: PaymentRow, now: number, summary: PaymentCheckSummary) {
  if (payment.expiresAt + SUBMITTED_GRACE_MS <= now) {
    await withTransaction(ctx.db, (tx) =>
      tx.update(payments).set({ status: "EXPIRED", updatedAt: now })
        .where(and(eq(payments.paymentId, payment.paymentId), eq(payments.status, "SUBMITTED"))));
    summary.expired++;
    return;
  }
  summary.checked++;
  if (payment.method === "VENUE_B_USD_SEND") {
    const [session] = await ctx.db.read.select().from(paymentSessions)
      .where(eq(paymentSessions.paymentId, payment.paymentId));
    const outcome = await checkSendLedger(ctx, payment, session.signedNonce!);
    if (outcome.status === "CONFIRMED") summary.credited++;
    if (outcome.status === "REVIEW") summary.reviewed++;
    return;
  }
  const outcome = await settle(ctx, payment, payment.txHash!, {
    transaction: (work) => withTransaction(ctx.db, work),
  });
  if (outcome.credited) summary.credited++;
  if (outcome.payment.status === "REVIEW") summary.reviewed++;
}
