/**
 * The scheduled jobs, by name. Each is a thin call into a domain verb as the
 * system actor; `registerJobs` (main.ts) schedules them with Deno.cron and the
 * QA operator route `POST /operator/v1/jobs/:job/run` runs one on demand.
 * Every instance schedules every job; each tick runs on the one instance
 * that claims its slot (domain/jobs/job_runs.ts).
 */
import type { Deps } from "../domain/context.ts";
import { type JobSummary, runScheduledJob } from "../domain/jobs/job_runs.ts";
import { errorFields } from "../domain/logger.ts";
import { runAccessExpiry } from "./access_expiry.ts";
import { runBillingCycleJob } from "./billing_cycle.ts";
import { runExpiry } from "./expiry.ts";
import { runPeriodClose } from "./period_close.ts";
import { runPayments } from "./payments.ts";
import { runWebhookDelivery } from "./webhook_delivery.ts";
import { runProtectionMonitor } from "./protection_monitor.ts";
import { runReconcile } from "./reconcile.ts";

export interface Job {
  name: string;
  /** Deno.cron schedule (UTC). */
  schedule: string;
  run(deps: Deps): Promise<JobSummary>;
}

export const JOBS: Job[] = [
  { name: "expiry", schedule: "*/5 * * * *", run: runExpiry },
  { name: "reconcile", schedule: "* * * * *", run: runReconcile },
  { name: "protection-monitor", schedule: "* * * * *", run: runProtectionMonitor },
  // Boundaries fall at 00:00 UTC; a few minutes later is soon enough, and late facts are adjusted on each run.
  { name: "period-close", schedule: "*/5 * * * *", run: runPeriodClose },
  // Due dates and grace ends fall at any minute: a state change is announced within one.
  { name: "billing-cycle", schedule: "* * * * *", run: runBillingCycleJob },
  { name: "payments", schedule: "* * * * *", run: runPayments },
  // Two weeks' notice before an agent's end; its lapse is confirmed within five minutes.
  { name: "access-expiry", schedule: "*/5 * * * *", run: runAccessExpiry },
  // A backstop: the service's own sender (started in main.ts) passes every second.
  { name: "webhook-delivery", schedule: "* * * * *", run: runWebhookDelivery },
];

export function findJob(name: string): Job | undefined {
  return JOBS.find((job) => job.name === name);
}

/** Wraps every run, so a shutdown can skip new runs and wait for running ones (domain/lifecycle.ts). */
export type RunGate = (run: () => Promise<void>) => Promise<void>;

/**
 * Schedule every job; a tick runs only where it claims its slot (the others
 * skip, logged at debug); a failing run is logged and retried at its next tick.
 */
export function registerJobs(deps: Deps, gate: RunGate): void {
  for (const job of JOBS) {
    Deno.cron(job.name, job.schedule, () =>
      gate(async () => {
        try {
          const outcome = await runScheduledJob(deps, job);
          if (outcome.ran) deps.logger.info(`job ${job.name}`, { job: job.name, summary: outcome.summary });
        } catch (error) {
          deps.logger.error(`job ${job.name} failed`, { job: job.name, ...errorFields(error) });
        }
      }));
  }
}
