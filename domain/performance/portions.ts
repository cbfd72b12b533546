/**
 * The canonical result of each closing portion of a trade (spec, Performance
 * rules 1-3), derived once from the position's facts:
 *
 *   net = realized PnL − venue fees + funding
 *
 * where the venue fees are the closing fill's commission plus its share of
 * the entry commissions (by quantity closed), and the funding is what the
 * position paid or received since its previous closing portion. The builder
 * fee is kept apart (platform revenue): it never enters net. Every component
 * is rounded once, half away from zero, to micro-units; shares of the entry
 * commissions are rounded cumulatively, so the portions of a closed position
 * add up to its entry commissions exactly.
 *
 * A portion missing a fact stays PENDING: entry fills not yet seen, a
 * commission in an asset without a USD value, or funding not yet known up to
 * its close. It is CONFIRMED the first time nothing is missing, and never
 * changes after that.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Tx } from "../../db/client.ts";
import { accountStates, performancePortions, resultFacts } from "../../db/schema.ts";
import { decimalToMicros } from "../money.ts";
import { add, div, isZero, min, mul } from "../../venues/decimal.ts";
import { type AccountKey, attributeFacts } from "./attribution.ts";

/** Fee assets whose amounts are USD for accounting (the venues' margin assets). */
export const USD_FEE_ASSETS = new Set(["USDT", "USDC"]);

type Fact = typeof resultFacts.$inferSelect;
type PortionRow = typeof performancePortions.$inferInsert;

/**
 * Attribute the account's new facts and (re)derive the portions of every
 * position that gained facts or still has a pending portion. Runs in the
 * transaction that recorded the facts.
 */
export async function derivePerformance(tx: Tx, account: AccountKey, now: number): Promise<void> {
  const touched = await attributeFacts(tx, account, now);
  const pending = await tx.selectDistinct({ positionId: performancePortions.positionId }).from(performancePortions)
    .where(and(
      eq(performancePortions.clientId, account.clientId),
      eq(performancePortions.providerId, account.providerId),
      eq(performancePortions.status, "PENDING"),
    ));
  for (const { positionId } of pending) touched.add(positionId);
  if (!touched.size) return;
  const [state] = await tx.select({ fundingKnownThrough: accountStates.fundingKnownThrough }).from(accountStates)
    .where(and(eq(accountStates.clientId, account.clientId), eq(accountStates.providerId, account.providerId)));
  for (const positionId of touched) {
    await derivePosition(tx, account, positionId, state?.fundingKnownThrough ?? 0, now);
  }
}

async function derivePosition(
  tx: Tx,
  account: AccountKey,
  positionId: string,
  fundingKnownThrough: number,
  now: number,
) {
  const facts = await tx.select().from(resultFacts)
    .where(eq(resultFacts.positionId, positionId))
    .orderBy(resultFacts.occurredAt, resultFacts.venueRef);
  const confirmed = new Set(
    (await tx.select({ venueRef: performancePortions.venueRef }).from(performancePortions).where(and(
      eq(performancePortions.clientId, account.clientId),
      eq(performancePortions.providerId, account.providerId),
      eq(performancePortions.positionId, positionId),
      eq(performancePortions.status, "CONFIRMED"),
    ))).map((row) => row.venueRef),
  );
  for (const portion of portionsOf(facts, fundingKnownThrough)) {
    if (confirmed.has(portion.venueRef)) continue;
    const row: PortionRow = {
      ...account,
      positionId,
      ...portion,
      confirmedAt: portion.status === "CONFIRMED" ? now : null,
    };
    await tx.insert(performancePortions).values(row).onConflictDoUpdate({
      target: [performancePortions.clientId, performancePortions.providerId, performancePortions.venueRef],
      set: row,
      setWhere: sql`${performancePortions.status} = 'PENDING'`,
    });
  }
}

export interface Portion {
  venueRef: string;
  closedAt: number;
  status: "PENDING" | "CONFIRMED";
  pendingReason: string | null;
  realizedMicros: number;
  venueFeesMicros: number;
  fundingMicros: number;
  builderFeesMicros: number;
  netMicros: number;
  factsCount: number;
}

/** The closing portions of one position from all its facts (entries, exits, funding), in time order. */
export function portionsOf(facts: Fact[], fundingKnownThrough: number): Portion[] {
  const entries = facts.filter((fact) => fact.role === "ENTRY");
  const exits = facts.filter((fact) => fact.role === "EXIT");
  const funding = facts.filter((fact) => fact.role === "FUNDING");
  const entryQuantity = entries.reduce((sum, fill) => add(sum, fill.quantity ?? "0"), "0");
  const entryFees = entries.reduce((sum, fill) => add(sum, fill.venueFee), "0");
  const entryBuilderFees = entries.reduce((sum, fill) => add(sum, fill.builderFee), "0");
  const entryValued = entries.every((fill) => USD_FEE_ASSETS.has(fill.feeAsset));
  /** The cumulative share of an entry amount for `closed` of the entry quantity, in micro-units. */
  const shareThrough = (amount: string, closed: string) =>
    isZero(entryQuantity) ? 0 : decimalToMicros(div(mul(amount, min(closed, entryQuantity)), entryQuantity, 6));

  const portions: Portion[] = [];
  let closed = "0";
  let previousClose = -Infinity;
  for (const [index, exit] of exits.entries()) {
    const closedAfter = add(closed, exit.quantity ?? "0");
    const feeShare = shareThrough(entryFees, closedAfter) - shareThrough(entryFees, closed);
    const builderShare = shareThrough(entryBuilderFees, closedAfter) - shareThrough(entryBuilderFees, closed);
    const paid = funding.filter((payment) =>
      previousClose < payment.occurredAt && payment.occurredAt <= exit.occurredAt
    );
    const realizedMicros = decimalToMicros(exit.realizedPnl);
    const venueFeesMicros = decimalToMicros(exit.venueFee) + feeShare;
    const fundingMicros = decimalToMicros(paid.reduce((sum, payment) => add(sum, payment.funding), "0"));
    const pendingReason = isZero(entryQuantity)
      ? "ENTRY_FACTS_MISSING"
      : !entryValued || !USD_FEE_ASSETS.has(exit.feeAsset)
      ? "COMMISSION_UNVALUED"
      : paid.some((payment) => !USD_FEE_ASSETS.has(payment.feeAsset))
      ? "FUNDING_UNVALUED"
      : exit.occurredAt > fundingKnownThrough
      ? "FUNDING_PENDING"
      : null;
    portions.push({
      venueRef: exit.venueRef,
      closedAt: exit.occurredAt,
      status: pendingReason ? "PENDING" : "CONFIRMED",
      pendingReason,
      realizedMicros,
      venueFeesMicros,
      fundingMicros,
      builderFeesMicros: decimalToMicros(exit.builderFee) + builderShare,
      netMicros: realizedMicros - venueFeesMicros + fundingMicros,
      // The entry fills are counted with the first portion, so a statement counts each fact once.
      factsCount: 1 + paid.length + (index === 0 ? entries.length : 0),
    });
    closed = closedAfter;
    previousClose = exit.occurredAt;
  }
  return portions;
}
