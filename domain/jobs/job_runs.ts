/**
 * One runner per job across the instances. Every self-hosted instance
 * schedules every job (Deno.cron), so each tick first claims its slot in
 * `job_runs`: the instance whose insert of (job, slot) wins runs the job; the
 * others skip. Deno Deploy's Deno.cron already fires once per deployment; the
 * claim costs it one insert and keeps a self-hosted fleet honest.
 *
 * A run holds a wall-clock lease that it renews while it works, and at most
 * one run of a job is live at a time: a tick that finds a live run of its job
 * skips (Deno.cron never overlaps a job inside one process; this extends that
 * to the fleet). A run whose owner died (its lease ran out unfinished) is not
 * run again for its slot: the next slot's claim marks it abandoned and does
 * the work, since every job derives what to do from the database's current
 * state (open intents, due obligations, pending deliveries, period cursors)
 * rather than from the tick it was meant for. Marking it abandoned fences the
 * dead owner: its late renewals and its finish name its token and an
 * unfinished row, so a process that wakes after the takeover cannot write
 * over the record. (The job's own writes are not fenced by the token: each job
 * claims its work row by row and is safe beside another run of itself, as it
 * always had to be beside the QA route; the lease saves duplicate work.)
 *
 * Slots only grow per job (a late tick for a slot older than the latest row
 * is skipped: a newer run already did its work), so the only row that can be
 * unfinished is the job's latest, and every check is one index read.
 *
 * Manual runs (QA, `POST /operator/v1/jobs/:job/run`) claim in a lane of
 * their own, `manual:<job>`: a scheduled run's row never blocks them, and two
 * at once (on two instances) run one after the other. Their lease is short,
 * so a caller waits seconds, not a minute, behind a manual run whose process
 * was killed.
 *
 * Leases run on the wall clock: they measure whether a process is alive, not
 * business time, which the QA test clock may freeze or move by days.
 */
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { type Database, preparedFor, type Tx, withTransaction } from "../../db/client.ts";
import { jobRuns } from "../../db/schema.ts";
import { DAY_MS, iso, MINUTE_MS, wallClockNow } from "../clock.ts";
import { errorType, inSpan } from "../telemetry/tracing.ts";
import { jobLag, jobRunDuration, secondsSince } from "../telemetry/metrics.ts";
import type { Deps } from "../context.ts";
import { ApiError } from "../errors.ts";
import { randomToken } from "../ids.ts";
import { LeaseRenewal } from "../lease_renewal.ts";

/** A scheduled run's lease; renewed three times per lease, so only a process silent this long loses it. */
export const JOB_LEASE_MS = 30_000;
/** A manual run's lease: short, so the next caller waits little behind a killed one. */
export const MANUAL_LEASE_MS = 3_000;
/** Between two claims of a manual run waiting for another one to finish. */
const MANUAL_RETRY_MS = 100;
/** How long a manual run waits for another manual run of its job before answering a conflict. */
export const MANUAL_WAIT_MS = 120_000;
/** Runs older than this are deleted, at most PRUNE_BATCH per claim that wins. */
export const JOB_RUN_RETENTION_MS = 2 * DAY_MS;
const PRUNE_BATCH = 100;

export type JobSummary = Record<string, number | string>;

/** A job as the scheduler knows it (jobs/registry.ts). */
export interface RunnableJob {
  name: string;
  run(deps: Deps): Promise<JobSummary>;
}

/** Why a tick did not run: its slot was taken, a run of the job is live, or a newer slot already ran. */
export type SkipReason = "CLAIMED" | "RUNNING" | "SUPERSEDED";

export type JobRunOutcome =
  | { ran: true; slot: number; summary: JobSummary; recorded: boolean }
  | { ran: false; slot: number; reason: SkipReason };

/** The scheduled slot of a tick: its wall-clock instant floored to the minute, the same on every instance. */
export function minuteSlot(wallMs: number): number {
  return Math.floor(wallMs / MINUTE_MS) * MINUTE_MS;
}

/** The lane manual runs of `job` claim in. */
export function manualLane(job: string): string {
  return `manual:${job}`;
}

