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
 * reactivation in the same transaction. What arrived is compared with what
 * the obligation still asks for at that moment (a negative adjustment may
 * have reduced it since the instruction): the excess goes to manual review,
 * nothing is credited back. A transfer for an obligation already settled
 * pays nothing: all of it is held for review (status REVIEW). An instruction
 * superseded since (domain/payments/superseded_instructions.ts) is refused
 * unless a transfer for it did arrive, which is honoured by the same rules.
 */
import { and, eq, inArray, ne } from "drizzle-orm";
import type { Hex } from "viem";
import { EVM_NETWORKS, type EvmNetwork } from "../../config.ts";
import { isUniqueViolation, type Tx, withTransaction } from "../../db/client.ts";
import { clients, obligations, payments } from "../../db/schema.ts";
import { CHAIN_IDS, NETWORK_NAMES, type TransactionFacts } from "../../venues/evm/transfers.ts";
import { announceStanding } from "../billing/billing_cycle.ts";
import { reducedSoFar } from "../billing/fee_obligations.ts";
import { obligationView } from "../billing/obligation_view.ts";
import { loadClient } from "../clients/load_client.ts";
import { withPartnerTransaction } from "../credentials/partner_transaction.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { ApiError } from "../errors.ts";
import { emitEvent } from "../events/emit_event.ts";
import { evmReaderOf } from "./evm_networks.ts";
import { lapsed as lapsedAt, minedInTime } from "./payment_expiry.ts";
import { type PaymentRow, paymentView } from "./payment_view.ts";
import { HELD_STATUSES, obligationNotOpen, OPEN_STATUSES, supersedeInstructions } from "./superseded_instructions.ts";

/** How much earlier than the instruction a block may be dated (node clocks drift). */
export const BLOCK_TIME_TOLERANCE_MS = 60_000;
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

/** Verdicts that leave a transfer possibly still to come for a superseded instruction: looked for again. */
const STILL_UNKNOWN: PendingCode[] = ["PAYMENT_AWAITING_CONFIRMATIONS", "PAYMENT_NOT_VERIFIED"];

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
  // A malformed hash is the body's own fault: answered before the client and the payment are looked up.
  if (!TX_HASH.test(input.txHash)) throw new ApiError("INVALID_TX_HASH");
  await ctx.idempotency?.claim();
  const client = await loadClient(ctx.db.read, partnerOf(ctx), input.externalUserId);
  const [payment] = await ctx.db.read.select().from(payments)
    .where(and(eq(payments.paymentId, input.paymentId), eq(payments.clientId, client.id)));
  if (!payment) throw new ApiError("NOT_FOUND");
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
  if (HELD_STATUSES.includes(payment.status)) {
    if (payment.txHash !== hash) throw new ApiError("TX_MISMATCH");
    return await transaction((tx) => record(tx, outcomeOf(payment)));
  }
  // An expired instruction is still paid by a transfer mined before its expiry (payment_expiry.ts).
  const lapsed = lapsedAt(payment, ctx.clock.now());
  const [used] = await ctx.db.read.select({ paymentId: payments.paymentId }).from(payments).where(and(
    eq(payments.networkId, payment.networkId!),
    eq(payments.txHash, hash),
    inArray(payments.status, HELD_STATUSES),
    ne(payments.paymentId, payment.paymentId),
  ));
  if (used) throw new ApiError("TX_ALREADY_USED");
  const verdict = await verify(ctx, payment, hash);
  if (!("code" in verdict)) {
    const outcome = await creditTransfer(ctx, payment, hash, verdict, using);
    // Settled or superseded meanwhile: answer what it is now.
    return outcome ?? await transaction(async (tx) => record(tx, await currentOutcome(tx, payment)));
  }
  const now = ctx.clock.now();
  if (lapsed && (verdict.blockTimeMs === undefined || !minedInTime(payment, verdict.blockTimeMs))) {
    if (payment.status === "PENDING") await expirePayment(ctx, payment);
    throw new ApiError("PAYMENT_EXPIRED");
  }
  // Mined in time, not yet buried: the instruction stays as it is until it is (the payments scan finds it too).
  if (lapsed) {
    return await transaction((tx) =>
      record(tx, { payment, credited: false, code: verdict.code, message: PENDING_MESSAGES[verdict.code] })
    );
  }
  const superseded = payment.status === "SUPERSEDED";
  // Superseded, no new money is asked for: only a transfer that may still prove to be there is looked for again.
  if (superseded && !STILL_UNKNOWN.includes(verdict.code)) throw (await staleInstruction(ctx.db.read, payment))!;
  return await transaction(async (tx) => {
    const [row] = await tx.update(payments)
      .set(
        superseded ? { txHash: hash, updatedAt: now } : {
          status: "SUBMITTED",
          txHash: hash,
          failureReason: `${verdict.code}: ${PENDING_MESSAGES[verdict.code]}`,
          updatedAt: now,
        },
      )
      .where(and(eq(payments.paymentId, payment.paymentId), eq(payments.status, payment.status)))
      .returning();
    // Settled or superseded meanwhile: answer what it is now.
    if (!row) return await record(tx, await currentOutcome(tx, payment));
    return await record(tx, {
      payment: row,
      credited: false,
      code: verdict.code,
      message: PENDING_MESSAGES[verdict.code],
    });
  });
}

