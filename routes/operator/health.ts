/** Operator: the service at a glance, for a monitor to poll (`GET /operator/v1/health`). */
import { routeGroup } from "../route_group.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { readHealthSnapshot } from "../../domain/operations/health_snapshot.ts";
import { JOBS } from "../../jobs/registry.ts";
import { operatorCtx } from "../env.ts";
import { json, shaped } from "../respond.ts";
import { operatorErrors, ProviderIdSchema, RequestId } from "../schemas/common.ts";

const Instant = z.string().openapi({ description: "ISO 8601, UTC.", example: "2026-11-26T22:41:00.000Z" });
const Count = z.number().int().min(0).openapi({ description: "Counted up to 10,000: past it, at least that many." });
const Milliseconds = z.number().int().min(0);

const BuilderHealth = z.object({
  providerId: ProviderIdSchema,
  address: z.string().openapi({ description: "The platform's builder beneficiary (lowercase)." }),
  mode: z.string().nullable().openapi({ description: "Its mode at the venue; null when it could not be read." }),
  accruesFees: z.boolean().nullable().openapi({ description: "Whether builder fees accrue in that mode." }),
  status: z.enum(["ACCRUING", "NOT_ACCRUING", "UNKNOWN"]).openapi({
    description: "As in GET /operator/v1/providers, but from the adapter's one-minute cache (a poll reads the venue " +
      "at most once a minute). NOT_ACCRUING and UNKNOWN refuse paid openings (entry gate 9).",
  }),
});

export const OperatorHealth = z.object({
  status: z.enum(["OK", "DEGRADED", "DOWN"]).openapi({
    description: "DOWN: nothing can work (DATABASE_UNREACHABLE, ALL_VENUES_UNAVAILABLE). DEGRADED: it works, " +
      "but one of `problems` needs a person or will soon. OK: no problem.",
  }),
  problems: z.array(z.string()).openapi({
    description: "Why the status is not OK, each a code or `CODE:subject`: DATABASE_UNREACHABLE, DATABASE_SLOW " +
      "(select 1 over 500 ms), JOB_NEVER_RAN:<job>, JOB_LATE:<job> (not started for more than two periods), " +
      "JOB_FAILED:<job> (its last run failed or its process died), WEBHOOK_DEAD (deliveries wait for a resend), " +
      "WEBHOOK_BACKLOG (a pending delivery older than 15 minutes), ALL_VENUES_UNAVAILABLE, " +
      "VENUE_UNAVAILABLE:<provider>, VENUE_BUDGET_SPENT:<provider> (no request weight left this minute), " +
      "BUILDER_NOT_ACCRUING:<provider>, BUILDER_UNKNOWN:<provider>, PAYMENTS_IN_REVIEW.",
    example: ["WEBHOOK_DEAD", "VENUE_UNAVAILABLE:VENUE_A"],
  }),
  checkedAt: Instant,
  database: z.object({
    reachable: z.boolean(),
    latencyMs: Milliseconds.nullable().openapi({ description: "Round trip of one `select 1` on the read connection." }),
  }),
  jobs: z.array(z.object({
    job: z.string(),
    schedule: z.string().openapi({ description: "Its cron schedule (UTC)." }),
    periodMs: Milliseconds,
    lastRun: z.object({
      startedAt: Instant,
      finishedAt: Instant.nullable(),
      outcome: z.enum(["RUNNING", "SUCCEEDED", "FAILED", "ABANDONED"]).openapi({
        description: "ABANDONED: its process died (lease ran out) before it finished.",
      }),
    }).nullable().openapi({
      description: "Its latest run, scheduled or manual, on any instance; null if none (kept two days).",
    }),
    sinceLastStartMs: Milliseconds.nullable().openapi({ description: "Wall-clock time since that run started." }),
    late: z.boolean().openapi({ description: "Not started for more than two periods." }),
  })).nullable().openapi({ description: "Every scheduled job; null when the database did not answer." }),
  webhooks: z.object({
    backlog: Count.openapi({ description: "Deliveries PENDING (not delivered yet, still retried)." }),
    oldestPendingAgeMs: Milliseconds.nullable().openapi({
      description: "Age of the oldest PENDING delivery (service clock); null with none.",
    }),
    dead: Count.openapi({
      description: "Deliveries DEAD after twelve attempts: each waits for the operator's resend.",
    }),
  }).nullable(),
  venues: z.array(z.object({
    providerId: ProviderIdSchema,
    availability: z.enum(["AVAILABLE", "UNAVAILABLE"]).openapi({
      description: "Reachability as this instance's venue calls last observed it.",
    }),
    budget: z.object({
      egress: z.string().openapi({ description: "The egress (EGRESS_ID) whose weight is counted." }),
      usedThisMinute: z.number().int().min(0).openapi({
        description: "Request weight spent or claimed by every instance of this egress in the windows counted now.",
      }),
      limitPerMinute: z.number().int().min(1).openapi({
        description: "What the egress may use in any minute (85% of the venue's published limit).",
      }),
    }),
  })).nullable(),
  builders: z.array(BuilderHealth).openapi({ description: "Builder-fee venues only (VENUE_B)." }),
  payments: z.object({
    pending: Count.openapi({ description: "Instructions issued, not paid yet (PENDING)." }),
    confirming: Count.openapi({ description: "Instructions whose transfer waits for its confirmations (SUBMITTED)." }),
    inReview: Count.openapi({ description: "Transfers held for a person (REVIEW)." }),
  }).nullable(),
  obligations: z.object({
    overdue: Count.openapi({ description: "Obligations OPEN past their due date (service clock)." }),
  }).nullable(),
  requestId: RequestId,
}).openapi("OperatorHealth");

