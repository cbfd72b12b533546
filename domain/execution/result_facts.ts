/**
 * Realized results as facts: every fill and funding payment of a client's
 * account is recorded once, whoever reports it first (the placement, the
 * reconciliation job, a second instance), keyed by the venue's identity of
 * it. A new fact adds its net result to the UTC day of the service clock when
 * it is recorded (the daily loss halt is a control on what the service learns
 * today; a late fact counts against today, which fails closed), in the same
 * transaction; performance accounting reads the same facts by occurredAt.
 */
import { resultFacts } from "../../db/schema.ts";
import type { Tx } from "../../db/client.ts";
import { recordRealizedResult } from "../setups/daily_loss.ts";
import { add, sub } from "../../venues/decimal.ts";
import { USD_FEE_ASSETS } from "../performance/portions.ts";
import type { Fill, FundingPayment, ProviderId } from "../../venues/types.ts";

type FactRow = typeof resultFacts.$inferInsert;

interface Account {
  clientId: number;
  providerId: ProviderId;
}

/**
 * Record a fill; answers false when it was already recorded. A fee charged in
 * another asset (VENUE_A's BNB fee discount) is kept in that asset: its
 * closing portion waits for a USD value (domain/performance/portions.ts), and
 * the day's result counts the fill without it until then.
 */
export async function recordFill(tx: Tx, account: Account, fill: Fill, now: number): Promise<boolean> {
  const builderFee = fill.builderFee ?? "0";
  const venueFee = sub(fill.fee, builderFee);
  const valued = USD_FEE_ASSETS.has(fill.feeAsset);
  return await insertFact(tx, {
    ...account,
    venueRef: `FILL:${fill.symbol}:${fill.tradeId}`,
    kind: "FILL",
    symbol: fill.symbol,
    orderId: fill.orderId,
    clientOrderId: fill.clientOrderId,
    side: fill.side,
    price: fill.price,
    quantity: fill.quantity,
    realizedPnl: fill.realizedPnl,
    venueFee,
    feeAsset: fill.feeAsset,
    builderFee,
    funding: "0",
    net: valued ? sub(fill.realizedPnl, venueFee) : fill.realizedPnl,
    occurredAt: fill.time,
    recordedAt: now,
  });
}

/** Record a funding payment (signed: positive = received); answers false when already recorded. */
export async function recordFunding(tx: Tx, account: Account, payment: FundingPayment, now: number): Promise<boolean> {
  return await insertFact(tx, {
    ...account,
    venueRef: `FUNDING:${payment.symbol}:${payment.time}`,
    kind: "FUNDING",
    symbol: payment.symbol,
    realizedPnl: "0",
    venueFee: "0",
    feeAsset: payment.asset,
    builderFee: "0",
    funding: payment.amount,
    net: add("0", payment.amount),
    occurredAt: payment.time,
    recordedAt: now,
  });
}

async function insertFact(tx: Tx, fact: FactRow): Promise<boolean> {
  const inserted = await tx.insert(resultFacts).values(fact).onConflictDoNothing()
    .returning({ venueRef: resultFacts.venueRef });
  if (!inserted.length) return false;
  await recordRealizedResult(tx, {
    clientId: fact.clientId,
    providerId: fact.providerId,
    at: fact.recordedAt,
    realized: fact.net,
  });
  return true;
}
