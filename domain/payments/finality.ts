/**
 * Finality of credited transfers: a transfer credits once the network's
 * confirmations lie on top of it (`EVM_CONFIRMATIONS`), but a reorg deeper
 * than that can still take it away. Each payments run reads every credited,
 * not yet final transfer again, by the same verification as a confirmation,
 * until `EVM_FINALITY` blocks lie on top of it (then `finalAt`). One that no
 * longer pays (its block replaced by a reorg, so its receipt is gone, or
 * mined again somewhere that does not pay) is reversed in one transaction:
 * the payment keeps its hash and gets `review: REORGED`; it goes back to
 * SUBMITTED, or to EXPIRED when a newer open instruction asks for the same
 * tagged amount meanwhile (the amount is that one's now). The obligation it
 * paid (its only credit: one payment is CONFIRMED per obligation) is settled
 * instead by the oldest transfer held for review on it that covers what it
 * owes (REVIEW to CONFIRMED, with its `obligation.paid`, the reversed
 * instruction then SUPERSEDED like any other of a paid obligation), or else
 * is OPEN again (settledAt null) and the client's commercial standing is
 * announced again (grace or suspension if it is past due). The partner gets
 * `payment.reversed` with the obligation as it stands after the reversal.
 * The payments job then looks for the same hash again (payment_checks.ts)
 * and the scan for a transfer to the instruction (transfer_scan.ts): mined
 * again in time, it credits again (a new `obligation.paid`), or is held for
 * review when the obligation was settled meanwhile.
 *
 * What a reversal leaves alone: a negative adjustment that arrived while the
 * obligation read PAID became credit (credits), which stays the client's and
 * is deducted from its next performance fee; the reopened obligation owes
 * its amount less the reductions taken off it while it was open.
 */
import { and, asc, desc, eq, inArray, isNull, ne } from "drizzle-orm";
import { EVM_NETWORKS, type EvmNetwork } from "../../config.ts";
import { type Tx, withTransaction } from "../../db/client.ts";
import { obligations, payments } from "../../db/schema.ts";
import { announceStanding } from "../billing/billing_cycle.ts";
import { reducedSoFar } from "../billing/fee_obligations.ts";
import { obligationView } from "../billing/obligation_view.ts";
import { yieldToEventLoop } from "../concurrency.ts";
import type { Ctx } from "../context.ts";
import { emitEvent } from "../events/emit_event.ts";
import { errorFields } from "../logger.ts";
import { clientParties, creditPayment, dueNow, verify } from "./confirm_payment.ts";
import { evmReaderOf } from "./evm_networks.ts";
import type { PaymentRow } from "./payment_view.ts";

const BATCH = 100;

export const REORGED_REASON = "PAYMENT_REORGED: A transação creditada saiu da rede numa reorganização; " +
  "a obrigação voltou a ficar em aberto até que ela seja minerada de novo.";

export interface FinalitySummary {
  /** Credited transfers found under the network's finality depth this run. */
  final: number;
  /** Credited transfers a reorg took away: reversed, their obligations open again. */
  reorged: number;
  /** Checks that failed unexpectedly (logged with the payment's id); tried again at the next run. */
  finalityFailed: number;
}

export async function checkFinality(ctx: Ctx): Promise<FinalitySummary> {
  const summary: FinalitySummary = { final: 0, reorged: 0, finalityFailed: 0 };
  const networks = EVM_NETWORKS.filter((network) => ctx.config.evmRpc[network]);
  if (!networks.length) return summary;
  // Newest first: the shallowest credits are the ones a reorg can still take.
  const credited = await ctx.db.read.select().from(payments).where(and(
    eq(payments.status, "CONFIRMED"),
    isNull(payments.finalAt),
    ne(payments.method, "VENUE_B_USD_SEND"),
    inArray(payments.networkId, networks),
  )).orderBy(desc(payments.confirmedAt)).limit(BATCH);
  for (const payment of credited) {
    try {
      const state = await checkOne(ctx, payment);
      if (state === "FINAL") summary.final++;
      if (state === "REORGED") summary.reorged++;
    } catch (error) {
      summary.finalityFailed++;
      ctx.logger.error("finality check failed", { paymentId: payment.paymentId, ...errorFields(error) });
    }
    await yieldToEventLoop();
  }
  return summary;
}

async function checkOne(ctx: Ctx, payment: PaymentRow): Promise<"FINAL" | "PENDING" | "REORGED"> {
  const network = payment.networkId as EvmNetwork;
  const verdict = await verify(ctx, payment, payment.txHash!);
  const now = ctx.clock.now();
  if (!("code" in verdict)) {
    const final = verdict.confirmations >= ctx.config.evmFinality[network];
    await withTransaction(ctx.db, (tx) =>
      tx.update(payments).set({
        txBlock: verdict.blockNumber,
        txBlockHash: verdict.blockHash,
        ...(final ? { finalAt: now } : {}),
      }).where(and(eq(payments.paymentId, payment.paymentId), eq(payments.status, "CONFIRMED"))));
    return final ? "FINAL" : "PENDING";
  }
  // The node cannot tell now, or the transfer still pays from a newer block (mined again after a reorg).
  if (verdict.code === "PAYMENT_NOT_VERIFIED" || verdict.code === "PAYMENT_AWAITING_CONFIRMATIONS") return "PENDING";
  if (
    (verdict.code === "PAYMENT_TX_NOT_FOUND" || verdict.code === "PAYMENT_WRONG_NETWORK") &&
    !(await blockReplaced(ctx, network, payment))
  ) {
    ctx.logger.warn("finality: the node does not find a credited transfer whose block is unchanged; checked again", {
      paymentId: payment.paymentId,
      networkId: network,
      block: payment.txBlock,
    });
    return "PENDING";
  }
  return (await reversePayment(ctx, payment, verdict.code, now)) ? "REORGED" : "PENDING";
}

