/**
 * Each scheduled job's last run, as the job-run records hold it
 * (domain/jobs/job_runs.ts), and how long ago it started against its
 * schedule. A job runs in two lanes, its scheduled slots and the QA route's
 * manual runs (`manual:<job>`); either one does the job's work, so the later
 * start of the two is its last run. Starts and leases are wall-clock times.
 */
import { desc, eq, sql } from "drizzle-orm";
import { type Executor, preparedFor } from "../../db/client.ts";
import { jobRuns } from "../../db/schema.ts";
import { iso, MINUTE_MS } from "../clock.ts";
import { manualLane } from "../jobs/job_runs.ts";

/** A job not started for more than this many of its periods is late. */
export const LATE_AFTER_PERIODS = 2;

export type RunOutcome = "RUNNING" | "SUCCEEDED" | "FAILED" | "ABANDONED";

/** A job as jobs/registry.ts schedules it. */
export interface ScheduledJob {
  name: string;
  schedule: string;
}

export interface JobLag {
  job: string;
  schedule: string;
  periodMs: number;
  lastRun: { startedAt: string; finishedAt: string | null; outcome: RunOutcome } | null;
  /** Wall-clock time since the last run started; null when it never ran (runs are kept two days). */
  sinceLastStartMs: number | null;
  late: boolean;
}

/**
 * The period of a Deno.cron schedule that fires every minute or every N
 * minutes (a minute field of `*`, or `*` then `/N`; the other four fields `*`):
 * the only shapes jobs/registry.ts uses. Any other shape throws, so a job scheduled otherwise is noticed by
 * the health tests rather than judged against a wrong period.
 */
export function schedulePeriodMs(schedule: string): number {
  const [minute, ...rest] = schedule.trim().split(/\s+/);
  const every = minute === "*" ? 1 : /^\*\/([1-9][0-9]?)$/.exec(minute)?.[1];
  if (every === undefined || rest.length !== 4 || rest.some((field) => field !== "*")) {
    throw new Error(`No period known for the schedule "${schedule}"`);
  }
  return Number(every) * MINUTE_MS;
}

const latestRunOfLane = preparedFor((db) =>
  db.select({
    startedAt: jobRuns.startedAt,
    finishedAt: jobRuns.finishedAt,
    leasedUntil: jobRuns.leasedUntil,
    summary: jobRuns.summary,
  })
    .from(jobRuns).where(eq(jobRuns.job, sql.placeholder("lane"))).orderBy(desc(jobRuns.slot)).limit(1).prepare()
);

type RunRow = NonNullable<Awaited<ReturnType<ReturnType<typeof latestRunOfLane>["get"]>>>;

function outcomeOf(run: RunRow, wallNow: number): RunOutcome {
  if (run.finishedAt === null) return run.leasedUntil > wallNow ? "RUNNING" : "ABANDONED";
  // What job_runs.ts writes for a run that threw (`failed`: the error's name) or one taken over (`abandoned`);
  // a job's own summary may count failures under the same key, as a number.
  if (typeof run.summary?.failed === "string") return "FAILED";
  if (typeof run.summary?.abandoned === "string") return "ABANDONED";
  return "SUCCEEDED";
}

/** Two index reads per job (its latest row in each lane). */
export async function jobLagOf(
  db: Executor,
  job: ScheduledJob,
  wallNow: number,
): Promise<JobLag> {
  const periodMs = schedulePeriodMs(job.schedule);
  const runs = [
    await latestRunOfLane(db).get({ lane: job.name }),
    await latestRunOfLane(db).get({ lane: manualLane(job.name) }),
  ].filter((run): run is RunRow => run !== undefined);
  const last = runs.sort((a, b) => b.startedAt - a.startedAt)[0];
  const sinceLastStartMs = last ? Math.max(0, wallNow - last.startedAt) : null;
  return {
    job: job.name,
    schedule: job.schedule,
    periodMs,
    lastRun: last
      ? {
        startedAt: iso(last.startedAt),
        finishedAt: last.finishedAt === null ? null : iso(last.finishedAt),
        outcome: outcomeOf(last, wallNow),
      }
      : null,
    sinceLastStartMs,
    late: sinceLastStartMs !== null && sinceLastStartMs > LATE_AFTER_PERIODS * periodMs,
  };
}