/** What `verify` found for a transfer that pays its instruction. */
export type Paid = Extract<Verdict, { paid: bigint }>;

/**
 * The one way a verified EVM transfer credits its instruction, for a
 * partner's confirmation, the payments job's re-check of a submitted hash
 * and the payments scan alike. The transfer must have been mined before the
 * instruction expired, whatever the instruction's status says now
 * (payment_expiry.ts), unless it is the one a reorg took from this payment,
 * mined again; then `creditPayment` records it with the block it
 * lies in (where finality looks for it), straight from EXPIRED too. Throws
 * PAYMENT_EXPIRED for a transfer mined late (a PENDING instruction past its
 * expiry is expired on the way) and TX_ALREADY_USED when the transaction
 * credited another payment first; answers null when another request settled
 * or superseded this payment first.
 */
export async function creditTransfer(
  ctx: Ctx,
  payment: PaymentRow,
  hash: string,
  verdict: Paid,
  using: SettleWith,
): Promise<ConfirmOutcome | null> {
  const now = ctx.clock.now();
  // The transaction a reorg took from this payment, mined again: it was mined in time once, whenever it returns.
  const minedAgain = payment.review === "REORGED" && payment.txHash === hash;
  if (!minedAgain && !minedInTime(payment, verdict.blockTimeMs)) {
    if (lapsedAt(payment, now)) await expirePayment(ctx, payment);
    throw new ApiError("PAYMENT_EXPIRED");
  }
  try {
    return await using.transaction(async (tx) => {
      const outcome = await creditPayment(tx, payment, hash, verdict.paid, now, {
        from: [...OPEN_STATUSES, "EXPIRED"],
        block: verdict,
      });
      if (outcome) await using.record?.(tx, outcome);
      return outcome;
    });
  } catch (error) {
    // The same transaction credited another payment first (the unique index on credited hashes).
    if (isUniqueViolation(error, "payments.network_id, payments.tx_hash")) throw new ApiError("TX_ALREADY_USED");
    throw error;
  }
}

/** The payment as it stands now (another request settled or superseded it meanwhile). */
async function currentOutcome(tx: Tx, payment: PaymentRow): Promise<ConfirmOutcome> {
  const [current] = await tx.select().from(payments).where(eq(payments.paymentId, payment.paymentId));
  if (current.status === "SUPERSEDED") throw (await staleInstruction(tx, current))!;
  return outcomeOf(current);
}

export const SETTLED_BEFORE_MESSAGE =
  "A cobrança já estava quitada; esta transferência não a pagou de novo e foi inteira para revisão manual, " +
  "sem crédito automático.";

