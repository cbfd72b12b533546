/**
 * Period-close job: every performance period that has ended is closed into
 * statements and fee obligations, and late facts become adjustments
 * (domain/performance/close_periods.ts), in bounded pages.
 */
import type { Ctx, Deps } from "../domain/context.ts";
import { closePeriods } from "../domain/performance/close_periods.ts";

export async function runPeriodClose(deps: Deps) {
  const ctx: Ctx = { ...deps, actor: { kind: "system", job: "period-close" }, requestId: "job-period-close" };
  return { ...await closePeriods(ctx) };
}
