/**
 * The daily loss halt: realized results are summed per client, provider and
 * UTC day; once the day's net loss reaches `maxDailyLossUsd`, new entries halt
 * until 00:00 UTC (by the service clock, so the QA test clock moves it).
 * Execution records each realized result here, in the transaction that
 * records the fill.
 */
import { and, eq, sql } from "drizzle-orm";
import { type Executor, preparedFor, type Tx } from "../../db/client.ts";
import { dailyResults } from "../../db/schema.ts";

const DAY_MS = 86_400_000;

/** The UTC day number of an instant. */
export function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** Add one realized result (net, micro-units; a loss is negative) to its UTC day. */
export async function recordRealizedResult(
  tx: Tx,
  entry: { clientId: number; providerId: string; at: number; realizedMicros: number },
): Promise<void> {
  await tx.insert(dailyResults).values({
    clientId: entry.clientId,
    providerId: entry.providerId,
    day: utcDay(entry.at),
    realizedMicros: entry.realizedMicros,
    updatedAt: entry.at,
  }).onConflictDoUpdate({
    target: [dailyResults.clientId, dailyResults.providerId, dailyResults.day],
    set: {
      realizedMicros: sql`${dailyResults.realizedMicros} + ${entry.realizedMicros}`,
      updatedAt: entry.at,
    },
  });
}

const resultOfDay = preparedFor((db) =>
  db.select({ realizedMicros: dailyResults.realizedMicros }).from(dailyResults)
    .where(and(
      eq(dailyResults.clientId, sql.placeholder("clientId")),
      eq(dailyResults.providerId, sql.placeholder("providerId")),
      eq(dailyResults.day, sql.placeholder("day")),
    ))
    .prepare()
);

/** Today's net realized result at one provider (0 without any). */
export async function realizedToday(db: Executor, clientId: number, providerId: string, now: number) {
  return (await resultOfDay(db).get({ clientId, providerId, day: utcDay(now) }))?.realizedMicros ?? 0;
}

/** Halted: a realized loss today that reached the limit (a limit of 0 halts on the first loss). */
export function isHalted(realizedTodayMicros: number, maxDailyLossMicros: number): boolean {
  return realizedTodayMicros < 0 && -realizedTodayMicros >= maxDailyLossMicros;
}
