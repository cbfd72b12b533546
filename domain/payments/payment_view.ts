/** The spec's Payment resource. */
import { and, eq } from "drizzle-orm";
import { payments } from "../../db/schema.ts";
import { loadClient } from "../clients/load_client.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { ApiError } from "../errors.ts";
import { iso } from "../clock.ts";
import { microsToUsd } from "../money.ts";

export type PaymentRow = typeof payments.$inferSelect;

export function paymentView(row: PaymentRow) {
  return {
    paymentId: row.paymentId,
    obligationId: row.obligationId,
    method: row.method,
    status: row.status,
    amountUsd: microsToUsd(row.amountMicros),
    tokenSymbol: row.tokenSymbol,
    tokenAddress: row.tokenAddress,
    tokenDecimals: row.tokenDecimals,
    tokenAmount: row.tokenAmount,
    networkId: row.networkId,
    recipient: row.recipient,
    receiverVersion: row.receiverVersion,
    payerAddress: row.payerAddress,
    txHash: row.txHash,
    expiresAt: iso(row.expiresAt),
    confirmedAt: row.confirmedAt === null ? null : iso(row.confirmedAt),
    finalAt: row.finalAt === null ? null : iso(row.finalAt),
    review: row.review,
    overpaidTokenAmount: row.overpaidTokenAmount,
    failureReason: row.failureReason,
  };
}

/** A deposit invoice (the spec shows no fields): its exclusive address, the exact amount, the payment to confirm. */
export function invoiceView(row: PaymentRow) {
  return {
    invoiceId: row.paymentId,
    paymentId: row.paymentId,
    obligationId: row.obligationId,
    status: row.status,
    amountUsd: microsToUsd(row.amountMicros),
    networkId: row.networkId,
    tokenSymbol: row.tokenSymbol,
    tokenAddress: row.tokenAddress,
    tokenDecimals: row.tokenDecimals,
    tokenAmount: row.tokenAmount,
    address: row.recipient,
    derivationIndex: row.derivationIndex,
    expiresAt: iso(row.expiresAt),
  };
}

/** `GET /v1/users/:id/payments/:paymentId`. */
export async function getPayment(ctx: Ctx, input: { externalUserId: string; paymentId: string }) {
  const client = await loadClient(ctx.db.read, partnerOf(ctx), input.externalUserId);
  const [row] = await ctx.db.read.select().from(payments)
    .where(and(eq(payments.paymentId, input.paymentId), eq(payments.clientId, client.id)));
  if (!row) throw new ApiError("NOT_FOUND");
  return { externalUserId: client.externalUserId, tenantId: client.tenantId, payment: paymentView(row) };
}
