/**
 * `POST /v1/users/:id/payments/:paymentId/confirm` (spec, Billing and
 * payments): the transaction is read on the instruction's network and must
 * be a successful transfer of the instructed token, from the declared payer
 * to the recipient, for at least the exact amount, made after the
 * instruction and buried under the network's confirmations. Anything short
 * of that answers 202 with its code and credits nothing (the same hash may
 * be sent again); a transfer that qualifies credits the obligation once,
 * whoever confirms it first (compare-and-set on the payment, one credit per
 * transaction by a unique index), with `obligation.paid` and the client's
 * reactivation in the same transaction. An overpayment settles the
 * obligation and goes to manual review; nothing is credited back.
 */
import { and, eq, inArray, ne } from "drizzle-orm";
import type { Hex } from "viem";
import { EVM_NETWORKS, type EvmNetwork } from "../../config.ts";
import { isUniqueViolation, type Tx, withTransaction } from "../../db/client.ts";
import { clients, obligations, payments } from "../../db/schema.ts";
import { CHAIN_IDS, NETWORK_NAMES, type TransactionFacts } from "../../venues/evm/transfers.ts";
import { announceStanding } from "../billing/billing_cycle.ts";
import { obligationView } from "../billing/obligation_view.ts";
import { loadClient } from "../clients/load_client.ts";
import { withPartnerTransaction } from "../credentials/partner_transaction.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { ApiError } from "../errors.ts";
import { emitEvent } from "../events/emit_event.ts";
import { evmReaderOf } from "./evm_networks.ts";
import { type PaymentRow, paymentView } from "./payment_view.ts";

/** How much earlier than the instruction a block may be dated (node clocks drift). */
const BLOCK_TIME_TOLERANCE_MS = 60_000;
const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

export type PendingCode =
  | "PAYMENT_AWAITING_CONFIRMATIONS"
  | "PAYMENT_UNDERPAID"
  | "PAYMENT_WRONG_SENDER"
  | "PAYMENT_WRONG_TOKEN_OR_RECIPIENT"
  | "PAYMENT_WRONG_NETWORK"
  | "PAYMENT_TX_TOO_OLD"
  | "PAYMENT_TX_FAILED"
  | "PAYMENT_TX_NOT_FOUND"
  | "PAYMENT_NOT_VERIFIED";

const PENDING_MESSAGES: Record<PendingCode, string> = {
  PAYMENT_AWAITING_CONFIRMATIONS: "Transferência encontrada; aguardando confirmações da rede. Reenvie o mesmo txHash.",
  PAYMENT_UNDERPAID: "O valor transferido é menor que o valor exato da instrução; nada foi creditado.",
  PAYMENT_WRONG_SENDER: "A transferência não partiu da carteira pagadora declarada.",
  PAYMENT_WRONG_TOKEN_OR_RECIPIENT: "A transação não transfere o token instruído para o recebedor da plataforma.",
  PAYMENT_WRONG_NETWORK: "A transação está em outra rede que não a da instrução.",
  PAYMENT_TX_TOO_OLD: "A transação é anterior à instrução de pagamento.",
  PAYMENT_TX_FAILED: "A transação falhou (revertida) na rede.",
  PAYMENT_TX_NOT_FOUND: "Transação não encontrada na rede da instrução.",
  PAYMENT_NOT_VERIFIED: "Não foi possível verificar a transação agora; reenvie o mesmo txHash.",
};

export interface ConfirmOutcome {
  payment: PaymentRow;
  credited: boolean;
  code?: string;
  message?: string;
}

export async function confirmPayment(ctx: Ctx, input: { externalUserId: string; paymentId: string; txHash: string }) {
  await ctx.idempotency?.claim();
  const client = await loadClient(ctx.db.read, partnerOf(ctx), input.externalUserId);
  const [payment] = await ctx.db.read.select().from(payments)
    .where(and(eq(payments.paymentId, input.paymentId), eq(payments.clientId, client.id)));
  if (!payment) throw new ApiError("NOT_FOUND");
  if (!TX_HASH.test(input.txHash)) throw new ApiError("INVALID_TX_HASH");
  if (payment.method === "VENUE_B_USD_SEND") throw new ApiError("PAYMENT_METHOD_MISMATCH");
  // The answer a partner gets (and a retry of the same key replays): 200 when credited, 202 when not yet.
  const answer = (outcome: ConfirmOutcome) => ({
    status: outcome.credited ? 200 as const : 202 as const,
    body: {
      externalUserId: client.externalUserId,
      tenantId: client.tenantId,
      payment: paymentView(outcome.payment),
      credited: outcome.credited,
      ...(outcome.code ? { code: outcome.code, message: outcome.message } : {}),
    },
  });
  const recorder: Recorder = (tx, outcome) => ctx.idempotency?.record(tx, answer(outcome));
  const outcome = await settle(ctx, payment, input.txHash.toLowerCase(), {
    transaction: (work) => withPartnerTransaction(ctx, work),
    record: recorder,
  });
  return answer(outcome);
}

