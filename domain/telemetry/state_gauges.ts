/**
 * Gauges of what waits in the database, the figures `GET /operator/v1/health`
 * shows (domain/operations): webhook backlog and dead deliveries, payments
 * waiting, obligations overdue, and per job the time since its last run
 * started (`job.lag`, recorded at each run's start in job_runs.ts, cannot
 * show a job that stopped running; this can).
 *
 * Read when the metrics are collected, and at most once per collection
 * interval (OTEL_METRIC_EXPORT_INTERVAL, 60 s by default): two readers, or an
 * early collection, get the figures already read. With telemetry off
 * (OTEL_DENO unset) the API's meter is a no-op that never calls back, so
 * nothing is read.
 */
import { type Attributes, type Meter, metrics, type ObservableGauge } from "@opentelemetry/api";
import { wallClockNow } from "../clock.ts";
import type { Deps } from "../context.ts";
import { overdueObligations, paymentsWaiting, webhookBacklog } from "../operations/backlogs.ts";
import { jobLagOf, type ScheduledJob } from "../operations/job_lag.ts";

const DEFAULT_INTERVAL_MS = 60_000;

export interface StateGaugeOptions {
  meter?: Meter;
  /** How long figures read once are served again; default OTEL_METRIC_EXPORT_INTERVAL. */
  intervalMs?: number;
  /** Wall clock, for tests. */
  now?: () => number;
}

type Observation = [gauge: ObservableGauge, value: number, attributes?: Attributes];

function collectionIntervalMs(): number {
  const configured = Number(Deno.env.get("OTEL_METRIC_EXPORT_INTERVAL"));
  return Number.isFinite(configured) && configured > 0 ? configured : DEFAULT_INTERVAL_MS;
}

/** Registers the gauges on `meter` (the service's by default); `jobs`: jobs/registry.ts JOBS. */
export function startStateGauges(deps: Deps, jobs: readonly ScheduledJob[], options: StateGaugeOptions = {}): void {
  const meter = options.meter ?? metrics.getMeter("partner-service");
  const intervalMs = options.intervalMs ?? collectionIntervalMs();
  const now = options.now ?? wallClockNow;
  const gauges = {
    backlog: meter.createObservableGauge("webhook.backlog", {
      description: "Webhook deliveries pending (counted up to 10,000)",
      unit: "{delivery}",
    }),
    dead: meter.createObservableGauge("webhook.dead", {
      description: "Webhook deliveries dead after twelve attempts, waiting for the operator's resend",
      unit: "{delivery}",
    }),
    paymentsWaiting: meter.createObservableGauge("payments.waiting", {
      description: "Payment instructions waiting, by state: pending, confirming, review",
      unit: "{instruction}",
    }),
    overdue: meter.createObservableGauge("obligations.overdue", {
      description: "Obligations open past their due date",
      unit: "{obligation}",
    }),
    sinceLastRun: meter.createObservableGauge("job.since_last_run", {
      description: "Time since the job's last run (scheduled or manual, any instance) started",
      unit: "s",
    }),
  };

  async function read(): Promise<Observation[]> {
    const db = deps.db.read;
    const serviceNow = deps.clock.now();
    const webhooks = await webhookBacklog(db, serviceNow);
    const payments = await paymentsWaiting(db);
    const observations: Observation[] = [
      [gauges.backlog, webhooks.backlog],
      [gauges.dead, webhooks.dead],
      [gauges.paymentsWaiting, payments.pending, { state: "pending" }],
      [gauges.paymentsWaiting, payments.confirming, { state: "confirming" }],
      [gauges.paymentsWaiting, payments.inReview, { state: "review" }],
      [gauges.overdue, await overdueObligations(db, serviceNow)],
    ];
    for (const job of jobs) {
      const lag = await jobLagOf(db, job, wallClockNow());
      // A job that never ran has no figure: the health route names it JOB_NEVER_RAN.
      if (lag.sinceLastStartMs !== null) {
        observations.push([gauges.sinceLastRun, lag.sinceLastStartMs / 1000, { job: job.name }]);
      }
    }
    return observations;
  }

  let last: { at: number; figures: Promise<Observation[]> } | undefined;
  meter.addBatchObservableCallback(async (result) => {
    if (!last || now() - last.at >= intervalMs) last = { at: now(), figures: read() };
    try {
      for (const [gauge, value, attributes] of await last.figures) result.observe(gauge, value, attributes);
    } catch (error) {
      // No figure beats a wrong one; the next collection reads again.
      last = undefined;
      deps.logger.warn("state gauges: the database could not be read", { error: String(error) });
    }
  }, Object.values(gauges));
}
