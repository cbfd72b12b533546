/**
 * Automation and the entry gates through the HTTP stack, against the VENUE_A
 * simulator: the view from AUTOMATION_OFF to ALLOWED, every refusal of PUT
 * automation, the daily halt ending at 00:00 UTC on the test clock, a lowered
 * envelope (OUTSIDE_ENVELOPE) end to end, and pausing with a position open.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { accountStates } from "../../db/schema.ts";
import { credentialsOf, findAccount } from "../../domain/accounts/load_account.ts";
import { findClient } from "../../domain/clients/load_client.ts";
import { recordRealizedResult } from "../../domain/setups/daily_loss.ts";
import type { TestEnv } from "../_helpers/env.ts";
import { expectError, expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import {
  automationBody,
  automationOf,
  completeSetup,
  ik,
  putAutomation,
  putSetup,
  readyClient,
} from "./setup_fixture.ts";

async function events(partner: TestPartner, type: string) {
  const feed = await expectJson(await partner.call("GET", "/v1/events?limit=500"), 200);
  return feed.events.filter((event: { eventType: string }) => event.eventType === type);
}

/** A realized result of ana at VENUE_A, recorded as execution records one. */
async function realize(env: TestEnv, partner: TestPartner, realized: string) {
  const client = await findClient(env.deps.db.read, partner.partnerId, "ana");
  await withTransaction(
    env.deps.db,
    (tx) => recordRealizedResult(tx, { clientId: client!.id, providerId: "VENUE_A", at: env.clock.now(), realized }),
  );
}

Deno.test("automation: the view walks from AUTOMATION_OFF to ALLOWED, with automation.updated", async () => {
  const { env, partner } = await readyClient();
  try {
    const view = await expectJson(await partner.call("GET", "/v1/users/ana/automation"), 200);
    assert.equal(view.externalUserId, "ana");
    assert.deepEqual(view.providers.map((p: { providerId: string }) => p.providerId), ["VENUE_A", "VENUE_B"]);
    for (const entry of view.providers) {
      assert.equal(entry.newEntries, "BLOCKED");
      assert.equal(entry.blockReason, "AUTOMATION_OFF");
      assert.equal(entry.positionMaintenance, "CONTINUES");
      assert.equal(entry.mode, "PAPER");
      assert.equal("automation" in entry, false);
    }

    const put = await expectJson(
      await putAutomation(partner, automationBody({ conditions: { minConfidence: 70 } })),
      200,
    );
    assert.equal(put.automation.strategyVersion, "1.2.0");
    assert.equal(put.automation.runtime, "ROUTING");
    assert.deepEqual(put.automation.conditions, { minConfidence: 70 });
    const [updated] = await events(partner, "automation.updated");
    assert.deepEqual(updated.data, {
      providerId: "VENUE_A",
      strategyId: "trend-follow",
      strategyVersion: "1.2.0",
      enabled: true,
      risk: { leverage: 5, maxMarginPerTradeUsd: 50, maxConcurrentTrades: 1, maxDailyLossUsd: 100 },
      runtime: "ROUTING",
    });
    assert.equal((await automationOf(partner)).blockReason, "SETUP_DISABLED");

    await expectJson(await putSetup(partner, completeSetup({ enabled: false })), 200);
    assert.equal((await automationOf(partner)).blockReason, "SETUP_DISABLED");
    await expectJson(await putSetup(partner, completeSetup()), 200);
    const ready = await automationOf(partner);
    assert.equal(ready.newEntries, "ALLOWED", JSON.stringify(ready));
    assert.equal(ready.blockReason, null);
    assert.equal(ready.blockDetail, null);
    assert.equal(ready.setupEnabled, true);
    assert.equal(ready.mode, "REAL");
    assert.equal(ready.automation.strategyId, "trend-follow");
    const providers = await expectJson(await partner.call("GET", "/v1/users/ana/providers"), 200);
    assert.deepEqual(
      providers.providers.map((p: { eligibleForNewEntries: boolean }) => p.eligibleForNewEntries),
      [true, false],
      "the provider view asks the same gates",
    );

    const client = await expectJson(await partner.call("GET", "/v1/users/ana"), 200);
    assert.equal(client.automations.length, 1);
    assert.equal(client.automations[0].providerId, "VENUE_A");
    const status = await expectJson(await partner.call("GET", "/v1/users/ana/status"), 200);
    assert.deepEqual(status.automations, [{ providerId: "VENUE_A", strategyId: "trend-follow", enabled: true }]);

    // An account the engine has not reconciled since it connected: entries wait for it, as the engine would.
    const ana = await findClient(env.deps.db.read, partner.partnerId, "ana");
    await withTransaction(env.deps.db, (tx) => tx.delete(accountStates).where(eq(accountStates.clientId, ana!.id)));
    assert.equal((await automationOf(partner)).blockReason, "ENTRY_CIRCUIT_OPEN");
    await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
    assert.equal((await automationOf(partner)).newEntries, "ALLOWED");

    await expectJson(await operator(env, "PUT", "/operator/v1/providers/VENUE_A", { realExecution: false }), 200);
    assert.equal((await automationOf(partner)).blockReason, "REAL_EXECUTION_NOT_VALIDATED");
    await expectJson(await operator(env, "PUT", "/operator/v1/providers/VENUE_A", { realExecution: true }), 200);
    await expectJson(await operator(env, "DELETE", "/operator/v1/asset-policies/VENUE_A/BTCUSDT"), 200);
    assert.equal((await automationOf(partner)).blockReason, "ASSET_POLICY_REQUIRED");
  } finally {
    await env.close();
  }
});