type Transaction = <T>(work: (tx: Tx) => Promise<T>) => Promise<T>;
/** Stores the answer of the request with the write (the partner's Idempotency-Key); nothing for the job. */
type Recorder = (tx: Tx, outcome: ConfirmOutcome) => Promise<void> | undefined;

export interface SettleWith {
  transaction: Transaction;
  record?: Recorder;
}

/**
 * Verify `hash` for the payment and record the outcome, as the partner's
 * confirmation and the payments job both do. Refusals that change nothing
 * throw; the IK answer is recorded with the write.
 */
export async function settle(ctx: Ctx, payment: PaymentRow, hash: string, using: SettleWith): Promise<ConfirmOutcome> {
  const { transaction } = using;
  const record = async (tx: Tx, outcome: ConfirmOutcome) => {
    await using.record?.(tx, outcome);
    return outcome;
  };
  if (payment.status === "CONFIRMED") {
    if (payment.txHash !== hash) throw new ApiError("TX_MISMATCH");
    return await transaction((tx) => record(tx, outcomeOf(payment)));
  }
  if (payment.status === "EXPIRED") throw new ApiError("PAYMENT_EXPIRED");
  if (payment.status === "PENDING" && ctx.clock.now() >= payment.expiresAt) {
    await expirePayment(ctx, payment);
    throw new ApiError("PAYMENT_EXPIRED");
  }
  const [used] = await ctx.db.read.select({ paymentId: payments.paymentId }).from(payments).where(and(
    eq(payments.networkId, payment.networkId!),
    eq(payments.txHash, hash),
    eq(payments.status, "CONFIRMED"),
    ne(payments.paymentId, payment.paymentId),
  ));
  if (used) throw new ApiError("TX_ALREADY_USED");
  const verdict = await verify(ctx, payment, hash);
  const now = ctx.clock.now();
  if ("code" in verdict) {
    return await transaction(async (tx) => {
      const failureReason = `${verdict.code}: ${PENDING_MESSAGES[verdict.code]}`;
      const [row] = await tx.update(payments)
        .set({ status: "SUBMITTED", txHash: hash, failureReason, updatedAt: now })
        .where(and(eq(payments.paymentId, payment.paymentId), inArray(payments.status, ["PENDING", "SUBMITTED"])))
        .returning();
      // Settled meanwhile (another confirmation won): answer what it is now.
      if (!row) return await record(tx, await currentOutcome(tx, payment));
      return await record(tx, {
        payment: row,
        credited: false,
        code: verdict.code,
        message: PENDING_MESSAGES[verdict.code],
      });
    });
  }
  try {
    return await transaction(async (tx) =>
      await record(
        tx,
        (await creditPayment(tx, payment, hash, verdict.paid, now)) ?? (await currentOutcome(tx, payment)),
      )
    );
  } catch (error) {
    // The same transaction credited another payment first.
    if (isUniqueViolation(error, "payments.network_id, payments.tx_hash")) throw new ApiError("TX_ALREADY_USED");
    throw error;
  }
}

/** The payment as it stands now (another request settled it meanwhile). */
async function currentOutcome(tx: Tx, payment: PaymentRow): Promise<ConfirmOutcome> {
  const [current] = await tx.select().from(payments).where(eq(payments.paymentId, payment.paymentId));
  return outcomeOf(current);
}

function outcomeOf(payment: PaymentRow): ConfirmOutcome {
  if (payment.status !== "CONFIRMED") {
    const [code, message] = (payment.failureReason ?? "PAYMENT_NOT_VERIFIED: ").split(": ");
    return { payment, credited: false, code, message };
  }
  return payment.review
    ? {
      payment,
      credited: true,
      code: "PAYMENT_OVERPAID_MANUAL_REVIEW",
      message: "Obrigação quitada; o excedente foi para revisão manual, sem crédito automático.",
    }
    : { payment, credited: true };
}

/**
 * Credit the payment (compare-and-set from PENDING or SUBMITTED) and its
 * obligation, once, with `paid` in the payment's token units and `hash` the
 * transfer's identity (one credit each). Answers null when another request
 * settled it first.
 */
