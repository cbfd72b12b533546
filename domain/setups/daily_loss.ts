/**
 * The daily loss halt: realized results are summed per client, provider and
 * UTC day; once the day's net loss reaches `maxDailyLossUsd`, new entries halt
 * until 00:00 UTC (by the service clock, so the QA test clock moves it).
 * Execution records each realized result here, in the transaction that
 * records the fill. Sums are exact decimals: venue fees carry more than the
 * 6 decimals of a micro-unit, and nothing here is a charge to round.
 */
import { and, eq, sql } from "drizzle-orm";
import { type Executor, preparedFor, type Tx } from "../../db/client.ts";
import { dailyResults } from "../../db/schema.ts";
import { add, cmp, formatDec, neg } from "../../venues/decimal.ts";

const DAY_MS = 86_400_000;

/** The UTC day number of an instant. */
export function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** Add one realized result (net, a decimal string in USD; a loss is negative) to its UTC day. */
export async function recordRealizedResult(
  tx: Tx,
  entry: { clientId: number; providerId: string; at: number; realized: string },
): Promise<void> {
  const key = { clientId: entry.clientId, providerId: entry.providerId, day: utcDay(entry.at) };
  const current = await resultOfDay(tx).get(key);
  const realized = add(current?.realized ?? "0", entry.realized);
  await tx.insert(dailyResults).values({ ...key, realized, updatedAt: entry.at })
    .onConflictDoUpdate({
      target: [dailyResults.clientId, dailyResults.providerId, dailyResults.day],
      set: { realized, updatedAt: entry.at },
    });
}

const resultOfDay = preparedFor((db) =>
  db.select({ realized: dailyResults.realized }).from(dailyResults)
    .where(and(
      eq(dailyResults.clientId, sql.placeholder("clientId")),
      eq(dailyResults.providerId, sql.placeholder("providerId")),
      eq(dailyResults.day, sql.placeholder("day")),
    ))
    .prepare()
);

/** Today's net realized result at one provider ("0" without any). */
export async function realizedToday(db: Executor, clientId: number, providerId: string, now: number) {
  return (await resultOfDay(db).get({ clientId, providerId, day: utcDay(now) }))?.realized ?? "0";
}

/** Halted: a realized loss today that reached the limit (a limit of 0 halts on the first loss). */
export function isHalted(realizedToday: string, maxDailyLossMicros: number): boolean {
  const loss = neg(realizedToday);
  return cmp(loss, "0") > 0 && cmp(loss, formatDec({ units: BigInt(maxDailyLossMicros), scale: 6 })) >= 0;
}
