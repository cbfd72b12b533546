/**
 * Intents: every venue action recorded before it is sent (spec, Intent). The
 * client order id is derived from the partner and the intent id, so the same
 * intent always names the same order at the venue, and what became of it can
 * be asked there. Entries (opensPosition) are serialized per account by the
 * account's entry lease (entry_leases.ts) and, while an entry's outcome is
 * unknown, by a partial unique index: a second entry while one is SUBMITTING
 * or UNCERTAIN is ACCOUNT_BUSY on any instance.
 */
import { and, eq, sql } from "drizzle-orm";
import { type Executor, isUniqueViolation, preparedFor, type Tx } from "../../db/client.ts";
import type { RunResult } from "../../db/connection.ts";
import { rowInsert } from "../../db/row_insert.ts";
import { intents } from "../../db/schema.ts";
import { iso, wallClockNow } from "../clock.ts";
import { ApiError } from "../errors.ts";
import { sha256Hex } from "../ids.ts";
import type { Order, OrderStatus } from "../../venues/types.ts";

export type IntentRow = typeof intents.$inferSelect;
export type IntentDraft = Omit<
  typeof intents.$inferInsert,
  "id" | "clientOrderId" | "status" | "createdAt" | "submittedAt" | "sentWallAt"
>;

/** Statuses after which nothing more happens to the order at the venue. */
export const FINAL_STATUSES = new Set(["FILLED", "CANCELED", "REJECTED", "EXPIRED", "NOT_PLACED"]);
/** Statuses whose outcome only the venue can tell: reconciliation asks it. */
export const OPEN_STATUSES = new Set(["SUBMITTING", "UNCERTAIN", "ACCEPTED", "PARTIALLY_FILLED"]);

/** 32 characters of [0-9a-z], within both venues' client order id rules (VENUE_A: ≤ 36). */
export function intentClientOrderId(partnerId: string, intentId: string): string {
  return "sv" + sha256Hex(`${partnerId}\u0000${intentId}`).slice(0, 30);
}

/**
 * Record an intent, already SUBMITTING (about to be sent) or PREPARED (only
 * validated). An entry while another entry of the account is in flight is
 * ACCOUNT_BUSY; the same intent id twice is the caller's to resolve.
 */
export async function insertIntent(
  tx: Tx,
  draft: IntentDraft,
  status: "PREPARED" | "SUBMITTING",
  now: number,
): Promise<IntentRow> {
  try {
    return await intentInsert.insert(tx, intentRowOf(draft, status, now));
  } catch (error) {
    throw accountBusyOr(error);
  }
}

/** Several SUBMITTING intents in one statement (a position's stop and targets), answered in order. */
export async function insertSubmittingIntents(tx: Tx, drafts: IntentDraft[], now: number): Promise<IntentRow[]> {
  try {
    return await intentInsert.insertFew(tx, drafts.map((draft) => intentRowOf(draft, "SUBMITTING", now)));
  } catch (error) {
    throw accountBusyOr(error);
  }
}

/**
 * A PREPARED intent (or a NOT_PLACED one, sent again) becomes SUBMITTING,
 * stamped as sent now; an entry while another of the account is in flight
 * is ACCOUNT_BUSY. Answers null when the intent moved meanwhile. The failure
 * of the earlier send (NOT_AT_VENUE, PROVIDER_DOWN) goes with it: this send's
 * outcome is the intent's truth, and a FILLED answer must not carry it.
 */
export async function resubmitIntent(tx: Tx, intent: IntentRow, now: number): Promise<IntentRow | null> {
  try {
    return await transitionIntent(
      tx,
      intent,
      { status: "SUBMITTING", submittedAt: now, sentWallAt: wallClockNow(), errorCode: null, errorMessage: null },
      now,
    );
  } catch (error) {
    throw accountBusyOr(error);
  }
}

/** A second entry in flight on one account (intents_one_entry_in_flight) is ACCOUNT_BUSY; anything else as it is. */
function accountBusyOr(error: unknown): unknown {
  return isUniqueViolation(error, "intents.client_id, intents.provider_id") ? new ApiError("ACCOUNT_BUSY") : error;
}

/** Every intent is recorded by one statement built once. */
const intentInsert = rowInsert(intents);

function intentRowOf(draft: IntentDraft, status: "PREPARED" | "SUBMITTING", now: number) {
  return {
    ...draft,
    clientOrderId: intentClientOrderId(draft.partnerId, draft.intentId),
    status,
    createdAt: now,
    submittedAt: status === "SUBMITTING" ? now : null,
    sentWallAt: status === "SUBMITTING" ? wallClockNow() : null,
  };
}

/**
 * Record a SUBMITTING intent unless it would be a second entry in flight on
 * its account (or its intent id exists): answers the row, or null, without
 * failing the caller's transaction (which goes on to record why).
 */
