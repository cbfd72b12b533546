/**
 * What waits in the database, counted for a glance: webhook deliveries not
 * yet delivered or given up on, payment instructions waiting for money or a
 * person, obligations past due. Every count stops at COUNT_CAP rows and runs
 * on an index (see tests/operations/health_query_plans_test.ts), so a poll
 * costs the event loop the same whatever the tables hold.
 */
import { and, eq, lt, type SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Executor } from "../../db/client.ts";
import { obligations, payments, webhookDeliveries } from "../../db/schema.ts";

/** Counts stop here: past it, the figure means "at least this many". */
export const COUNT_CAP = 10_000;

/** Rows of `table` matching `where`, counted up to COUNT_CAP. */
export async function countUpTo(db: Executor, table: SQLiteTable, where: SQL | undefined): Promise<number> {
  const [{ count }] = await db.select({ count: sql<number>`count(*)` })
    .from(sql`(SELECT 1 FROM ${table} WHERE ${where} LIMIT ${COUNT_CAP})`);
  return count;
}

export interface WebhookBacklog {
  /** Deliveries PENDING (not yet delivered, still retried). */
  backlog: number;
  /** How long the oldest PENDING delivery has waited since it was made (service clock); null with none. */
  oldestPendingAgeMs: number | null;
  /** Deliveries DEAD (twelve failed attempts): they wait for the operator's resend. */
  dead: number;
}

export async function webhookBacklog(db: Executor, now: number): Promise<WebhookBacklog> {
  const pending = eq(webhookDeliveries.status, "PENDING");
  // The due index orders pending rows by their next attempt, not their age: the oldest is looked for among
  // the first COUNT_CAP of them, which is all of them unless the backlog itself is already capped.
  const [{ oldest }] = await db.select({ oldest: sql<number | null>`min(created_at)` }).from(
    sql`(SELECT ${webhookDeliveries.createdAt} AS created_at FROM ${webhookDeliveries} WHERE ${pending} LIMIT ${COUNT_CAP})`,
  );
  return {
    backlog: await countUpTo(db, webhookDeliveries, pending),
    oldestPendingAgeMs: oldest === null ? null : Math.max(0, now - oldest),
    dead: await countUpTo(db, webhookDeliveries, eq(webhookDeliveries.status, "DEAD")),
  };
}

export interface PaymentsWaiting {
  /** Instructions issued and not yet paid (PENDING). */
  pending: number;
  /** Instructions whose transfer was seen and waits for its confirmations (SUBMITTED). */
  confirming: number;
  /** Transfers held for a person (REVIEW: overpaid, arrived after the obligation was settled, reorged). */
  inReview: number;
}

export async function paymentsWaiting(db: Executor): Promise<PaymentsWaiting> {
  const withStatus = (status: string) => countUpTo(db, payments, eq(payments.status, status));
  return {
    pending: await withStatus("PENDING"),
    confirming: await withStatus("SUBMITTED"),
    inReview: await withStatus("REVIEW"),
  };
}

/** Obligations OPEN past their due date (service clock), whether or not their grace has ended. */
export function overdueObligations(db: Executor, now: number): Promise<number> {
  return countUpTo(db, obligations, and(eq(obligations.status, "OPEN"), lt(obligations.dueAt, now)));
}
