/**
 * `GET /operator/v1/health` on a real service (libSQL file, venue
 * simulators): OK once every job has run; DEGRADED by a dead webhook delivery
 * and an old backlog, driven through the real retry schedule to a local
 * endpoint that fails; DEGRADED with one venue unreachable and DOWN with
 * both, as venue calls observe them through the simulators' faults; the
 * operator token required; every answer parsed by the schema the operator
 * document declares.
 */
import assert from "node:assert/strict";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { call, createPartner, expectError, expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import { runJob, venueFault } from "../faults/_venue_faults.ts";
import { hooked } from "../webhooks/webhook_fixture.ts";
import { JOBS } from "../../jobs/registry.ts";
import { OperatorHealth } from "../../routes/operator/health.ts";

const MINUTE_MS = 60_000;

async function health(env: TestEnv) {
  return OperatorHealth.strict().parse(await expectJson(await operator(env, "GET", "/operator/v1/health"), 200));
}

async function runEveryJob(env: TestEnv) {
  for (const job of JOBS) await runJob(env, job.name);
}

Deno.test("operator health: a fresh QA service whose jobs have run once is OK, and says what it read", async () => {
  const env = await startTestEnv();
  try {
    const before = await health(env);
    assert.equal(before.status, "DEGRADED");
    assert.deepEqual(before.problems, JOBS.map((job) => `JOB_NEVER_RAN:${job.name}`), "no job has run yet");

    await runEveryJob(env);
    const glance = await health(env);
    assert.deepEqual([glance.status, glance.problems], ["OK", []]);
    assert.equal(glance.database.reachable, true);
    assert.equal(typeof glance.database.latencyMs, "number");
    assert.deepEqual(
      glance.jobs!.map((job) => [job.job, job.lastRun?.outcome, job.late]),
      JOBS.map((job) => [job.name, "SUCCEEDED", false]),
    );
    assert.deepEqual(glance.webhooks, { backlog: 0, oldestPendingAgeMs: null, dead: 0 });
    assert.deepEqual(glance.venues!.map((venue) => [venue.providerId, venue.availability]), [
      ["VENUE_A", "AVAILABLE"],
      ["VENUE_B", "AVAILABLE"],
    ]);
    for (const venue of glance.venues!) {
      assert.ok(venue.budget.usedThisMinute <= venue.budget.limitPerMinute, `${venue.providerId} within its budget`);
    }
    assert.deepEqual(glance.builders.map((builder) => [builder.providerId, builder.status]), [["VENUE_B", "ACCRUING"]]);
    assert.deepEqual(glance.payments, { pending: 0, confirming: 0, inReview: 0 });
    assert.deepEqual(glance.obligations, { overdue: 0 });
  } finally {
    await env.close();
  }
});

Deno.test("operator health: without the operator token, 401; the document declares it, its example parses", async () => {
  const env = await startTestEnv();
  try {
    await expectError(await call(env, "GET", "/operator/v1/health"), 401, "OPERATOR_UNAUTHORIZED");
    await expectError(
      await call(env, "GET", "/operator/v1/health", { headers: { authorization: "Bearer not-the-token" } }),
      401,
      "OPERATOR_UNAUTHORIZED",
    );
    const document = await expectJson(await call(env, "GET", "/operator/v1/openapi.json"), 200);
    const declared = document.paths["/operator/v1/health"].get;
    assert.equal(declared.operationId, "getOperatorHealth");
    OperatorHealth.strict().parse(declared.responses[200].content["application/json"].example);
  } finally {
    await env.close();
  }
});

/** A local endpoint that answers every push with a 500. */
function failingEndpoint() {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    await request.body?.cancel();
    return new Response("down", { status: 500 });
  });
  return { url: `http://127.0.0.1:${server.addr.port}/hooks`, close: () => server.shutdown() };
}

Deno.test("operator health: a dead delivery and a pending one older than 15 minutes make it DEGRADED", async () => {
  const env = await startTestEnv({ env: { OUTBOUND_ALLOW_LOOPBACK: "true" } });
  const endpoint = failingEndpoint();
  const deliver = () => runJob(env, "webhook-delivery");
  try {
    const partner = await hooked(env, "hooked", endpoint.url);
    await partner.newClient("ana");
    assert.equal((await deliver()).retrying, 1);
    // Its eleven retries, each as soon as it is due (the longest wait is six hours): the twelfth failure is final.
    for (let attempt = 2; attempt <= 12; attempt++) {
      env.clock.freeze(env.clock.now() + 6 * 60 * MINUTE_MS);
      assert.equal((await deliver()).attempted, 1);
    }
    await partner.newClient("bia");
    assert.equal((await deliver()).retrying, 1);
    env.clock.freeze(env.clock.now() + 16 * MINUTE_MS);

    await runEveryJob(env);
    const glance = await health(env);
    assert.equal(glance.status, "DEGRADED");
    assert.deepEqual(glance.problems, ["WEBHOOK_DEAD", "WEBHOOK_BACKLOG"]);
    assert.deepEqual(glance.webhooks, { backlog: 1, oldestPendingAgeMs: 16 * MINUTE_MS, dead: 1 });

    const [dead] = (await partner.deliveries()).filter((delivery: { status: string }) => delivery.status === "DEAD");
    await expectJson(await operator(env, "POST", `/operator/v1/webhook-deliveries/${dead.deliveryId}/resend`), 200);
    assert.deepEqual((await health(env)).problems, ["WEBHOOK_BACKLOG"], "resent: no longer dead, pending again");
  } finally {
    await endpoint.close();
    await env.close();
  }
});

async function marketsOf(partner: TestPartner, providerId: string) {
  return await partner.call("GET", `/v1/markets?providerId=${providerId}`);
}

Deno.test("operator health: one venue unreachable is DEGRADED, both DOWN, as venue calls observe them", async () => {
  const env = await startTestEnv();
  try {
    await runEveryJob(env);
    const partner = await createPartner(env);
    assert.equal((await health(env)).status, "OK");

    await venueFault(env, "venueA", "DOWN");
    await expectError(await marketsOf(partner, "VENUE_A"), 503, "PROVIDER_DOWN");
    const oneDown = await health(env);
    assert.deepEqual([oneDown.status, oneDown.problems], ["DEGRADED", ["VENUE_UNAVAILABLE:VENUE_A"]]);
    assert.deepEqual(oneDown.venues!.map((venue) => venue.availability), ["UNAVAILABLE", "AVAILABLE"]);

    await venueFault(env, "venueB", "DOWN");
    await expectError(await marketsOf(partner, "VENUE_B"), 503, "PROVIDER_DOWN");
    const bothDown = await health(env);
    assert.equal(bothDown.status, "DOWN");
    assert.equal(bothDown.problems[0], "ALL_VENUES_UNAVAILABLE");

    await venueFault(env, "venueA", "NONE");
    await venueFault(env, "venueB", "NONE");
    await expectJson(await marketsOf(partner, "VENUE_A"), 200);
    await expectJson(await marketsOf(partner, "VENUE_B"), 200);
    assert.deepEqual((await health(env)).problems, [], "back once calls succeed again");
  } finally {
    await env.close();
  }
});
