import assert from "node:assert/strict";
import { START, startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectError, expectJson, operator, partnerBody } from "../_helpers/http.ts";

Deno.test("operator API", async (t) => {
  const env = await startTestEnv();
  try {
    const partner = await createPartner(env, { partnerId: "acme" });

    await t.step("creates a partner whose tenantId equals its partnerId, contract version 1", async () => {
      const body = await expectJson(await operator(env, "GET", "/operator/v1/partners/acme"), 200);
      assert.equal(body.partner.tenantId, "acme");
      assert.equal(body.partner.status, "ACTIVE");
      assert.equal(body.partner.contract.version, 1);
      assert.equal(body.partner.contract.subscriptionMonthlyUsd, 49.9);
      assert.equal(body.partner.contract.performanceFeePercent, 0.2);
      assert.ok(!JSON.stringify(body).includes(partner.clientSecret));
      await expectError(
        await operator(env, "POST", "/operator/v1/partners", partnerBody({ partnerId: "acme" })),
        409,
        "VALIDATION_ERROR",
      );
      await expectError(
        await operator(
          env,
          "POST",
          "/operator/v1/partners",
          partnerBody({ returnUrlOrigins: ["http://insecure.example"] }),
        ),
        400,
        "VALIDATION_ERROR",
      );
    });

    await t.step("a contract change is a new version from the next period boundary", async () => {
      const terms = { ...partnerBody().contract, performanceFeePercent: 0.3, performancePeriod: "WEEKLY" };
      const body = await expectJson(await operator(env, "PUT", "/operator/v1/partners/acme/contract", terms), 200);
      assert.equal(body.partner.contract.version, 1);
      assert.equal(body.partner.scheduledContract.version, 2);
      assert.equal(body.partner.scheduledContract.effectiveFrom, "2026-12-01T00:00:00.000Z");
      env.clock.freeze(Date.parse("2026-12-01T00:00:00.000Z"));
      const later = await expectJson(await operator(env, "GET", "/operator/v1/partners/acme"), 200);
      assert.equal(later.partner.contract.version, 2);
      assert.equal(later.partner.contract.performanceFeePercent, 0.3);
      assert.equal(later.partner.scheduledContract, null);
      env.clock.freeze(START);
    });

    await t.step("contract suspension applies at once", async () => {
      const body = await expectJson(
        await operator(env, "POST", "/operator/v1/partners/acme/contract/suspend", { reason: "inadimplência" }),
        200,
      );
      assert.equal(body.partner.contract.suspended, true);
      await expectJson(
        await operator(env, "POST", "/operator/v1/partners/acme/contract/resume", { reason: "pago" }),
        200,
      );
    });

    await t.step("settings change with PATCH and are audited", async () => {
      const body = await expectJson(
        await operator(env, "PATCH", "/operator/v1/partners/acme", {
          limits: { requestsPerMinute: 5, ordersPerMinute: 2 },
        }),
        200,
      );
      assert.deepEqual(body.partner.limits, { requestsPerMinute: 5, ordersPerMinute: 2 });
      const audit = await env.deps.db.read.query.auditEntries.findMany();
      assert.ok(audit.some((row) => row.action === "partner.updated" && row.actor === "operator"));
    });

    await t.step("the provider real-execution flag shows in GET /v1/health", async () => {
      let health = await expectJson(await partner.call("GET", "/v1/health"), 200);
      assert.deepEqual(health.providers.map((p: { realExecution: string }) => p.realExecution), [
        "NOT_VALIDATED",
        "NOT_VALIDATED",
      ]);
      await expectJson(await operator(env, "PUT", "/operator/v1/providers/VENUE_A", { realExecution: true }), 200);
      health = await expectJson(await partner.call("GET", "/v1/health"), 200);
      assert.deepEqual(
        health.providers.find((p: { providerId: string }) => p.providerId === "VENUE_A").realExecution,
        "ENABLED",
      );
      await expectError(
        await operator(env, "PUT", "/operator/v1/providers/VENUE_X", { realExecution: true }),
        404,
        "NOT_FOUND",
      );
    });

    await t.step("strategies are published with the spec's fields", async () => {
      const strategy = {
        version: "1.2.0",
        status: "PUBLISHED",
        displayName: "Trend follow",
        summary: "Segue a tendência.",
        supportedProviders: ["VENUE_A", "VENUE_B"],
        supportedMarkets: ["BTCUSDT"],
        configurableParameters: [{ key: "lookback", type: "number", label: "Janela", min: 5, max: 50, default: 20 }],
        riskRequirements: { minLeverage: 1, maxLeverage: 5, requiresStopLoss: true },
      };
      const body = await expectJson(await operator(env, "PUT", "/operator/v1/strategies/trend-follow", strategy), 200);
      assert.equal(body.strategy.strategyId, "trend-follow");
    });

    await t.step("the QA clock can be frozen, moved and released; jobs run on demand", async () => {
      const frozen = await expectJson(
        await operator(env, "PUT", "/operator/v1/clock", { now: "2027-01-01T00:00:00Z" }),
        200,
      );
      assert.deepEqual([frozen.now, frozen.frozen], ["2027-01-01T00:00:00.000Z", true]);
      assert.equal(env.clock.now(), Date.parse("2027-01-01T00:00:00Z"));
      const run = await expectJson(await operator(env, "POST", "/operator/v1/jobs/expiry/run"), 200);
      assert.equal(run.job, "expiry");
      assert.equal(typeof run.summary.idempotencyKeysPurged, "number");
      await expectError(await operator(env, "POST", "/operator/v1/jobs/nope/run"), 404, "NOT_FOUND");
      const released = await expectJson(await operator(env, "DELETE", "/operator/v1/clock"), 200);
      assert.equal(released.frozen, false);
    });
  } finally {
    await env.close();
  }
});
