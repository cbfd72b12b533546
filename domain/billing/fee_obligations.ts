/**
 * Writing what a client owes and what it is owed back, inside the caller's
 * transaction. An obligation is created once per (client, provider, source,
 * reference), whoever writes it first, with `obligation.created`; its amount
 * never changes. A negative adjustment reduces open obligations by rows of
 * their own (one reduced to nothing is CANCELLED), and what is left becomes
 * credit, deducted from the next fee. A reduced obligation's open payment
 * instructions are superseded in the same transaction: they ask for more
 * than is owed now.
 */
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { Tx } from "../../db/client.ts";
import { rowInsert } from "../../db/row_insert.ts";
import { credits, obligationReductions, obligations } from "../../db/schema.ts";
import { DAY_MS, HOUR_MS } from "../clock.ts";
import { emitEvent, type NewEvent } from "../events/emit_event.ts";
import { newId } from "../ids.ts";
import { supersedeInstructions } from "../payments/superseded_instructions.ts";
import { QUOTE_CURRENCY } from "../setups/setup_values.ts";
import type { ProviderId } from "../../venues/types.ts";
import { GRACE_HOURS, type ObligationRow, obligationView } from "./obligation_view.ts";

export interface Parties {
  partnerId: string;
  tenantId: string | null;
  externalUserId: string;
}

export interface NewObligation {
  clientId: number;
  providerId: string;
  source: string;
  reference: string;
  amountMicros: number;
  /** The instant its due days count from (a period's end, a month's start). */
  dueFrom: number;
  dueDays: number;
  statementId: string | null;
}

const obligationInsert = rowInsert(obligations);
const creditInsert = rowInsert(credits);

/** Answers the obligation, or null when one with the same reference already exists. */
export async function createObligation(
  tx: Tx,
  parties: Parties,
  input: NewObligation,
  now: number,
): Promise<ObligationRow | null> {
  const row = await obligationInsert.insertUnlessConflicting(tx, obligationRow(parties, input, now));
  if (!row) return null;
  await emitEvent(tx, obligationCreated(parties, row, now));
  return row;
}

/**
 * Many obligations at once (a period close's page): each answered as
 * `createObligation` answers it, in order. Their `obligation.created` events
 * are the caller's to emit (`obligationCreated`), in the order of its own.
 */
export async function insertObligations(
  tx: Tx,
  drafts: { parties: Parties; input: NewObligation }[],
  now: number,
): Promise<(ObligationRow | null)[]> {
  const rows = drafts.map(({ parties, input }) => obligationInsert.completed(obligationRow(parties, input, now)));
  const written = await obligationInsert.insertAllUnlessConflicting(tx, rows);
  return rows.map((row) => written.has(row.obligationId) ? row : null);
}

export function obligationCreated(parties: Parties, row: ObligationRow, now: number): NewEvent {
  return { type: "obligation.created", ...parties, occurredAt: now, data: obligationView(row, 0, now) };
}

function obligationRow(parties: Parties, input: NewObligation, now: number) {
  const dueAt = input.dueFrom + input.dueDays * DAY_MS;
  return {
    obligationId: newId("obl", now),
    partnerId: parties.partnerId,
    clientId: input.clientId,
    providerId: input.providerId,
    source: input.source,
    reference: input.reference,
    amountMicros: input.amountMicros,
    currency: QUOTE_CURRENCY[input.providerId as ProviderId],
    status: "OPEN",
    dueAt,
    graceUntil: dueAt + GRACE_HOURS * HOUR_MS,
    statementId: input.statementId,
    createdAt: now,
  };
}

/**
 * Take `amountMicros` off the pair's open performance-fee obligations, those
 * of `preferred` first (the adjusted period's own), then the oldest. Answers
 * what could not be taken off.
 */
export async function reduceOpenObligations(
  tx: Tx,
  pair: { clientId: number; providerId: string },
  amountMicros: number,
  preferred: string[],
  statementId: string,
  now: number,
): Promise<number> {
  const open = await tx.select({
    obligationId: obligations.obligationId,
    amountMicros: obligations.amountMicros,
    reduced: reducedSoFar,
  }).from(obligations).where(and(
    eq(obligations.clientId, pair.clientId),
    eq(obligations.providerId, pair.providerId),
    eq(obligations.status, "OPEN"),
    inArray(obligations.source, PERFORMANCE_FEE_SOURCES),
  )).orderBy(asc(obligations.createdAt));
  open.sort((a, b) => Number(preferred.includes(b.obligationId)) - Number(preferred.includes(a.obligationId)));
  let left = amountMicros;
  for (const obligation of open) {
    if (left === 0) break;
    const remaining = obligation.amountMicros - obligation.reduced;
    const taken = Math.min(left, remaining);
    if (taken <= 0) continue;
    await tx.insert(obligationReductions).values({
      obligationId: obligation.obligationId,
      statementId,
      amountMicros: taken,
      createdAt: now,
    });
    const cancelled = taken === remaining;
    if (cancelled) {
      await tx.update(obligations).set({ status: "CANCELLED", settledAt: now })
        .where(and(eq(obligations.obligationId, obligation.obligationId), eq(obligations.status, "OPEN")));
    }
    await supersedeInstructions(
      tx,
      obligation.obligationId,
      cancelled ? "CANCELLED" : "REDUCED",
      now,
    );
    left -= taken;
  }
  return left;
}

/**
 * What reductions took off the obligation of the row being read (qualified by
 * hand: drizzle leaves columns of a one-table select unqualified, and the
 * subquery's own table would answer).
 */
export const reducedSoFar = sql<number>`coalesce((SELECT sum(r.amount_micros) FROM ${obligationReductions} r
  WHERE r.obligation_id = ${obligations}.obligation_id), 0)`;

/** A credit movement of the pair: positive when granted, negative when a fee used it. */
export async function recordCredit(
  tx: Tx,
  pair: { clientId: number; providerId: string },
  statementId: string,
  amountMicros: number,
  now: number,
): Promise<void> {
  await creditInsert.insert(tx, { ...pair, statementId, amountMicros, createdAt: now });
}

/** The source of a performance fee obligation, by the period it was earned in. */
export const performanceFeeSource = (period: string) => `${period}_PERFORMANCE_FEE`;
export const PERFORMANCE_FEE_SOURCES = [performanceFeeSource("WEEKLY"), performanceFeeSource("MONTHLY")];
