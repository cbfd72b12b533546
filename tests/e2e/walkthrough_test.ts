/**
 * The README's QA walk-through, step by step, so the README stays true: the
 * demo catalog a QA database publishes, a partner and a client, the hosted
 * page's test credentials, a previewed and acknowledged setup, an automation
 * reading ALLOWED, and the demo signal's protected trade closed by its targets.
 */
import assert from "node:assert/strict";
import { publishQaDemoCatalog } from "../../domain/qa/demo_catalog.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { call, createPartner, expectError, expectJson, operator } from "../_helpers/http.ts";

Deno.test("README walk-through: from the first calls to a protected trade", async () => {
  const env = await startTestEnv();
  try {
    assert.equal(await publishQaDemoCatalog(env.deps.db, env.clock.now()), true, "published at first start");
    assert.equal(await publishQaDemoCatalog(env.deps.db, env.clock.now()), false, "and only then");
    const strategies = await expectJson(await operator(env, "GET", "/operator/v1/strategies"), 200);
    assert.deepEqual(strategies.strategies.map((s: { strategyId: string }) => s.strategyId), ["demo-trend"]);

    // 1-3: the partner (granted demo-trend) and its client.
    const partner = await createPartner(env, {
      partnerId: "acme",
      grants: {
        providers: ["VENUE_A", "VENUE_B"],
        strategies: ["demo-trend"],
        capabilities: ["PERP_TRADING", "LEVERAGE", "STOP_LOSS", "TAKE_PROFIT", "BUILDER_FEE", "AGENT_WALLET"],
      },
      returnUrlOrigins: ["https://app.acme.example"],
    });
    await expectJson(
      await partner.call("POST", "/v1/users", {
        body: { externalUserId: "user-4821" },
        headers: { "idempotency-key": "create-user-4821" },
      }),
      201,
    );

    // 5. Real execution validated.
    await expectJson(await operator(env, "PUT", "/operator/v1/providers/VENUE_A", { realExecution: true }), 200);

    // 6. The hosted page: its test credentials button, then "Conectar conta".
    const session = await expectJson(
      await partner.call("POST", "/v1/users/user-4821/connect-sessions", {
        body: { providerId: "VENUE_A", returnUrl: "https://app.acme.example/conta" },
      }),
      201,
    );
    const token = session.connectUrl.split("#t=")[1];
    env.watchedSecrets.add("connect token", token);
    const page = await expectJson(await call(env, "POST", "/connect/api/session", { body: { token } }), 200);
    env.watchedSecrets.add("page ticket", page.ticket);
    const ticket = { authorization: `Bearer ${page.ticket}` };
    const keys = await expectJson(
      await call(env, "POST", "/connect/api/qa/test-credentials", { body: {}, headers: ticket }),
      200,
    );
    env.watchedSecrets.add("apiSecret", keys.apiSecret);
    await expectJson(await call(env, "POST", "/connect/api/api-key", { body: keys, headers: ticket }), 200);
    const connected = await expectJson(
      await partner.call("GET", `/v1/users/user-4821/connect-sessions/${session.sessionId}`),
      200,
    );
    assert.equal(connected.status, "CONNECTED");

    // 7. Never configured: PAPER, with what enabling needs.
    const fresh = await expectJson(await partner.call("GET", "/v1/users/user-4821/setup?providerId=VENUE_A"), 200);
    assert.equal(fresh.mode, "PAPER");
    assert.equal(fresh.setupStatus.issues.length, 3);

    // 8-9. Preview, then PUT with the acknowledgement (and without it, 422).
    const setup = {
      providerId: "VENUE_A",
      mode: "REAL",
      enabled: true,
      leverage: 5,
      orderSizeUsd: 200,
      maxConcurrentTrades: 1,
      maxMarginPerTradeUsd: 50,
      maxDailyLossUsd: 100,
      capitalBase: 1000,
      maxLossPerTrade: 20,
      entryTimeoutMinutes: 30,
      allowMemecoins: true,
    };
    const { safety } = await expectJson(
      await partner.call("POST", "/v1/users/user-4821/setup/preview", { body: setup }),
      200,
    );
    assert.deepEqual(safety.flags, ["MEMECOINS_ALLOWED"]);
    await expectError(
      await partner.call("PUT", "/v1/users/user-4821/setup", {
        body: setup,
        headers: { "idempotency-key": "setup-4821-0" },
      }),
      422,
      "RISK_ACK_REQUIRED",
    );
    const stored = await expectJson(
      await partner.call("PUT", "/v1/users/user-4821/setup", {
        body: { ...setup, riskAcknowledgement: { fingerprint: safety.fingerprint, codes: safety.flags } },
        headers: { "idempotency-key": "setup-4821-1" },
      }),
      200,
    );
    assert.equal(stored.setupStatus.status, "READY");
    assert.equal(stored.safety.acknowledged, true);

    // 10-11. The automation, the first reconciliation, ALLOWED.
    await expectJson(
      await partner.call("PUT", "/v1/users/user-4821/automation", {
        body: {
          providerId: "VENUE_A",
          strategyId: "demo-trend",
          enabled: true,
          risk: { leverage: 5, maxMarginPerTradeUsd: 50, maxConcurrentTrades: 1, maxDailyLossUsd: 100 },
        },
        headers: { "idempotency-key": "automation-4821-1" },
      }),
      200,
    );
    await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
    const view = await expectJson(await partner.call("GET", "/v1/users/user-4821/automation"), 200);
    assert.equal(view.providers[0].newEntries, "ALLOWED", JSON.stringify(view.providers[0]));

    // 12. The demo signal: judged, sent, filled and protected.
    const summary = await expectJson(
      await operator(env, "POST", "/operator/v1/signals", {
        signalId: "demo-0001",
        strategyId: "demo-trend",
        providerId: "VENUE_A",
        symbol: "BTCUSDT",
        side: "BUY",
        entryPrice: 65010,
        stopLossPrice: 63010,
        takeProfits: [{ price: 67010, share: 0.5 }, { price: 69010, share: 0.5 }],
        confidence: 80,
      }),
      200,
    );
    assert.deepEqual(
      [summary.evaluated, summary.admitted, summary.dispatched, summary.refused],
      [1, 1, 1, {}],
    );
    const status = await expectJson(await partner.call("GET", "/v1/users/user-4821/execution-status"), 200);
    assert.equal(status.positions[0].protection.status, "PROTECTED");

    // 13. The market runs through both targets; the reconcile job follows and closes the position.
    for (const markPrice of ["67100", "69100"]) {
      await fetch(`${env.venueUrls.venueA}/_control/markets/BTCUSDT`, {
        method: "PUT",
        body: JSON.stringify({ markPrice }),
      }).then((response) => response.body?.cancel());
      await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
    }
    const closed = await expectJson(await partner.call("GET", "/v1/users/user-4821/execution-status"), 200);
    assert.deepEqual(closed.positions, []);
    const feed = await expectJson(await partner.call("GET", "/v1/events?limit=50"), 200);
    const types = feed.events.map((event: { eventType: string }) => event.eventType);
    for (const type of ["provider.connected", "automation.updated", "position.opened", "position.closed"]) {
      assert.ok(types.includes(type), type);
    }
  } finally {
    await env.close();
  }
});