/**
 * Whether the chain replaced the block the transfer was credited in, so a
 * receipt the node no longer finds was really taken away: the chain's block
 * at that height has another hash, under the network's confirmations (a
 * replacement is trusted as deep as a credit is). A node whose head has not
 * reached that depth is behind, or on a shorter fork that will grow past the
 * height: it is asked again at the next run, when the hash decides. A
 * receipt missing while the block is the one credited is a node's miss (a
 * load-balanced backend that lags, say), never a reorg. A payment credited
 * before the block's hash was kept (tx_block_hash null, until its first
 * successful check records it) keeps the older rule: taken away unless the
 * node is behind its block.
 */
async function blockReplaced(ctx: Ctx, network: EvmNetwork, payment: PaymentRow): Promise<boolean> {
  if (payment.txBlock === null) return true;
  const reader = evmReaderOf(ctx, network);
  const deep = payment.txBlock + ctx.config.evmConfirmations[network] - 1;
  if ((await reader.head()) < (payment.txBlockHash === null ? payment.txBlock : deep)) return false;
  if (payment.txBlockHash === null) return true;
  return (await reader.block(payment.txBlock)).hash !== payment.txBlockHash;
}

/**
 * Undo the credit of `payment`, whose transfer no longer pays (`code` says
 * how), in one transaction with its event; false when it changed meanwhile.
 */
async function reversePayment(ctx: Ctx, payment: PaymentRow, code: string, now: number): Promise<boolean> {
  return await withTransaction(ctx.db, async (tx) => {
    // The amount was free since the credit: a newer open instruction asking for it keeps it, this one lapses.
    const [holder] = await tx.select({ paymentId: payments.paymentId }).from(payments).where(and(
      eq(payments.networkId, payment.networkId!),
      eq(payments.tokenAddress, payment.tokenAddress!),
      eq(payments.recipient, payment.recipient!),
      eq(payments.tokenAmount, payment.tokenAmount!),
      inArray(payments.status, ["PENDING", "SUBMITTED"]),
      ne(payments.paymentId, payment.paymentId),
    )).limit(1);
    const [reversed] = await tx.update(payments).set({
      status: holder ? "EXPIRED" : "SUBMITTED",
      review: "REORGED",
      confirmedAt: null,
      overpaidTokenAmount: null,
      failureReason: REORGED_REASON,
      finalAt: null,
      updatedAt: now,
    }).where(and(eq(payments.paymentId, payment.paymentId), eq(payments.status, "CONFIRMED"), isNull(payments.finalAt)))
      .returning();
    if (!reversed) return false;
    // This was the obligation's one credit (creditPayment confirms only while it is OPEN): it is owed again, unless a
    // transfer held for review because it arrived after that credit pays it now.
    const reopened = await tx.update(obligations).set({ status: "OPEN", settledAt: null })
      .where(and(eq(obligations.obligationId, payment.obligationId), eq(obligations.status, "PAID")))
      .returning({ obligationId: obligations.obligationId });
    const applied = reopened.length ? await applyHeld(tx, payment.obligationId, now) : null;
    const [obligation] = await tx.select({ row: obligations, reduced: reducedSoFar }).from(obligations)
      .where(eq(obligations.obligationId, payment.obligationId));
    await emitEvent(tx, {
      type: "payment.reversed",
      ...await clientParties(tx, payment),
      occurredAt: now,
      data: {
        ...obligationView(obligation.row, obligation.reduced, now),
        paymentId: payment.paymentId,
        networkId: payment.networkId,
        txHash: payment.txHash,
        review: "REORGED",
        reason: code,
      },
    });
    // Applying a held payment announced the standing with its obligation.paid.
    if (reopened.length && !applied) {
      await announceStanding(tx, { clientId: payment.clientId, providerId: obligation.row.providerId }, now);
    }
    ctx.logger.warn("credited transfer taken away by a reorg", {
      paymentId: payment.paymentId,
      obligationId: payment.obligationId,
      code,
      kind: applied ? "HELD_PAYMENT_APPLIED" : "OBLIGATION_REOPENED",
    });
    return true;
  });
}

/**
 * Inside a reversal, the obligation just reopened: the oldest payment held
 * for review on it (its transfer arrived after the credit now reversed)
 * whose held amount covers what the obligation owes now is credited by the
 * rules of any credit (`creditPayment` from REVIEW: CONFIRMED, the excess
 * OVERPAID, `obligation.paid`, the other instructions superseded). It keeps
 * the block it was seen in and is not final, so finality checks it from the
 * next run. Answers the payment applied, or null when none covers the debt.
 */
async function applyHeld(tx: Tx, obligationId: string, now: number): Promise<PaymentRow | null> {
  const [owed] = await tx.select({ amountMicros: obligations.amountMicros, reduced: reducedSoFar }).from(obligations)
    .where(eq(obligations.obligationId, obligationId));
  const held = await tx.select().from(payments)
    .where(and(eq(payments.obligationId, obligationId), eq(payments.status, "REVIEW")))
    .orderBy(asc(payments.confirmedAt), asc(payments.paymentId));
  for (const candidate of held) {
    if (candidate.tokenDecimals === null || candidate.overpaidTokenAmount === null) continue;
    const amount = BigInt(candidate.overpaidTokenAmount);
    if (amount < dueNow(candidate, owed.amountMicros - owed.reduced)) continue;
    const outcome = await creditPayment(tx, candidate, candidate.txHash!, amount, now, { from: ["REVIEW"] });
    if (outcome) return outcome.payment;
  }
  return null;
}
