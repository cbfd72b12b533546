/**
 * The service's own instruments (names in OpenTelemetry semantic-convention
 * style, units declared). Deno exports them when `OTEL_DENO=true`; otherwise
 * the API hands out no-op instruments. Gauges read from the database live in
 * state_gauges.ts.
 *
 * Attributes stay low-cardinality: routes as patterns, venues, endpoints, job
 * names, outcomes; never ids of partners or clients (those go on spans).
 */
import { metrics } from "@opentelemetry/api";

const meter = metrics.getMeter("partner-service");

/**
 * Request latency by route pattern: Deno's own `http.server.request.duration`
 * has no `http.route` (it sees the URL, not Hono's routes).
 */
export const routeRequestDuration = meter.createHistogram("http.server.route.duration", {
  description: "Duration of HTTP requests by route pattern, method and status",
  unit: "s",
});

/** Each venue call once it ended: `outcome` is `ok` or the VenueError kind. */
export const venueRequestCount = meter.createCounter("venue.request.count", {
  description: "Venue calls by venue, endpoint and outcome",
  unit: "{request}",
});

/** Request weight spent against each venue's per-minute budget. */
export const venueBudgetUsed = meter.createCounter("venue.budget.used", {
  description: "Request weight spent from the venue's budget",
  unit: "{weight}",
});

/** Spends refused because the venue's budget of the minute was spent. */
export const venueBudgetRefused = meter.createCounter("venue.budget.refused", {
  description: "Venue calls not sent because the request weight budget was spent",
  unit: "{request}",
});

export const jobRunDuration = meter.createHistogram("job.run.duration", {
  description: "Duration of a job run by job and outcome",
  unit: "s",
});

/** How late a run started after its scheduled minute. */
export const jobLag = meter.createHistogram("job.lag", {
  description: "Start of a scheduled job run minus its slot",
  unit: "s",
});

export const fanoutDuration = meter.createHistogram("engine.fanout.duration", {
  description: "Duration of a signal's fan-out to the admitted accounts",
  unit: "s",
});

/** Seconds since `startedMs` (performance.now()). */
export function secondsSince(startedMs: number): number {
  return (performance.now() - startedMs) / 1000;
}