/** A QA answer (tests/operations/operator_health_test.ts, the dead delivery's case), its jobs cut to two. */
const DEGRADED_EXAMPLE = {
  status: "DEGRADED",
  problems: ["WEBHOOK_DEAD", "WEBHOOK_BACKLOG"],
  checkedAt: "2026-11-26T22:29:42.767Z",
  database: { reachable: true, latencyMs: 0 },
  jobs: [
    {
      job: "reconcile",
      schedule: "* * * * *",
      periodMs: 60000,
      lastRun: { startedAt: "2026-11-26T22:29:42.742Z", finishedAt: "2026-11-26T22:29:42.747Z", outcome: "SUCCEEDED" },
      sinceLastStartMs: 36,
      late: false,
    },
    {
      job: "webhook-delivery",
      schedule: "* * * * *",
      periodMs: 60000,
      lastRun: { startedAt: "2026-11-26T22:29:42.765Z", finishedAt: "2026-11-26T22:29:42.767Z", outcome: "SUCCEEDED" },
      sinceLastStartMs: 13,
      late: false,
    },
  ],
  webhooks: { backlog: 1, oldestPendingAgeMs: 960000, dead: 1 },
  venues: [
    {
      providerId: "VENUE_A",
      availability: "AVAILABLE",
      budget: { egress: "default", usedThisMinute: 0, limitPerMinute: 2040 },
    },
    {
      providerId: "VENUE_B",
      availability: "AVAILABLE",
      budget: { egress: "default", usedThisMinute: 20, limitPerMinute: 1020 },
    },
  ],
  builders: [{
    providerId: "VENUE_B",
    address: "0xb0b0000000000000000000000000000000000b0b",
    mode: "default",
    accruesFees: true,
    status: "ACCRUING",
  }],
  payments: { pending: 0, confirming: 0, inReview: 0 },
  obligations: { overdue: 0 },
  requestId: "req_524f57f75b504b478c3f8494",
};

const app = routeGroup();

app.openapi(
  createRoute({
    method: "get",
    path: "/operator/v1/health",
    operationId: "getOperatorHealth",
    tags: ["Operator: health"],
    summary: "The service at a glance: database, jobs, webhooks, venues, builder, payments",
    description: "For a monitor to poll (every 15 to 60 seconds). Reads only: bounded, indexed counts, no venue call " +
      "beyond the builder's cached mode (read at the venue at most once a minute). Answers 200 whatever the " +
      "`status`; alert on `status` not OK for two polls in a row, on DOWN at once, and on any answer other " +
      "than 200 (a database that cannot be read answers 503 before this route runs). Sections that read the " +
      "database are null when it did not answer.",
    responses: {
      200: {
        description: "The snapshot, whatever its status.",
        content: { "application/json": { schema: OperatorHealth, example: DEGRADED_EXAMPLE } },
      },
      401: operatorErrors[401],
      500: operatorErrors[500],
      503: operatorErrors[503],
    },
  }),
  async (c) => {
    const snapshot = await readHealthSnapshot(operatorCtx(c), JOBS);
    return json(c, shaped(OperatorHealth, { ...snapshot, requestId: c.get("requestId") }), 200);
  },
);

export const operatorHealth = app;