export async function creditPayment(tx: Tx, payment: PaymentRow, hash: string, paid: bigint, now: number) {
  const exact = BigInt(payment.tokenAmount!);
  const [obligation] = await tx.select().from(obligations).where(eq(obligations.obligationId, payment.obligationId));
  const owed = obligation.status === "OPEN";
  // Paid twice over (another instruction settled it first): the whole transfer goes to review.
  const excess = owed ? paid - exact : paid;
  const [row] = await tx.update(payments).set({
    status: "CONFIRMED",
    txHash: hash,
    confirmedAt: now,
    review: excess > 0n ? (owed ? "OVERPAID" : "OBLIGATION_ALREADY_SETTLED") : null,
    overpaidTokenAmount: excess > 0n ? excess.toString() : null,
    failureReason: null,
    updatedAt: now,
  }).where(and(eq(payments.paymentId, payment.paymentId), inArray(payments.status, ["PENDING", "SUBMITTED"])))
    .returning();
  if (!row) return null;
  if (owed) {
    const [paidObligation] = await tx.update(obligations).set({ status: "PAID", settledAt: now })
      .where(and(eq(obligations.obligationId, obligation.obligationId), eq(obligations.status, "OPEN")))
      .returning();
    if (paidObligation) {
      const client = await clientParties(tx, payment);
      await emitEvent(tx, {
        type: "obligation.paid",
        ...client,
        occurredAt: now,
        data: { ...obligationView(paidObligation, 0, now), paymentId: payment.paymentId },
      });
      await announceStanding(tx, { clientId: payment.clientId, providerId: paidObligation.providerId }, now);
    }
  }
  return outcomeOf(row);
}

async function clientParties(tx: Tx, payment: PaymentRow) {
  const [client] = await tx.select().from(clients).where(eq(clients.id, payment.clientId));
  return { partnerId: client.partnerId, tenantId: client.tenantId, externalUserId: client.externalUserId };
}

/** The on-chain facts of `hash` against the instruction: a code that credits nothing, or the amount paid. */
async function verify(ctx: Ctx, payment: PaymentRow, hash: string): Promise<{ code: PendingCode } | { paid: bigint }> {
  const network = payment.networkId as EvmNetwork;
  const facts = await factsOn(ctx, network, hash);
  if (!facts) return { code: "PAYMENT_NOT_VERIFIED" };
  if (!facts.found) {
    for (const other of EVM_NETWORKS.filter((n) => n !== network && ctx.config.evmRpc[n])) {
      if ((await factsOn(ctx, other, hash))?.found) return { code: "PAYMENT_WRONG_NETWORK" };
    }
    return { code: "PAYMENT_TX_NOT_FOUND" };
  }
  if (!facts.succeeded) return { code: "PAYMENT_TX_FAILED" };
  const toRecipient = facts.transfers.filter((t) => t.token === payment.tokenAddress && t.to === payment.recipient);
  if (!toRecipient.length) return { code: "PAYMENT_WRONG_TOKEN_OR_RECIPIENT" };
  // An invoice's address is its own: any wallet may pay it.
  const fromPayer = payment.payerAddress === null
    ? toRecipient
    : toRecipient.filter((t) => t.from === payment.payerAddress);
  if (!fromPayer.length) return { code: "PAYMENT_WRONG_SENDER" };
  if (facts.blockTimeMs < payment.issuedWallAt - BLOCK_TIME_TOLERANCE_MS) return { code: "PAYMENT_TX_TOO_OLD" };
  const paid = fromPayer.reduce((sum, t) => sum + t.value, 0n);
  if (paid < BigInt(payment.tokenAmount!)) return { code: "PAYMENT_UNDERPAID" };
  if (facts.confirmations < ctx.config.evmConfirmations[network]) return { code: "PAYMENT_AWAITING_CONFIRMATIONS" };
  return { paid };
}

/** The transaction's facts on `network`, or null when its node cannot be trusted or reached now. */
async function factsOn(ctx: Ctx, network: EvmNetwork, hash: string): Promise<TransactionFacts | null> {
  const reader = evmReaderOf(ctx, network);
  try {
    if ((await reader.chainId()) !== CHAIN_IDS[network]) {
      ctx.logger.error("payment node answers another chain", { network, expected: CHAIN_IDS[network] });
      return null;
    }
    return await reader.transaction(hash as Hex);
  } catch (error) {
    ctx.logger.warn("payment node unreachable", { network: NETWORK_NAMES[network], error: String(error) });
    return null;
  }
}

/** A PENDING instruction past its expiry becomes EXPIRED: a new one is needed. */
export async function expirePayment(ctx: Ctx, payment: PaymentRow): Promise<void> {
  await withTransaction(ctx.db, (tx) =>
    tx.update(payments).set({ status: "EXPIRED", updatedAt: ctx.clock.now() })
      .where(and(eq(payments.paymentId, payment.paymentId), eq(payments.status, "PENDING"))));
}