const latestRunOf = preparedFor((db) =>
  db.select({
    slot: jobRuns.slot,
    owner: jobRuns.owner,
    leasedUntil: jobRuns.leasedUntil,
    finishedAt: jobRuns.finishedAt,
  }).from(jobRuns).where(eq(jobRuns.job, sql.placeholder("job")))
    .orderBy(desc(jobRuns.slot)).limit(1).prepare()
);

const ownedRun = and(
  eq(jobRuns.job, sql.placeholder("job")),
  eq(jobRuns.slot, sql.placeholder("slot")),
  eq(jobRuns.owner, sql.placeholder("owner")),
  isNull(jobRuns.finishedAt),
);

const finishRun = preparedFor((db) =>
  db.update(jobRuns).set({
    finishedAt: sql`${sql.placeholder("finishedAt")}`,
    leasedUntil: sql`${sql.placeholder("finishedAt")}`,
    summary: sql`${sql.placeholder("summary")}`,
  }).where(ownedRun).returning({ slot: jobRuns.slot }).prepare()
);

const renewRun = preparedFor((db) =>
  db.update(jobRuns).set({ leasedUntil: sql`${sql.placeholder("leasedUntil")}` }).where(ownedRun)
    .returning({ slot: jobRuns.slot }).prepare()
);

/** Old runs of one lane, oldest first, a bounded batch: one index range, whatever the table's size. */
const pruneRuns = preparedFor((db) =>
  db.delete(jobRuns).where(
    sql`rowid IN (SELECT rowid FROM ${jobRuns} WHERE ${jobRuns.job} = ${sql.placeholder("job")} AND ${jobRuns.slot} < ${
      sql.placeholder("before")
    } ORDER BY ${jobRuns.slot} LIMIT ${PRUNE_BATCH})`,
  ).prepare()
);

/** Where a claim goes: a fixed slot (a scheduled tick), or the next free instant of a lane (a manual run). */
type SlotChoice = { slot: number } | { next: true };

/** A won claim: the run's row, leased to this owner until `finish` (or until its process dies). */
export class JobRunClaim {
  #renewal: LeaseRenewal | undefined;

  private constructor(readonly db: Database, readonly job: string, readonly slot: number, readonly owner: string) {}

  /** Claim `job` at `choice` for `leaseMs`, or answer why not. */
  static async take(db: Database, job: string, choice: SlotChoice, leaseMs: number): Promise<JobRunClaim | SkipReason> {
    const owner = randomToken(24);
    const won = await withTransaction(db, (tx) => claimSlot(tx, job, choice, owner, leaseMs));
    if (typeof won === "string") return won;
    const claim = new JobRunClaim(db, job, won, owner);
    claim.#renewal = new LeaseRenewal(
      leaseMs,
      async (leasedUntil) =>
        !!await withTransaction(db, (tx) => renewRun(tx).get({ job, slot: won, owner, leasedUntil })),
    );
    return claim;
  }

  /**
   * Record the end of the run and its summary; answers false when this owner
   * was fenced out meanwhile (its lease ran out and a later run took over),
   * in which case nothing is written.
   */
  async finish(summary: Record<string, unknown>): Promise<boolean> {
    this.stop();
    const recorded = await withTransaction(this.db, (tx) =>
      finishRun(tx).get({
        job: this.job,
        slot: this.slot,
        owner: this.owner,
        finishedAt: wallClockNow(),
        summary: JSON.stringify(summary),
      }));
    return recorded !== undefined;
  }

  /** Stop renewing: the lease then runs out as for a crash (a test's dead owner, a process leaving). */
  stop(): void {
    this.#renewal?.stop();
    this.#renewal = undefined;
  }
}

