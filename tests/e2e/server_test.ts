/**
 * The service as a newcomer starts it: `deno run main.ts` in a fresh data dir,
 * QA secrets generated on first start, then real HTTP calls.
 */
import assert from "node:assert/strict";
import { freePort, MAIN, waitUntilUp, WatchedService } from "../_helpers/server.ts";

Deno.test("a spawned service starts on its embedded default and serves a partner", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-e2e-" });
  const service = new WatchedService({ PORT: String(freePort()), DATABASE_URL: `file:${dir}/data/service.db` });
  try {
    await waitUntilUp(service.url);
    const token = (await Deno.readTextFile(`${dir}/data/operator_token`)).trim();
    assert.equal((await Deno.stat(`${dir}/data/master_key`)).mode! & 0o777, 0o600);
    const created = await service.fetch("/operator/v1/partners", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        name: "E2E",
        grants: { providers: ["VENUE_A"], strategies: [], capabilities: [] },
        riskEnvelope: { maxLeverage: 5, maxMarginPerTradeUsd: 100, maxConcurrentTrades: 1, maxDailyLossUsd: 50 },
        contract: {
          subscriptionMonthlyUsd: 0,
          currency: "USDT",
          performanceFeePercent: 0.1,
          performancePeriod: "WEEKLY",
          carryPolicy: "NO_CARRY",
          dueDays: 3,
          subscriptionProviders: [],
        },
        builder: { feeTenthsBps: 0 },
        returnUrlOrigins: [],
        limits: { requestsPerMinute: 60, ordersPerMinute: 10 },
      }),
    });
    assert.equal(created.status, 201);
    const { credential } = await created.json();
    const health = await service.fetch("/v1/health", {
      headers: { authorization: `Basic ${btoa(`${credential.clientId}:${credential.clientSecret}`)}` },
    });
    assert.equal(health.status, 200);
    assert.equal((await health.json()).api, "UP");
    const simulator = await service.fetch("/sim/venue-a/fapi/v1/time");
    assert.equal(simulator.status, 200);
    await simulator.body?.cancel();
  } finally {
    await service.stop("SIGTERM"); // fails if the output holds a secret
  }
});

Deno.test("a bad configuration value stops the service with one line naming the variable", async () => {
  const bad = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-cron", MAIN],
    env: { PORT: "not-a-port", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(bad.code, 1);
  const lines = new TextDecoder().decode(bad.stderr).trim().split("\n");
  assert.equal(lines.length, 1, lines.join("\n"));
  assert.match(lines[0], /PORT/);

  const production = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-cron", MAIN],
    env: { SERVICE_ENV: "production", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(production.code, 1);
  const message = new TextDecoder().decode(production.stderr);
  assert.match(message, /OPERATOR_TOKEN/);
  assert.match(message, /MASTER_KEY/);
});
