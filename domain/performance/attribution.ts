/**
 * Which service position a venue fact belongs to (spec, Performance rule 3:
 * a result whose origin is not attributable is ATTRIBUTION_PENDING and never
 * performance). A fill belongs to the position whose order it filled: the
 * entry intent that opened it (ENTRY), or a protective or closing intent of
 * it (EXIT), matched by the venue's order id, the order the venue placed when
 * a conditional order triggered, or our client order id. A funding payment
 * belongs to the position the account held on its symbol at that venue time.
 * A fact matching nothing stays ATTRIBUTION_PENDING, retried for a day (its order
 * may not be settled yet), then left out.
 */
import { and, eq, gt, inArray, isNull, or } from "drizzle-orm";
import type { Tx } from "../../db/client.ts";
import { intents, positions, resultFacts } from "../../db/schema.ts";
import { DAY_MS } from "../clock.ts";

export interface AccountKey {
  clientId: number;
  providerId: string;
}

type Fact = typeof resultFacts.$inferSelect;
type Attribution = { positionId: string; role: "ENTRY" | "EXIT" | "FUNDING" } | null;

/** Attribute the account's facts not yet attributed; answers the positions that gained facts. */
export async function attributeFacts(tx: Tx, account: AccountKey, now: number): Promise<Set<string>> {
  const facts = await tx.select().from(resultFacts).where(and(
    eq(resultFacts.clientId, account.clientId),
    eq(resultFacts.providerId, account.providerId),
    or(
      isNull(resultFacts.role),
      and(eq(resultFacts.role, "ATTRIBUTION_PENDING"), gt(resultFacts.recordedAt, now - DAY_MS)),
    ),
  ));
  const touched = new Set<string>();
  if (!facts.length) return touched;
  const fills = facts.filter((fact) => fact.kind === "FILL");
  const byFill = await positionsOfFills(tx, account, fills);
  for (const fill of fills) await setAttribution(tx, fill, byFill.get(fill.venueRef) ?? null, touched);
  // Funding after the fills: a position's venue-time span comes from its fills, these included.
  const funding = facts.filter((fact) => fact.kind === "FUNDING");
  if (funding.length) {
    const spans = await positionSpans(tx, account, [...new Set(funding.map((fact) => fact.symbol))]);
    for (const payment of funding) {
      const span = spans.find((s) =>
        s.symbol === payment.symbol && s.from <= payment.occurredAt && payment.occurredAt <= s.to
      );
      await setAttribution(tx, payment, span ? { positionId: span.positionId, role: "FUNDING" } : null, touched);
    }
  }
  return touched;
}

async function setAttribution(tx: Tx, fact: Fact, attribution: Attribution, touched: Set<string>) {
  if (attribution) touched.add(attribution.positionId);
  await tx.update(resultFacts)
    .set({ positionId: attribution?.positionId ?? null, role: attribution?.role ?? "ATTRIBUTION_PENDING" })
    .where(and(
      eq(resultFacts.clientId, fact.clientId),
      eq(resultFacts.providerId, fact.providerId),
      eq(resultFacts.venueRef, fact.venueRef),
    ));
}

/** Each fill's position and role, by the intent whose order it filled. */
async function positionsOfFills(tx: Tx, account: AccountKey, fills: Fact[]): Promise<Map<string, Attribution>> {
  const found = new Map<string, Attribution>();
  if (!fills.length) return found;
  const orderIds = [...new Set(fills.flatMap((fill) => fill.orderId ? [fill.orderId] : []))];
  const clientOrderIds = [...new Set(fills.flatMap((fill) => fill.clientOrderId ? [fill.clientOrderId] : []))];
  const matched = await tx.select({
    id: intents.id,
    orderId: intents.orderId,
    executionOrderId: intents.executionOrderId,
    clientOrderId: intents.clientOrderId,
    opensPosition: intents.opensPosition,
    positionId: intents.positionId,
    reduceOnly: intents.reduceOnly,
    symbol: intents.symbol,
    createdAt: intents.createdAt,
  }).from(intents).where(and(
    eq(intents.clientId, account.clientId),
    eq(intents.providerId, account.providerId),
    or(
      inArray(intents.orderId, orderIds),
      inArray(intents.executionOrderId, orderIds),
      inArray(intents.clientOrderId, clientOrderIds),
    ),
  ));
  if (!matched.length) return found;
  const held = await tx.select({
    positionId: positions.positionId,
    entryIntentId: positions.entryIntentId,
    symbol: positions.symbol,
    openedAt: positions.openedAt,
    closedAt: positions.closedAt,
  }).from(positions).where(and(
    eq(positions.clientId, account.clientId),
    eq(positions.providerId, account.providerId),
    inArray(positions.symbol, [...new Set(matched.map((intent) => intent.symbol))]),
  ));
  for (const fill of fills) {
    const intent = matched.find((i) =>
      (fill.orderId !== null && (i.orderId === fill.orderId || i.executionOrderId === fill.orderId)) ||
      (fill.clientOrderId !== null && i.clientOrderId === fill.clientOrderId)
    );
    if (!intent) continue;
    if (intent.opensPosition) {
      const position = held.find((p) => p.entryIntentId === intent.id);
      if (position) found.set(fill.venueRef, { positionId: position.positionId, role: "ENTRY" });
    } else if (intent.positionId) {
      found.set(fill.venueRef, { positionId: intent.positionId, role: "EXIT" });
    } else if (intent.reduceOnly) {
      // A partner's close names no position: it closed the one held on the symbol when it was asked for.
      const position = held.find((p) =>
        p.symbol === intent.symbol && p.openedAt <= intent.createdAt &&
        (p.closedAt === null || intent.createdAt <= p.closedAt)
      );
      if (position) found.set(fill.venueRef, { positionId: position.positionId, role: "EXIT" });
    }
  }
  return found;
}

/** The venue-time span of each position on these symbols: first entry fill to last exit fill (open: no end). */
async function positionSpans(tx: Tx, account: AccountKey, symbols: string[]) {
  const rows = await tx.select({
    positionId: positions.positionId,
    symbol: positions.symbol,
    status: positions.status,
    role: resultFacts.role,
    occurredAt: resultFacts.occurredAt,
  }).from(positions)
    .innerJoin(resultFacts, eq(resultFacts.positionId, positions.positionId))
    .where(and(
      eq(positions.clientId, account.clientId),
      eq(positions.providerId, account.providerId),
      inArray(positions.symbol, symbols),
      inArray(resultFacts.role, ["ENTRY", "EXIT"]),
    ));
  const spans = new Map<string, { positionId: string; symbol: string; from: number; to: number; open: boolean }>();
  for (const row of rows) {
    const span = spans.get(row.positionId) ??
      { positionId: row.positionId, symbol: row.symbol, from: Infinity, to: -Infinity, open: row.status === "OPEN" };
    if (row.role === "ENTRY") span.from = Math.min(span.from, row.occurredAt);
    else span.to = Math.max(span.to, row.occurredAt);
    spans.set(row.positionId, span);
  }
  return [...spans.values()].map((span) => ({ ...span, to: span.open ? Infinity : span.to }));
}