async function claimSlot(
  tx: Tx,
  job: string,
  choice: SlotChoice,
  owner: string,
  leaseMs: number,
): Promise<number | SkipReason> {
  const wall = wallClockNow();
  const latest = await latestRunOf(tx).get({ job });
  const slot = "slot" in choice ? choice.slot : Math.max(wall, latest ? latest.slot + 1 : wall);
  if (latest) {
    if (latest.finishedAt === null && latest.leasedUntil > wall) return "RUNNING";
    if (latest.slot === slot) return "CLAIMED";
    if (latest.slot > slot) return "SUPERSEDED";
    if (latest.finishedAt === null) {
      // Its owner died (or froze past its lease): this run does its work, and its late writes are fenced out.
      await finishRun(tx).get({
        job,
        slot: latest.slot,
        owner: latest.owner,
        finishedAt: wall,
        summary: JSON.stringify({ abandoned: "lease ran out", takenOverBy: iso(slot) }),
      });
    }
  }
  await tx.insert(jobRuns).values({ job, slot, owner, leasedUntil: wall + leaseMs, startedAt: wall });
  await pruneRuns(tx).run({ job, before: wall - JOB_RUN_RETENTION_MS });
  return slot;
}

/** Run `job` now for a scheduled tick at `slot`, if this instance wins the slot; skips are logged at debug. */
export async function runScheduledJob(
  deps: Deps,
  job: RunnableJob,
  slot: number = minuteSlot(wallClockNow()),
  leaseMs: number = JOB_LEASE_MS,
): Promise<JobRunOutcome> {
  const claim = await JobRunClaim.take(deps.db, job.name, { slot }, leaseMs);
  if (!(claim instanceof JobRunClaim)) {
    deps.logger.debug(`job ${job.name} skipped at ${iso(slot)}`, { job: job.name, code: claim });
    return { ran: false, slot, reason: claim };
  }
  jobLag.record((wallClockNow() - slot) / 1000, { job: job.name });
  return { ran: true, slot, ...await runClaimed(deps, job, claim) };
}

/**
 * Run `job` now on demand (QA route): not held by scheduled runs, but after
 * any other manual run of the same job, on any instance, has finished (or its
 * owner died). Waits at most `waitMs`, then answers STATE_CONFLICT.
 */
export async function runJobNow(
  deps: Deps,
  job: RunnableJob,
  { leaseMs = MANUAL_LEASE_MS, waitMs = MANUAL_WAIT_MS } = {},
): Promise<{ slot: number; summary: JobSummary; recorded: boolean }> {
  const lane = manualLane(job.name);
  const giveUpAt = wallClockNow() + waitMs;
  for (;;) {
    const claim = await JobRunClaim.take(deps.db, lane, { next: true }, leaseMs);
    if (claim instanceof JobRunClaim) return { slot: claim.slot, ...await runClaimed(deps, job, claim) };
    if (wallClockNow() >= giveUpAt) {
      throw new ApiError("STATE_CONFLICT", { message: `O job ${job.name} já está em execução.` });
    }
    await new Promise((resolve) => setTimeout(resolve, MANUAL_RETRY_MS));
  }
}

/** A span and a duration per run, with the job's name and outcome (`ok` or the error's class). */
function runClaimed(deps: Deps, job: RunnableJob, claim: JobRunClaim) {
  const startedMs = performance.now();
  let outcome = "ok";
  return inSpan(`job ${job.name}`, { job: job.name, "job.slot": claim.slot }, async (span) => {
    try {
      return await runAndRecord(deps, job, claim);
    } catch (error) {
      outcome = errorType(error);
      throw error;
    } finally {
      span.setAttribute("job.outcome", outcome);
      jobRunDuration.record(secondsSince(startedMs), { job: job.name, outcome });
    }
  });
}

async function runAndRecord(deps: Deps, job: RunnableJob, claim: JobRunClaim) {
  let summary: JobSummary;
  try {
    // What another instance changed since this one's last request applies to the whole run.
    await deps.caches.generations.refresh(deps.db.read);
    summary = await job.run(deps);
  } catch (error) {
    // The failure is the caller's to log; the row says the run ended, and how.
    await claim.finish({ failed: error instanceof Error ? error.name : "unknown" }).catch(() => false);
    throw error;
  } finally {
    claim.stop();
  }
  const recorded = await claim.finish(summary);
  if (!recorded) {
    deps.logger.warn(`job ${job.name} finished after another run took over: its record was kept`, {
      job: job.name,
    });
  }
  return { summary, recorded };
}
