/**
 * What the checkout page says about its payment, from what the service
 * knows, never more:
 * - `PAID`: credited (its receipt); `REVIEW`: a transfer arrived and a person
 *   looks at it (an overpayment, credited with its receipt; or a transfer
 *   that came after the obligation was settled, which paid nothing).
 * - `CONFIRMING`: the node shows a Transfer log that pays this instruction
 *   (the payer's exact tagged amount; for an invoice, a transaction bringing
 *   its address at least the amount), mined while it was open, that the
 *   payments scan has not credited yet: `confirmations` of
 *   `requiredConfirmations` (shown at most as many as required: at that
 *   depth the next payments run credits it).
 * - `SUPERSEDED`: the obligation's amount changed since (a new link is
 *   needed); `CLOSED`: the obligation was settled otherwise (paid through
 *   another link, with that payment's receipt, or cancelled;
 *   `obligationStatus` says which).
 * - `EXPIRED`: nothing seen and the instruction expired; `AWAITING`: nothing
 *   seen yet.
 * Only blocks the payments scan has not judged yet are read here (from its
 * cursor, at most `EVM_LOG_RANGE` blocks back from the head), for this
 * instruction's token and recipient alone; a node that cannot answer is 503
 * PROVIDER_DOWN, so the page keeps what it showed and asks again.
 */
import { eq } from "drizzle-orm";
import type { EvmNetwork } from "../../config.ts";
import { evmScanCursors } from "../../db/schema.ts";
import type { TransferLog } from "../../venues/evm/transfers.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { BLOCK_TIME_TOLERANCE_MS, staleInstruction } from "./confirm_payment.ts";
import { evmReaderOf } from "./evm_networks.ts";
import { minedInTime } from "./payment_expiry.ts";
import { obligationReceipt, readableSession, type Receipt, receiptOf } from "./payment_page_session.ts";
import type { PaymentRow } from "./payment_view.ts";
import { logNames } from "./transfer_scan.ts";

export type CheckoutStatus = "AWAITING" | "CONFIRMING" | "PAID" | "REVIEW" | "EXPIRED" | "SUPERSEDED" | "CLOSED";

export interface CheckoutState {
  status: CheckoutStatus;
  confirmations: number;
  requiredConfirmations: number;
  txHash: string | null;
  receipt: Receipt | null;
  /** REVIEW: why a person looks at the transfer (OVERPAID, OBLIGATION_ALREADY_SETTLED). */
  review: string | null;
  /** CLOSED: what became of the obligation (PAID, CANCELLED). */
  obligationStatus: string | null;
}

/** Statuses of an instruction a transfer may still pay (transfer_scan.ts). */
const PAYABLE = ["PENDING", "SUBMITTED", "EXPIRED", "SUPERSEDED"];

/** `GET /pay/api/status`: the ticket's payment as the page shows it. */
export async function checkoutStatus(ctx: Ctx, ticket: string): Promise<CheckoutState> {
  const { payment } = await readableSession(ctx, ticket);
  if (payment.method !== "EVM_TRANSFER" && payment.method !== "DEPOSIT_INVOICE") {
    throw new ApiError("PAYMENT_METHOD_MISMATCH", { message: "Este link é de outra forma de pagamento." });
  }
  return await checkoutStatusOf(ctx, payment);
}

export async function checkoutStatusOf(ctx: Ctx, payment: PaymentRow): Promise<CheckoutState> {
  const required = ctx.config.evmConfirmations[payment.networkId as EvmNetwork];
  const state: CheckoutState = {
    status: "AWAITING",
    confirmations: 0,
    requiredConfirmations: required,
    txHash: null,
    receipt: null,
    review: null,
    obligationStatus: null,
  };
  if (payment.status === "CONFIRMED" || payment.status === "REVIEW") {
    // Credited (or held) only once buried under the required confirmations.
    const credited = payment.status === "CONFIRMED";
    return {
      ...state,
      status: credited && !payment.review ? "PAID" : "REVIEW",
      confirmations: required,
      txHash: payment.txHash,
      receipt: credited ? receiptOf(ctx, payment) : null,
      review: payment.review,
    };
  }
  const seen = PAYABLE.includes(payment.status) ? await seenTransfer(ctx, payment) : null;
  if (seen) {
    return { ...state, status: "CONFIRMING", confirmations: Math.min(seen.confirmations, required), txHash: seen.hash };
  }
  const stale = await staleInstruction(ctx.db.read, payment);
  if (stale?.code === "PAYMENT_SUPERSEDED") return { ...state, status: "SUPERSEDED" };
  if (stale) {
    return {
      ...state,
      status: "CLOSED",
      obligationStatus: String(stale.extra?.obligationStatus),
      receipt: await obligationReceipt(ctx, ctx.db.read, payment.obligationId),
    };
  }
  if (payment.status === "EXPIRED" || ctx.clock.now() >= payment.expiresAt) return { ...state, status: "EXPIRED" };
  return state;
}

/** The earliest transfer the node shows paying the instruction that the scan has not judged yet, if any. */
async function seenTransfer(ctx: Ctx, payment: PaymentRow): Promise<{ hash: string; confirmations: number } | null> {
  const network = payment.networkId as EvmNetwork;
  const reader = evmReaderOf(ctx, network);
  try {
    const head = await reader.head();
    const [cursor] = await ctx.db.read.select({ nextBlock: evmScanCursors.nextBlock }).from(evmScanCursors)
      .where(eq(evmScanCursors.networkId, network));
    const fromBlock = Math.max(0, cursor?.nextBlock ?? 0, head - ctx.config.evmLogRange + 1);
    if (fromBlock > head) return null;
    const logs = await reader.transferLogs({
      tokens: [payment.tokenAddress!],
      recipients: [payment.recipient!],
      fromBlock,
      toBlock: head,
    });
    for (const log of paying(payment, logs)) {
      const { timeMs } = await reader.block(log.blockNumber);
      // Made before the instruction, or after it expired: it pays nothing here (confirm_payment.ts, verify).
      if (timeMs < payment.issuedWallAt - BLOCK_TIME_TOLERANCE_MS || !minedInTime(payment, timeMs)) continue;
      return { hash: log.txHash, confirmations: head - log.blockNumber + 1 };
    }
    return null;
  } catch (error) {
    ctx.logger.warn("checkout status: the payment network's node did not answer", {
      paymentId: payment.paymentId,
      error: String(error),
    });
    throw new ApiError("PROVIDER_DOWN", {
      status: 503,
      message: "Não foi possível consultar a rede agora. A página tenta de novo em instantes.",
    });
  }
}

/**
 * The logs that pay the instruction, oldest first: for a transfer, the
 * payer's exact amount (the scan's own rule); for an invoice, the transfers
 * of one transaction to its address that add up to the amount.
 */
function paying(payment: PaymentRow, logs: TransferLog[]): TransferLog[] {
  const named = logs.filter((log) => logNames(payment, log)).sort((a, b) => a.blockNumber - b.blockNumber);
  if (payment.payerAddress !== null) return named;
  const byTransaction = new Map<string, bigint>();
  for (const log of named) byTransaction.set(log.txHash, (byTransaction.get(log.txHash) ?? 0n) + log.value);
  return named.filter((log) => byTransaction.get(log.txHash)! >= BigInt(payment.tokenAmount!));
}