/** What a confirmation answers for the payment as it is: credited (200) or not (202, with its code). */
export function outcomeOf(payment: PaymentRow): ConfirmOutcome {
  if (payment.status === "REVIEW") {
    return { payment, credited: false, code: "OBLIGATION_ALREADY_SETTLED", message: SETTLED_BEFORE_MESSAGE };
  }
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
 * Why an instruction can no longer be paid, as the error to answer, or null
 * while it still asks for exactly what its obligation does: the obligation
 * is settled (409 OBLIGATION_NOT_OPEN, with `obligationStatus`), or it was
 * reduced since (409 PAYMENT_SUPERSEDED). Read from the obligation itself, so
 * an instruction issued before superseding existed answers the same.
 */
export async function staleInstruction(db: Tx | Ctx["db"]["read"], payment: PaymentRow): Promise<ApiError | null> {
  const [obligation] = await db.select({
    status: obligations.status,
    amountMicros: obligations.amountMicros,
    reduced: reducedSoFar,
  }).from(obligations).where(eq(obligations.obligationId, payment.obligationId));
  if (obligation.status !== "OPEN") return obligationNotOpen(obligation.status);
  const stale = payment.status === "SUPERSEDED" ||
    obligation.amountMicros - obligation.reduced !== payment.amountMicros;
  return stale ? new ApiError("PAYMENT_SUPERSEDED") : null;
}

/**
 * What the payment must bring to settle its obligation now, in its token
 * units: the instruction's exact amount (its tag included) while the
 * obligation still asks for what it was issued for; once reduced, what is
 * owed now, scaled to the token (the tag no longer names an open demand).
 */
export function dueNow(payment: PaymentRow, owedMicros: number): bigint {
  if (owedMicros === payment.amountMicros) return BigInt(payment.tokenAmount!);
  return BigInt(owedMicros) * 10n ** BigInt(payment.tokenDecimals! - 6);
}

/**
 * Record a transfer of `paid` (the payment's token units) for the payment,
 * `hash` its identity (one transfer, one payment), compare-and-set from
 * `from` (PENDING, SUBMITTED or SUPERSEDED unless told), with the block it
 * lies in when on chain (`block`). While the obligation is open it pays
 * what is owed at this moment (CONFIRMED, `obligation.paid` with the amount
 * owed, the obligation's other instructions superseded; the excess to review
 * as OVERPAID). Once it is settled the transfer pays nothing: REVIEW, all of
 * it in `overpaidTokenAmount`. Answers null when another request settled the
 * payment first.
 */
export async function creditPayment(
  tx: Tx,
  payment: PaymentRow,
  hash: string,
  paid: bigint,
  now: number,
  options: { from?: string[]; block?: Pick<Paid, "blockNumber" | "blockHash"> } = {},
): Promise<ConfirmOutcome | null> {
  const [found] = await tx.select({ obligation: obligations, reduced: reducedSoFar }).from(obligations)
    .where(eq(obligations.obligationId, payment.obligationId));
  const { obligation, reduced } = found;
  const open = obligation.status === "OPEN";
  const due = open ? dueNow(payment, obligation.amountMicros - reduced) : 0n;
  // Obligations only shrink and a transfer short of its instruction never gets here: a breach is a bug.
  if (paid < due) throw new Error(`Payment ${payment.paymentId} credited with less than its obligation asks`);
  const excess = paid - due;
  const [row] = await tx.update(payments).set({
    status: open ? "CONFIRMED" : "REVIEW",
    txHash: hash,
    confirmedAt: now,
    review: open ? (excess > 0n ? "OVERPAID" : null) : "OBLIGATION_ALREADY_SETTLED",
    overpaidTokenAmount: excess > 0n ? excess.toString() : null,
    failureReason: null,
    ...(options.block ? { txBlock: options.block.blockNumber, txBlockHash: options.block.blockHash } : {}),
    updatedAt: now,
  }).where(and(eq(payments.paymentId, payment.paymentId), inArray(payments.status, options.from ?? OPEN_STATUSES)))
    .returning();
  if (!row) return null;
  if (open) {
    const [paidObligation] = await tx.update(obligations).set({ status: "PAID", settledAt: now })
      .where(and(eq(obligations.obligationId, obligation.obligationId), eq(obligations.status, "OPEN")))
      .returning();
    if (paidObligation) {
      const client = await clientParties(tx, payment);
      await emitEvent(tx, {
        type: "obligation.paid",
        ...client,
        occurredAt: now,
        data: { ...obligationView(paidObligation, reduced, now), paymentId: payment.paymentId },
      });
      await supersedeInstructions(tx, paidObligation.obligationId, "PAID", now);
      await announceStanding(tx, { clientId: payment.clientId, providerId: paidObligation.providerId }, now);
    }
  }
  return outcomeOf(row);
}

/** Whose payment it is, as its events name them. */
export async function clientParties(tx: Tx, payment: PaymentRow) {
  const [client] = await tx.select().from(clients).where(eq(clients.id, payment.clientId));
  return { partnerId: client.partnerId, tenantId: client.tenantId, externalUserId: client.externalUserId };
}

/**
 * What `verify` found: a code that credits nothing (with its block's time
 * when it only awaits confirmations), or the amount paid and where.
 */
export type Verdict =
  | { code: PendingCode; blockTimeMs?: number }
  | { paid: bigint; blockNumber: number; blockHash: string; blockTimeMs: number; confirmations: number };

/** The on-chain facts of `hash` against the instruction, as confirmations, the payments scan and finality judge them. */
export async function verify(ctx: Ctx, payment: PaymentRow, hash: string): Promise<Verdict> {
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
  if (facts.confirmations < ctx.config.evmConfirmations[network]) {
    return { code: "PAYMENT_AWAITING_CONFIRMATIONS", blockTimeMs: facts.blockTimeMs };
  }
  return {
    paid,
    blockNumber: facts.blockNumber,
    blockHash: facts.blockHash,
    blockTimeMs: facts.blockTimeMs,
    confirmations: facts.confirmations,
  };
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
