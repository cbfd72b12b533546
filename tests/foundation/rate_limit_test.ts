import assert from "node:assert/strict";
import { START, startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectError, expectJson } from "../_helpers/http.ts";

Deno.test("per-partner rate limits and usage", async (t) => {
  const env = await startTestEnv();
  try {
    const partner = await createPartner(env, { limits: { requestsPerMinute: 3, ordersPerMinute: 1 } });
    const other = await createPartner(env);
    // START is 10:00:00.000: move inside the minute so Retry-After is meaningful.
    env.clock.freeze(START + 15_000);

    await t.step("the call past requestsPerMinute answers 429 RATE_LIMITED with Retry-After", async () => {
      for (let i = 0; i < 3; i++) await expectJson(await partner.call("GET", "/v1/health"), 200);
      const refused = await partner.call("GET", "/v1/health");
      assert.equal(refused.headers.get("retry-after"), "45");
      await expectError(refused, 429, "RATE_LIMITED");
    });

    await t.step("another partner has its own window", async () => {
      await expectJson(await other.call("GET", "/v1/health"), 200);
    });

    await t.step("the limit resets at the window boundary", async () => {
      env.clock.freeze(START + 59_999);
      await expectError(await partner.call("GET", "/v1/health"), 429, "RATE_LIMITED");
      env.clock.freeze(START + 60_000);
      await expectJson(await partner.call("GET", "/v1/health"), 200);
    });

    await t.step("order routes also count against ordersPerMinute", async () => {
      env.clock.freeze(START + 120_000);
      const first = await partner.call("POST", "/v1/orders/prepare", { body: {} });
      assert.notEqual(first.status, 429);
      await first.body?.cancel();
      await expectError(await partner.call("POST", "/v1/orders/prepare", { body: {} }), 429, "RATE_LIMITED");
    });

    await t.step("GET /v1/usage reports window, totals, limits and buckets", async () => {
      env.clock.freeze(START + 180_000);
      const usage = await expectJson(await partner.call("GET", "/v1/usage?minutes=5"), 200);
      assert.deepEqual(usage.window, { from: "2026-11-02T09:59:00.000Z", minutes: 5 });
      assert.deepEqual(usage.limits, { requestsPerMinute: 3, ordersPerMinute: 1 });
      assert.deepEqual(usage.buckets, [
        { window: "2026-11-02T10:00:00.000Z", kind: "REQUEST", count: 3 },
        { window: "2026-11-02T10:01:00.000Z", kind: "REQUEST", count: 1 },
        { window: "2026-11-02T10:02:00.000Z", kind: "ORDER", count: 1 },
        { window: "2026-11-02T10:02:00.000Z", kind: "REQUEST", count: 1 },
        { window: "2026-11-02T10:03:00.000Z", kind: "REQUEST", count: 1 },
      ]);
      assert.deepEqual(usage.totals, { requests: 6, orders: 1 });
      env.clock.freeze(START + 240_000);
      const byDefault = await expectJson(await partner.call("GET", "/v1/usage"), 200);
      assert.equal(byDefault.window.minutes, 60);
      await expectError(await partner.call("GET", "/v1/usage?minutes=0"), 400, "VALIDATION_ERROR");
      await expectError(await partner.call("GET", "/v1/usage?minutes=1441"), 400, "VALIDATION_ERROR");
    });
  } finally {
    await env.close();
  }
});
