/**
 * Finality of credited transfers: a transfer credits once the network's
 * confirmations lie on top of it (`EVM_CONFIRMATIONS`), but a reorg deeper
 * than that can still take it away. Each payments run reads every credited,
 * not yet final transfer again, by the same verification as a confirmation,
 * until `EVM_FINALITY` blocks lie on top of it (then `finalAt`). One that no
 * longer pays (its block replaced by a reorg, so its receipt is gone, or
 * mined again somewhere that does not pay) is reversed in one transaction: the payment goes back to SUBMITTED
 * with its hash and `review: REORGED`, the obligation is OPEN again
 * (settledAt null) unless another confirmed payment still pays it, the
 * partner gets `payment.reversed`, and the client's commercial standing is
 * announced again (grace or suspension if the obligation is past due). The
 * payments job then looks for the same hash again (payment_checks.ts) and
 * the scan for a transfer to the instruction (transfer_scan.ts): mined again,
 * it credits again, with a new `obligation.paid`.
 *
 * What a reversal leaves alone: a negative adjustment that arrived while the
 * obligation read PAID became credit (credits), which stays the client's and
 * is deducted from its next performance fee; the reopened obligation owes
 * its amount less the reductions taken off it while it was open.
 */
import { and, desc, eq, inArray, isNull, ne } from "drizzle-orm";
import { EVM_NETWORKS, type EvmNetwork } from "../../config.ts";
import { withTransaction } from "../../db/client.ts";
import { obligations, payments } from "../../db/schema.ts";
import { announceStanding } from "../billing/billing_cycle.ts";
import { reducedSoFar } from "../billing/fee_obligations.ts";
import { obligationView } from "../billing/obligation_view.ts";
import { yieldToEventLoop } from "../concurrency.ts";
import type { Ctx } from "../context.ts";
import { emitEvent } from "../events/emit_event.ts";
import { errorFields } from "../logger.ts";
import { clientParties, verify } from "./confirm_payment.ts";
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
    // Another confirmed payment (a second instruction, a VENUE_B send) still pays the obligation: it stays PAID.
    const [stillPaid] = await tx.select({ paymentId: payments.paymentId }).from(payments)
      .where(and(eq(payments.obligationId, payment.obligationId), eq(payments.status, "CONFIRMED"))).limit(1);
    const reopened = stillPaid ? [] : await tx.update(obligations).set({ status: "OPEN", settledAt: null })
      .where(and(eq(obligations.obligationId, payment.obligationId), eq(obligations.status, "PAID")))
      .returning({ obligationId: obligations.obligationId });
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
    if (reopened.length) {
      await announceStanding(tx, { clientId: payment.clientId, providerId: obligation.row.providerId }, now);
    }
    ctx.logger.warn("credited transfer taken away by a reorg", {
      paymentId: payment.paymentId,
      obligationId: payment.obligationId,
      code,
      kind: reopened.length ? "OBLIGATION_REOPENED" : "OBLIGATION_STILL_PAID",
    });
    return true;
  });
}
