/**
 * The canonical result of each closing portion of a trade (spec, Performance
 * rules 1-3), derived once from the position's facts:
 *
 *   net = realized PnL − venue fees + funding
 *
 * where the venue fees are the closing fill's commission plus its share of
 * the entry commissions (by quantity closed), and the funding is what the
 * position paid or received up to its close that no other portion counted
 * (each fact is counted once, and the portion stores which it counted). The builder
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
import { add, cmp, div, formatDec, isZero, min, mul, sub } from "../../venues/decimal.ts";
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
  const confirmed = await tx.select({
    venueRef: performancePortions.venueRef,
    venueFeesMicros: performancePortions.venueFeesMicros,
    builderFeesMicros: performancePortions.builderFeesMicros,
    factRefs: performancePortions.factRefs,
  }).from(performancePortions).where(and(
    eq(performancePortions.clientId, account.clientId),
    eq(performancePortions.providerId, account.providerId),
    eq(performancePortions.positionId, positionId),
    eq(performancePortions.status, "CONFIRMED"),
  ));
  for (const portion of portionsOf(facts, fundingKnownThrough, confirmed)) {
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
  /** The facts the portion counts: its closing fill, the funding payments and (the first) the entry fills. */
  factRefs: string[];
  factsCount: number;
}

/** What a confirmed portion already took of its position: never taken again. */
export interface ConfirmedPortion {
  venueRef: string;
  venueFeesMicros: number;
  builderFeesMicros: number;
  factRefs: string[];
}

/**
 * The portions of one position not confirmed yet, from all its facts
 * (entries, exits, funding) and what its confirmed portions already counted.
 *
 * Each fact is counted by one portion only, whatever order the venue
 * reported them in: a funding payment goes to the first unconfirmed closing
 * fill at or after it, the entry fills to the first unconfirmed one, and
 * nothing a confirmed portion counted is counted again (a closing fill
 * reported late, dated before a confirmed one, finds that one's funding
 * taken). The entry commissions the confirmed portions did not take are
 * shared over the quantity they did not close, cumulatively in time order,
 * so every portion of a closed position adds up to them exactly.
 */
export function portionsOf(facts: Fact[], fundingKnownThrough: number, confirmed: ConfirmedPortion[]): Portion[] {
  const done = new Map(confirmed.map((portion) => [portion.venueRef, portion]));
  const counted = new Set(confirmed.flatMap((portion) => portion.factRefs));
  const entries = facts.filter((fact) => fact.role === "ENTRY");
  const exits = facts.filter((fact) => fact.role === "EXIT");
  const open = exits.filter((exit) => !done.has(exit.venueRef));
  const funding = facts.filter((fact) => fact.role === "FUNDING" && !counted.has(fact.venueRef));
  const entryQuantity = entries.reduce((sum, fill) => add(sum, fill.quantity ?? "0"), "0");
  const entryValued = entries.every((fill) => USD_FEE_ASSETS.has(fill.feeAsset));
  const closedBefore = exits.filter((exit) => done.has(exit.venueRef))
    .reduce((sum, exit) => add(sum, exit.quantity ?? "0"), "0");
  /** An entry amount in micro-units less what the confirmed portions took of it. */
  const left = (total: string, taken: (portion: ConfirmedPortion, exit: Fact) => number) =>
    exits.reduce((rest, exit) => {
      const portion = done.get(exit.venueRef);
      return portion ? rest - taken(portion, exit) : rest;
    }, decimalToMicros(total));
  const feesLeft = left(
    entries.reduce((sum, fill) => add(sum, fill.venueFee), "0"),
    (portion, exit) => portion.venueFeesMicros - decimalToMicros(exit.venueFee),
  );
  const builderLeft = left(
    entries.reduce((sum, fill) => add(sum, fill.builderFee), "0"),
    (portion, exit) => portion.builderFeesMicros - decimalToMicros(exit.builderFee),
  );
  const quantityLeft = sub(entryQuantity, closedBefore);
  /** The cumulative share of what is left of an entry amount for `closed` of the quantity left, in micro-units. */
  const shareThrough = (leftMicros: number, closed: string) =>
    cmp(quantityLeft, "0") <= 0 ? 0 : decimalToMicros(
      div(mul(formatDec({ units: BigInt(leftMicros), scale: 6 }), min(closed, quantityLeft)), quantityLeft, 6),
    );

  const portions: Portion[] = [];
  let closed = "0";
  let previousClose = -Infinity;
  for (const [index, exit] of open.entries()) {
    const closedAfter = add(closed, exit.quantity ?? "0");
    const feeShare = shareThrough(feesLeft, closedAfter) - shareThrough(feesLeft, closed);
    const builderShare = shareThrough(builderLeft, closedAfter) - shareThrough(builderLeft, closed);
    const paid = funding.filter((payment) =>
      previousClose < payment.occurredAt && payment.occurredAt <= exit.occurredAt
    );
    const countsEntries = index === 0 ? entries.filter((fill) => !counted.has(fill.venueRef)) : [];
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
    const factRefs = [exit, ...paid, ...countsEntries].map((fact) => fact.venueRef);
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
      factRefs,
      factsCount: factRefs.length,
    });
    closed = closedAfter;
    previousClose = exit.occurredAt;
  }
  return portions;
}
