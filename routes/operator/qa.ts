/** Operator, QA only: the test clock and running a job now. */
import { routeGroup } from "../route_group.ts";
import { json } from "../respond.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { iso } from "../../domain/clock.ts";
import { ApiError } from "../../domain/errors.ts";
import { runJobNow } from "../../domain/jobs/job_runs.ts";
import { setTestClock } from "../../domain/qa/test_clock.ts";
import { findJob } from "../../jobs/registry.ts";
import type { AppEnv } from "../env.ts";
import { FreeObject, jsonBody, jsonContent, operatorErrors, RequestId } from "../schemas/common.ts";
import * as examples from "../schemas/examples.ts";

const tags = ["Operator: QA"];
const ClockResponse = z.object({ now: z.string(), frozen: z.boolean(), requestId: RequestId });
const app = routeGroup();

function testClockOf(c: { get(key: "deps"): AppEnv["Variables"]["deps"] }) {
  const { testClock, db } = c.get("deps");
  if (!testClock) throw new ApiError("NOT_FOUND", { message: "O relógio de teste só existe no ambiente QA." });
  return { testClock, db };
}

app.openapi(
  createRoute({
    method: "put",
    path: "/operator/v1/clock",
    operationId: "setClock",
    description: "QA only: freezes the service's business time at `now` (jobs, due dates, periods and expiries " +
      "follow it) until it is moved again or reset. Changes no data by itself; run the jobs to see its effect." +
      "\n\nErrors: 404 NOT_FOUND outside QA.",
    tags,
    summary: "Freeze business time at an instant (and move it)",
    request: {
      body: jsonBody(z.object({ now: z.iso.datetime({ offset: true }) }).strict(), { now: "2026-12-01T00:10:00.000Z" }),
    },
    responses: { 200: jsonContent(ClockResponse, "The clock.", examples.clockSet), ...operatorErrors },
  }),
  async (c) => {
    const { testClock, db } = testClockOf(c);
    const out = await setTestClock(db, testClock, Date.parse(c.req.valid("json").now));
    return json(c, { ...out, requestId: c.get("requestId") }, 200);
  },
);

app.openapi(
  createRoute({
    method: "delete",
    path: "/operator/v1/clock",
    operationId: "resetClock",
    description: "QA only: business time follows the real clock again.\n\nErrors: 404 NOT_FOUND outside QA.",
    tags,
    summary: "Return to real time",
    responses: { 200: jsonContent(ClockResponse, "The clock.", examples.clockReset), ...operatorErrors },
  }),
  async (c) => {
    const { testClock, db } = testClockOf(c);
    const out = await setTestClock(db, testClock, null);
    return json(c, { ...out, requestId: c.get("requestId") }, 200);
  },
);

app.openapi(
  createRoute({
    method: "post",
    path: "/operator/v1/jobs/{job}/run",
    operationId: "runJob",
    tags,
    summary: "Run one job now and answer with its summary",
    description: "Runs one job now (reconcile, expiry, protection-monitor, period-close, billing-cycle, payments, " +
      "access-expiry, webhook-delivery) with the effects and events of a scheduled run, and answers its summary. " +
      "Not held by the job's scheduled runs; after another manual run of the same job (on any instance) has " +
      "finished.\n\nErrors: 404 NOT_FOUND (unknown job), 409 when that other manual run is still running after " +
      "two minutes.",
    request: { params: z.object({ job: z.string().min(1).max(64) }) },
    responses: {
      200: jsonContent(
        z.object({
          job: z.string(),
          startedAt: z.string(),
          summary: FreeObject,
          requestId: RequestId,
        }),
        "Finished.",
        examples.jobRun,
      ),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const job = findJob(c.req.valid("param").job);
    if (!job) throw new ApiError("NOT_FOUND", { message: "Job desconhecido." });
    const deps = c.get("deps");
    const startedAt = iso(deps.clock.now());
    const { summary } = await runJobNow(deps, job);
    return json(c, { job: job.name, startedAt, summary, requestId: c.get("requestId") }, 200);
  },
);

export const operatorQa = app;