Deno.test("automation: every refusal of PUT automation changes nothing", async (t) => {
  const { env, partner } = await readyClient();
  try {
    await expectJson(
      await operator(env, "PUT", "/operator/v1/strategies/outsider", {
        version: "1",
        status: "PUBLISHED",
        displayName: "Fora",
        summary: "",
        supportedProviders: ["VENUE_A"],
        supportedMarkets: [],
        configurableParameters: [],
        riskRequirements: {},
      }),
      200,
    );
    const refusals: [string, Record<string, unknown>, number, string][] = [
      ["strategy outside the grant", automationBody({ strategyId: "outsider" }), 403, "STRATEGY_NOT_GRANTED"],
      ["unknown strategy", automationBody({ strategyId: "nope" }), 403, "STRATEGY_NOT_GRANTED"],
      ["risk missing", { ...automationBody(), risk: undefined }, 400, "VALIDATION_ERROR"],
      [
        "risk missing when pausing",
        { ...automationBody({ enabled: false }), risk: undefined },
        400,
        "VALIDATION_ERROR",
      ],
      [
        "above the envelope",
        automationBody({
          risk: { leverage: 5, maxMarginPerTradeUsd: 600, maxConcurrentTrades: 1, maxDailyLossUsd: 1 },
        }),
        422,
        "RISK_ENVELOPE_EXCEEDED",
      ],
      [
        "above the strategy's maxLeverage",
        automationBody({ risk: { leverage: 9, maxMarginPerTradeUsd: 50, maxConcurrentTrades: 1, maxDailyLossUsd: 1 } }),
        422,
        "RISK_ENVELOPE_EXCEEDED",
      ],
      [
        "below the strategy's minimum margin",
        automationBody({ risk: { leverage: 5, maxMarginPerTradeUsd: 10, maxConcurrentTrades: 1, maxDailyLossUsd: 1 } }),
        400,
        "VALIDATION_ERROR",
      ],
      ["a symbol of another venue", automationBody({ conditions: { symbols: ["BTCUSDC"] } }), 400, "VALIDATION_ERROR"],
      [
        "a market the strategy lacks",
        automationBody({ conditions: { symbols: ["SOLUSDT"] } }),
        400,
        "VALIDATION_ERROR",
      ],
      [
        "a malformed window",
        automationBody({ conditions: { tradingWindowUtc: { from: "8:00", to: "20:00" } } }),
        400,
        "VALIDATION_ERROR",
      ],
      [
        "an empty window",
        automationBody({ conditions: { tradingWindowUtc: { from: "08:00", to: "08:00" } } }),
        400,
        "VALIDATION_ERROR",
      ],
      ["confidence above 100", automationBody({ conditions: { minConfidence: 101 } }), 400, "VALIDATION_ERROR"],
      [
        "maxConcurrentTrades above 3",
        automationBody({ risk: { ...automationBody().risk, maxConcurrentTrades: 4 } }),
        400,
        "VALIDATION_ERROR",
      ],
    ];
    for (const [name, body, status, code] of refusals) {
      await t.step(`${name}: ${status} ${code}`, async () => {
        await expectError(await putAutomation(partner, body), status, code);
        assert.equal((await automationOf(partner)).automation, undefined);
      });
    }
    await t.step("a strategy the client deselected: 403 STRATEGY_NOT_GRANTED", async () => {
      await expectJson(await partner.call("PUT", "/v1/users/ana/strategies", { body: { strategyIds: [] } }), 200);
      await expectError(await putAutomation(partner, automationBody()), 403, "STRATEGY_NOT_GRANTED");
      await expectJson(await partner.call("PUT", "/v1/users/ana/strategies", { body: { strategyIds: null } }), 200);
    });
    await t.step("a suspended client: 403 OWNER_NOT_ALLOWED, and the view says CLIENT_SUSPENDED", async () => {
      await expectJson(await partner.call("POST", "/v1/users/ana/suspend", { body: { reason: "teste" } }), 200);
      await expectError(await putAutomation(partner, automationBody()), 403, "OWNER_NOT_ALLOWED");
      assert.equal((await automationOf(partner)).blockReason, "CLIENT_SUSPENDED");
    });
    assert.equal((await events(partner, "automation.updated")).length, 0);
  } finally {
    await env.close();
  }
});

