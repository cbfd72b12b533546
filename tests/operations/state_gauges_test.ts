/**
 * The state gauges on a real service: after every job has run, they observe
 * the figures the health route shows (here a pending webhook delivery), and
 * a collection inside the interval serves the figures already read, while
 * the first one after it reads again. The meter is a recording stand-in for
 * Deno's (which calls back only when OTEL_DENO is on).
 */
import assert from "node:assert/strict";
import type { Attributes, BatchObservableCallback, Meter, Observable } from "@opentelemetry/api";
import { startStateGauges } from "../../domain/telemetry/state_gauges.ts";
import { JOBS } from "../../jobs/registry.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { runJob } from "../faults/_venue_faults.ts";
import { hooked } from "../webhooks/webhook_fixture.ts";

/** A meter that keeps the batch callback, and a collection that answers what it observed, by gauge name. */
function recordingMeter() {
  let callback: BatchObservableCallback | undefined;
  const meter = {
    createObservableGauge: (name: string) => ({ name }),
    addBatchObservableCallback: (registered: BatchObservableCallback) => callback = registered,
  } as unknown as Meter;
  async function collect() {
    const seen: Record<string, { value: number; attributes?: Attributes }[]> = {};
    await callback!({
      observe(gauge: Observable, value: number, attributes?: Attributes) {
        const name = (gauge as unknown as { name: string }).name;
        (seen[name] ??= []).push({ value, attributes });
      },
    });
    return seen;
  }
  return { meter, collect };
}

Deno.test("state gauges: the health figures, read at most once per interval", async () => {
  const env = await startTestEnv({ env: { OUTBOUND_ALLOW_LOOPBACK: "true" } });
  // An endpoint nothing listens on: the delivery fails and stays pending.
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${(closed.addr as Deno.NetAddr).port}/hooks`;
  closed.close();
  try {
    for (const job of JOBS) await runJob(env, job.name);
    let wallNow = 1_000_000;
    const { meter, collect } = recordingMeter();
    startStateGauges(env.deps, JOBS, { meter, intervalMs: 60_000, now: () => wallNow });

    const first = await collect();
    assert.deepEqual(first["webhook.backlog"], [{ value: 0, attributes: undefined }]);
    assert.deepEqual(first["webhook.dead"], [{ value: 0, attributes: undefined }]);
    assert.deepEqual(first["obligations.overdue"], [{ value: 0, attributes: undefined }]);
    assert.deepEqual(first["payments.waiting"].map((point) => [point.attributes?.state, point.value]), [
      ["pending", 0],
      ["confirming", 0],
      ["review", 0],
    ]);
    assert.deepEqual(first["job.since_last_run"].map((point) => point.attributes?.job), JOBS.map((job) => job.name));
    for (const point of first["job.since_last_run"]) assert.ok(point.value >= 0 && point.value < 600);

    const partner = await hooked(env, "hooked", url);
    await partner.newClient("ana");
    assert.equal((await runJob(env, "webhook-delivery")).retrying, 1);
    wallNow += 59_999;
    assert.deepEqual((await collect())["webhook.backlog"], first["webhook.backlog"], "within the interval: not read");
    wallNow += 1;
    assert.deepEqual((await collect())["webhook.backlog"], [{ value: 1, attributes: undefined }], "read again");
  } finally {
    await env.close();
  }
});
