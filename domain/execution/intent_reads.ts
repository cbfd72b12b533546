/**
 * The partner's reads of intents (spec, Positions and orders): a client's
 * intents, newest first, and one intent from the service's records (no
 * provider call); and the partner's reconciliation of one intent, which asks
 * the venue and never sends anything.
 */
import { and, desc, eq, notInArray } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { intents } from "../../db/schema.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { ApiError } from "../errors.ts";
import { loadClient } from "../clients/load_client.ts";
import { findAccount } from "../accounts/load_account.ts";
import { callWithAccount } from "../accounts/account_call.ts";
import type { ProviderId } from "../../venues/types.ts";
import { FINAL_STATUSES, findIntent, intentListView, intentView } from "./intents.ts";
import { reconcileIntent } from "./reconcile_intent.ts";

export async function listIntents(
  ctx: Ctx,
  input: { externalUserId: string; status: "OPEN" | "ALL"; limit: number },
) {
  const client = await loadClient(ctx.db.read, partnerOf(ctx), input.externalUserId);
  const rows = await ctx.db.read.select().from(intents)
    .where(and(
      eq(intents.clientId, client.id),
      input.status === "OPEN" ? notInArray(intents.status, [...FINAL_STATUSES]) : undefined,
    ))
    .orderBy(desc(intents.createdAt), desc(intents.id))
    .limit(input.limit);
  return { externalUserId: client.externalUserId, tenantId: client.tenantId, intents: rows.map(intentListView) };
}

/** An intent of the partner's client at the named provider; anything else is NOT_FOUND. */
async function loadIntentOf(ctx: Ctx, input: { intentId: string; externalUserId: string; providerId: ProviderId }) {
  const partnerId = partnerOf(ctx);
  const client = await loadClient(ctx.db.read, partnerId, input.externalUserId);
  const intent = await findIntent(ctx.db.read, partnerId, input.intentId);
  if (!intent || intent.clientId !== client.id || intent.providerId !== input.providerId) {
    throw new ApiError("NOT_FOUND");
  }
  return { client, intent };
}

export async function getIntent(ctx: Ctx, input: { intentId: string; externalUserId: string; providerId: ProviderId }) {
  return intentView((await loadIntentOf(ctx, input)).intent);
}

/**
 * Settle one intent by asking the venue, and report what the account holds
 * that no intent of the service explains (orphan positions and orders).
 */
export async function reconcileIntentOfPartner(
  ctx: Ctx,
  input: { intentId: string; externalUserId: string; providerId: ProviderId },
) {
  const { client, intent } = await loadIntentOf(ctx, input);
  const account = await findAccount(ctx.db.read, client.id, input.providerId);
  if (!account || (account.connection === "REVOKED" && !account.secretRetainedForReconciliation)) {
    throw new ApiError("CREDENTIALS_MISSING");
  }
  const settled = await reconcileIntent(ctx, intent, account);
  const snapshot = await callWithAccount(ctx, account, (venue, credentials) => venue.getAccount(credentials));
  const ours = await ctx.db.read.select({ clientOrderId: intents.clientOrderId, symbol: intents.symbol })
    .from(intents).where(and(eq(intents.clientId, client.id), eq(intents.providerId, input.providerId)));
  const ourOrderIds = new Set(ours.map((row) => row.clientOrderId));
  const ourSymbols = new Set(ours.map((row) => row.symbol));
  const orphanOrders = snapshot.openOrders.filter((order) =>
    !order.clientOrderId || !ourOrderIds.has(order.clientOrderId)
  );
  const orphanPositions = snapshot.positions.filter((position) => !ourSymbols.has(position.symbol));
  const details = [
    ...orphanPositions.map((position) => ({
      kind: "ORPHAN_POSITION",
      symbol: position.symbol,
      side: position.side,
      quantity: Number(position.quantity),
    })),
    ...orphanOrders.map((order) => ({
      kind: "ORPHAN_ORDER",
      symbol: order.symbol,
      side: order.side,
      quantity: Number(order.quantity),
      orderId: order.orderId,
    })),
  ];
  const result = {
    reconciliation: {
      scanned: 1,
      resolved: settled.resolved && intent.status !== settled.intent.status ? 1 : 0,
      stillUncertain: settled.resolved ? 0 : 1,
      orphanPositions: orphanPositions.length,
      orphanOrders: orphanOrders.length,
      details,
    },
    intent: intentView(settled.intent),
  };
  // Asking the venue again is harmless, so the answer is stored after the settled intent, not with it.
  await withTransaction(ctx.db, async (tx) => await ctx.idempotency?.record(tx, result));
  return result;
}
