/**
 * Performance periods are UTC and half-open [start, end): WEEKLY runs Monday
 * 00:00 to the next Monday 00:00, MONTHLY day 1 00:00 to the next day 1. The
 * boundary instant belongs to the new period.
 */
import { DAY_MS } from "../clock.ts";

export type PerformancePeriod = "WEEKLY" | "MONTHLY";

export function periodStart(period: PerformancePeriod, at: number): number {
  const day = new Date(at);
  const midnight = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate());
  if (period === "MONTHLY") return Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), 1);
  const daysSinceMonday = (day.getUTCDay() + 6) % 7;
  return midnight - daysSinceMonday * DAY_MS;
}

export function nextPeriodStart(period: PerformancePeriod, at: number): number {
  const start = new Date(periodStart(period, at));
  if (period === "WEEKLY") return start.getTime() + 7 * DAY_MS;
  return Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1);
}