Deno.test("automation: the daily loss halt blocks entries until 00:00 UTC on the test clock", async () => {
  const { env, partner } = await readyClient();
  try {
    await expectJson(await putSetup(partner, completeSetup()), 200);
    await expectJson(await putAutomation(partner, automationBody()), 200);
    await realize(env, partner, "-60.5");
    await realize(env, partner, "20.5");
    await realize(env, partner, "-59.99999999");
    assert.equal((await automationOf(partner)).newEntries, "ALLOWED", "a net loss of 99.99999999 is below 100");
    await realize(env, partner, "-0.00000001");

    const halted = await automationOf(partner);
    assert.equal(halted.haltedToday, true);
    assert.equal(halted.blockReason, "DAILY_RISK_EXHAUSTED");
    const setup = await expectJson(await partner.call("GET", "/v1/users/ana/setup?providerId=VENUE_A"), 200);
    assert.equal(setup.risk.haltedToday, true);
    await expectError(await putSetup(partner, completeSetup()), 422, "DAILY_LOSS_HALT");
    const raise = { providerId: "VENUE_A", maxConcurrentTrades: 1, maxMarginPerTradeUsd: 50, maxDailyLossUsd: 150 };
    await expectError(
      await partner.call("PUT", "/v1/users/ana/risk", { body: raise, headers: ik() }),
      422,
      "DAILY_LOSS_HALT",
    );
    await expectJson(await putSetup(partner, completeSetup({ enabled: false })), 200);

    await expectJson(await operator(env, "PUT", "/operator/v1/clock", { now: "2026-11-02T23:59:59.999Z" }), 200);
    assert.equal((await automationOf(partner)).haltedToday, true);
    await expectJson(await operator(env, "PUT", "/operator/v1/clock", { now: "2026-11-03T00:00:00.000Z" }), 200);
    assert.equal((await automationOf(partner)).haltedToday, false);
    await expectJson(await putSetup(partner, completeSetup()), 200);
    assert.equal((await automationOf(partner)).newEntries, "ALLOWED");
  } finally {
    await env.close();
  }
});