export async function insertSubmittingUnlessBusy(tx: Tx, draft: IntentDraft, now: number): Promise<IntentRow | null> {
  return (await intentInsert.insertUnlessConflicting(tx, intentRowOf(draft, "SUBMITTING", now))) ?? null;
}

const intentOfPartner = preparedFor((db) =>
  db.select().from(intents)
    .where(and(eq(intents.partnerId, sql.placeholder("partnerId")), eq(intents.intentId, sql.placeholder("intentId"))))
    .prepare()
);

export async function findIntent(db: Executor, partnerId: string, intentId: string): Promise<IntentRow | null> {
  return (await intentOfPartner(db).get({ partnerId, intentId })) ?? null;
}

export async function intentById(db: Executor, id: number): Promise<IntentRow> {
  const [row] = await db.select().from(intents).where(eq(intents.id, id));
  return row;
}

/** Our intent status for the order as the venue reports it. */
export function statusOfOrder(order: Order): string {
  const byVenue: Record<OrderStatus, string> = {
    NEW: "ACCEPTED",
    TRIGGER_PENDING: "ACCEPTED",
    PARTIALLY_FILLED: "PARTIALLY_FILLED",
    FILLED: "FILLED",
    CANCELED: "CANCELED",
    REJECTED: "REJECTED",
    EXPIRED: "EXPIRED",
  };
  return byVenue[order.status];
}

/**
 * Move an intent from the status it was read in to `changes` (compare-and-set
 * on status, so a sender and a reconciler never overwrite each other).
 * Answers the updated row, or null when the intent moved meanwhile.
 */
export async function transitionIntent(
  tx: Tx,
  intent: IntentRow,
  changes: Partial<IntentRow> & { status: string },
  now: number,
): Promise<IntentRow | null> {
  const finalizedAt = FINAL_STATUSES.has(changes.status) ? (intent.finalizedAt ?? now) : null;
  // Absent values are written as null, and answered so.
  const set = Object.fromEntries(Object.entries({ ...changes, finalizedAt }).map(([k, v]) => [k, v ?? null]));
  const ran = await transitionSetting(Object.keys(set))(tx).run({ ...set, id: intent.id, fromStatus: intent.status });
  // The row as written, completed here: reading it back with RETURNING costs more than the update.
  return (ran as unknown as RunResult).changes ? { ...intent, ...set } : null;
}

/**
 * The transition statement for one set of changed columns, built once: a
 * send, a fill and a failure each change their own few columns, and building
 * the statement anew costs more than running it.
 */
const transitions = new Map<string, ReturnType<typeof transitionStatement>>();

function transitionSetting(columns: string[]) {
  const key = columns.sort().join(",");
  let statement = transitions.get(key);
  if (!statement) transitions.set(key, statement = transitionStatement(columns));
  return statement;
}

function transitionStatement(columns: string[]) {
  return preparedFor((db) =>
    db.update(intents)
      .set(Object.fromEntries(columns.map((name) => [name, sql.placeholder(name)])))
      .where(and(eq(intents.id, sql.placeholder("id")), eq(intents.status, sql.placeholder("fromStatus"))))
      .prepare()
  );
}

/**
 * The venue's view of an order as intent fields. It settles the intent: an
 * error recorded while its fate was unknown (PROVIDER_DOWN of a lost answer)
 * is cleared, so a status and its error code never disagree.
 */
export function orderChanges(order: Order): Partial<IntentRow> & { status: string } {
  return {
    status: statusOfOrder(order),
    errorCode: null,
    errorMessage: null,
    orderId: order.orderId,
    executedQuantity: order.filledQuantity,
    executedPrice: order.averagePrice,
    ...(order.executionOrderId ? { executionOrderId: order.executionOrderId } : {}),
  };
}

/** The single-intent form (spec, Intent). */
export function intentView(row: IntentRow) {
  return {
    intentId: row.intentId,
    providerId: row.providerId,
    status: row.status,
    orderId: row.orderId,
    clientOrderId: row.clientOrderId,
    executedQuantity: Number(row.executedQuantity),
    executedPrice: row.executedPrice === null ? null : Number(row.executedPrice),
    errorCode: row.errorCode,
    errorMessage: row.errorMessage,
    reconciledAt: row.reconciledAt === null ? null : iso(row.reconciledAt),
  };
}

/** The list form (spec, Intent). */
export function intentListView(row: IntentRow) {
  return {
    intentId: row.intentId,
    type: row.type,
    providerId: row.providerId,
    symbol: row.symbol,
    side: row.side,
    quantity: Number(row.quantity),
    status: row.status,
    executedQuantity: Number(row.executedQuantity),
    executedPrice: row.executedPrice === null ? null : Number(row.executedPrice),
    errorCode: row.errorCode,
    createdAt: iso(row.createdAt),
    finalizedAt: row.finalizedAt === null ? null : iso(row.finalizedAt),
  };
}
