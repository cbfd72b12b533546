/**
 * The operator's glance (`GET /operator/v1/health`, and the state gauges of
 * domain/telemetry/state_gauges.ts): one snapshot of the database, the jobs,
 * the webhook backlog, the venues, the builder, payments and obligations,
 * with a status and the problems that make it so.
 *
 * DOWN: nothing can work (the database does not answer, or no venue is
 * reachable). DEGRADED: the service works but something needs a person or
 * will soon (a late or failed job, dead or old webhook deliveries, a venue
 * unreachable or out of request weight, a builder earning nothing, payments
 * held for review). Overdue obligations and payments waiting are business,
 * not faults: shown, never a problem.
 */
import { sql } from "drizzle-orm";
import { iso, MINUTE_MS, wallClockNow } from "../clock.ts";
import type { Ctx } from "../context.ts";
import { PROVIDER_IDS } from "../../venues/types.ts";
import {
  overdueObligations,
  type PaymentsWaiting,
  paymentsWaiting,
  type WebhookBacklog,
  webhookBacklog,
} from "./backlogs.ts";
import { type JobLag, jobLagOf, type ScheduledJob } from "./job_lag.ts";
import { type BuilderHealth, buildersHealth, type VenueHealth, venuesHealth } from "./venue_health.ts";

export type HealthStatus = "OK" | "DEGRADED" | "DOWN";

/** A `select 1` slower than this is a problem: every request waits on the database. */
export const DATABASE_SLOW_MS = 500;
/** A pending webhook delivery older than this (four failed attempts, at 1, 2, 4 and 8 minutes) is a problem. */
export const WEBHOOK_BACKLOG_AGE_MS = 15 * MINUTE_MS;

export interface HealthSnapshot {
  status: HealthStatus;
  problems: string[];
  checkedAt: string;
  database: { reachable: boolean; latencyMs: number | null };
  /** The sections below read the database: null when it did not answer. */
  jobs: JobLag[] | null;
  webhooks: WebhookBacklog | null;
  venues: VenueHealth[] | null;
  builders: BuilderHealth[];
  payments: PaymentsWaiting | null;
  obligations: { overdue: number } | null;
}

async function databaseRoundTrip(ctx: Ctx): Promise<HealthSnapshot["database"]> {
  const started = performance.now();
  try {
    await ctx.db.read.run(sql`select 1`);
    return { reachable: true, latencyMs: Math.round(performance.now() - started) };
  } catch (error) {
    ctx.logger.warn("health: the database did not answer select 1", { error: String(error) });
    return { reachable: false, latencyMs: null };
  }
}

/** What the database holds, as one part of the snapshot. */
async function storedState(ctx: Ctx, scheduled: readonly ScheduledJob[]) {
  const now = ctx.clock.now();
  const wallNow = wallClockNow();
  const jobs: JobLag[] = [];
  for (const job of scheduled) jobs.push(await jobLagOf(ctx.db.read, job, wallNow));
  return {
    jobs,
    webhooks: await webhookBacklog(ctx.db.read, now),
    venues: await venuesHealth(ctx),
    payments: await paymentsWaiting(ctx.db.read),
    obligations: { overdue: await overdueObligations(ctx.db.read, now) },
  };
}

/** `scheduled`: the jobs to judge (jobs/registry.ts JOBS, passed in: the domain does not reach into the scheduler). */
export async function readHealthSnapshot(ctx: Ctx, scheduled: readonly ScheduledJob[]): Promise<HealthSnapshot> {
  const checkedAt = iso(wallClockNow());
  const database = await databaseRoundTrip(ctx);
  const builders = await buildersHealth(ctx);
  const stored = database.reachable ? await storedState(ctx, scheduled) : null;
  const snapshot: Omit<HealthSnapshot, "status" | "problems"> = {
    checkedAt,
    database,
    jobs: stored?.jobs ?? null,
    webhooks: stored?.webhooks ?? null,
    venues: stored?.venues ?? null,
    builders,
    payments: stored?.payments ?? null,
    obligations: stored?.obligations ?? null,
  };
  const { status, problems } = judge(snapshot, ctx);
  return { status, problems, ...snapshot };
}

/** The problems a snapshot shows, each a code (`CODE` or `CODE:subject`), and the status they add up to. */
function judge(snapshot: Omit<HealthSnapshot, "status" | "problems">, ctx: Ctx) {
  const down: string[] = [];
  const degraded: string[] = [];
  const { database, jobs, webhooks, venues, builders, payments } = snapshot;
  if (!database.reachable) down.push("DATABASE_UNREACHABLE");
  else if (database.latencyMs! > DATABASE_SLOW_MS) degraded.push("DATABASE_SLOW");
  for (const job of jobs ?? []) {
    if (!job.lastRun) degraded.push(`JOB_NEVER_RAN:${job.job}`);
    else if (job.late) degraded.push(`JOB_LATE:${job.job}`);
    if (job.lastRun?.outcome === "FAILED" || job.lastRun?.outcome === "ABANDONED") {
      degraded.push(`JOB_FAILED:${job.job}`);
    }
  }
  if (webhooks && webhooks.dead > 0) degraded.push("WEBHOOK_DEAD");
  if (webhooks && (webhooks.oldestPendingAgeMs ?? 0) > WEBHOOK_BACKLOG_AGE_MS) degraded.push("WEBHOOK_BACKLOG");
  // Reachability lives in memory: it is known even when the database is not.
  const unreachable = PROVIDER_IDS.filter((providerId) => ctx.venueAvailability.status(providerId) === "UNAVAILABLE");
  if (unreachable.length === PROVIDER_IDS.length) down.push("ALL_VENUES_UNAVAILABLE");
  else for (const providerId of unreachable) degraded.push(`VENUE_UNAVAILABLE:${providerId}`);
  for (const venue of venues ?? []) {
    if (venue.budget.usedThisMinute >= venue.budget.limitPerMinute) {
      degraded.push(`VENUE_BUDGET_SPENT:${venue.providerId}`);
    }
  }
  for (const builder of builders) {
    if (builder.status === "NOT_ACCRUING") degraded.push(`BUILDER_NOT_ACCRUING:${builder.providerId}`);
    if (builder.status === "UNKNOWN") degraded.push(`BUILDER_UNKNOWN:${builder.providerId}`);
  }
  if (payments && payments.inReview > 0) degraded.push("PAYMENTS_IN_REVIEW");
  const status: HealthStatus = down.length ? "DOWN" : degraded.length ? "DEGRADED" : "OK";
  return { status, problems: [...down, ...degraded] };
}