Deno.test("automation: a lowered envelope marks the client OUTSIDE_ENVELOPE until setup and automation are lowered", async () => {
  const { env, partner } = await readyClient();
  try {
    const high = { leverage: 8, maxMarginPerTradeUsd: 50, maxConcurrentTrades: 1, maxDailyLossUsd: 100 };
    await expectJson(await putSetup(partner, completeSetup({ leverage: 8 })), 200);
    await expectJson(await putAutomation(partner, automationBody({ risk: high })), 200);
    assert.equal((await automationOf(partner)).newEntries, "ALLOWED");

    await expectJson(
      await partner.call("PUT", `/v1/tenants/${partner.partnerId}/restrictions`, {
        body: {
          envelope: { maxLeverage: 5, maxMarginPerTradeUsd: 500, maxConcurrentTrades: 3, maxDailyLossUsd: 200 },
          reason: "reduzir alavancagem",
        },
      }),
      200,
    );
    const marked = (await events(partner, "client.updated"))
      .filter((event: { data: { change: string } }) => event.data.change === "OUTSIDE_ENVELOPE");
    assert.equal(marked.length, 1);
    const blocked = await automationOf(partner);
    assert.equal(blocked.blockReason, "OUTSIDE_ENVELOPE");
    assert.match(blocked.blockDetail, /setup\.leverage \(máx\. 5\)/);
    const setup = await expectJson(await partner.call("GET", "/v1/users/ana/setup?providerId=VENUE_A"), 200);
    assert.equal(setup.leverage, 8, "nothing is changed automatically");
    assert.equal(setup.setupStatus.status, "OUTSIDE_ENVELOPE");
    assert.deepEqual(setup.setupStatus.issues.map((issue: { field: string }) => issue.field), ["leverage"]);

    await expectJson(await putSetup(partner, completeSetup({ leverage: 5 })), 200);
    const stillAutomation = await automationOf(partner);
    assert.equal(stillAutomation.blockReason, "OUTSIDE_ENVELOPE");
    assert.match(stillAutomation.blockDetail, /automation\.risk\.leverage/);
    await expectJson(await putAutomation(partner, automationBody({ risk: { ...high, leverage: 5 } })), 200);
    assert.equal((await automationOf(partner)).newEntries, "ALLOWED");
  } finally {
    await env.close();
  }
});

Deno.test("automation: a position held outside pauses entries; pausing keeps it open; a venue outage opens the circuit", async () => {
  const { env, partner } = await readyClient();
  try {
    await expectJson(await putSetup(partner, completeSetup()), 200);
    await expectJson(await putAutomation(partner, automationBody()), 200);
    const client = await findClient(env.deps.db.read, partner.partnerId, "ana");
    const account = await findAccount(env.deps.db.read, client!.id, "VENUE_A");
    await env.deps.venues.VENUE_A.placeOrder(credentialsOf(account!), {
      symbol: "BTCUSDT",
      side: "BUY",
      type: "MARKET",
      quantity: "0.002",
      reduceOnly: false,
      clientOrderId: "external-open-1",
    });
    const mixed = await automationOf(partner);
    assert.equal(mixed.blockReason, "ENTRY_CIRCUIT_OPEN", "a position opened outside the service pauses entries");
    assert.match(mixed.blockDetail, /fora da plataforma/);

    const paused = await expectJson(await putAutomation(partner, automationBody({ enabled: false })), 200);
    assert.equal(paused.automation.runtime, "DISABLED");
    assert.equal((await automationOf(partner)).blockReason, "AUTOMATION_OFF");
    const positions = await expectJson(await partner.call("GET", "/v1/users/ana/positions?providerId=VENUE_A"), 200);
    assert.equal(positions.positions.length, 1, "pausing never closes positions");
    const [, pausedEvent] = await events(partner, "automation.updated");
    assert.equal(pausedEvent.data.enabled, false);
    assert.equal(pausedEvent.data.runtime, "DISABLED");

    await expectJson(await putAutomation(partner, automationBody()), 200);
    await fetch(`${env.venueUrls.venueA}/_control/faults`, { method: "PUT", body: JSON.stringify({ mode: "DOWN" }) })
      .then((response) => response.body?.cancel());
    assert.equal((await automationOf(partner)).blockReason, "ENTRY_CIRCUIT_OPEN");
  } finally {
    await env.close();
  }
});
