/** Manual orders through the HTTP stack and the VENUE_A simulator: openings gated, maintenance never. */
import assert from "node:assert/strict";
import { and, eq } from "drizzle-orm";
import { intents, positions } from "../../db/schema.ts";
import { credentialsOf } from "../../domain/accounts/load_account.ts";
import { expectError, expectJson, operator } from "../_helpers/http.ts";
import { automationBody, completeSetup, ik, putAutomation, putSetup, readyClient } from "../setup/setup_fixture.ts";
import { anaAtVenueA, opening, simulatorFault } from "./execution_fixture.ts";

Deno.test("manual orders: an opening passes the gates and admission, fills, and is protected; a retry never resends", async (t) => {
  const { env, partner } = await readyClient();
  const { client, account } = await anaAtVenueA(env, partner.partnerId);
  const execute = (body: Record<string, unknown>, headers = ik()) =>
    partner.call("POST", "/v1/orders/execute", { body, headers });
  try {
    await t.step("without an enabled setup an opening is refused, maintenance is not", async () => {
      await expectError(await execute(opening()), 422, "SETUP_DISABLED");
      await expectError(await execute(opening({ orderType: "MARKET" })), 400, "VALIDATION_ERROR");
    });
    await expectJson(await putSetup(partner, completeSetup({ maxMarginPerTradeUsd: 100 })), 200);
    await expectJson(await putAutomation(partner, automationBody({ enabled: false })), 200);

    await t.step("prepare validates and sends nothing", async () => {
      const prepared = await expectJson(
        await partner.call("POST", "/v1/orders/prepare", {
          body: opening({ intentId: "manual-prep-1" }),
          headers: ik(),
        }),
        200,
      );
      assert.equal(prepared.intent.status, "PREPARED");
      assert.equal(prepared.intent.quantity, 0.003);
      const snapshot = await env.deps.venues.VENUE_A.getAccount(credentialsOf(account));
      assert.equal(snapshot.positions.length + snapshot.openOrders.length, 0);
      await expectError(
        await partner.call("POST", "/v1/orders/prepare", { body: opening({ leverage: 11 }), headers: ik() }),
        422,
        "RISK_ENVELOPE_EXCEEDED",
      );
    });

    await t.step("execute fills, protects, and a retry answers the intent", async () => {
      const headers = ik();
      const first = await expectJson(await execute(opening({ intentId: "manual-open-1" }), headers), 200);
      assert.equal(first.execution.status, "FILLED");
      assert.equal(first.execution.filledQuantity, 0.003);
      assert.equal(first.execution.requestedPrice, 65010);
      const replay = await execute(opening({ intentId: "manual-open-1" }), headers);
      assert.equal(replay.headers.get("idempotent-replayed"), "true");
      const again = await expectJson(await execute(opening({ intentId: "manual-open-1" })), 200);
      assert.equal(again.execution.orderId, first.execution.orderId, "a new key, the same intent: no second order");
      const snapshot = await env.deps.venues.VENUE_A.getAccount(credentialsOf(account));
      assert.equal(snapshot.positions[0].quantity, "0.003");
      const [position] = await env.deps.db.read.select().from(positions).where(eq(positions.clientId, client.id));
      assert.equal(position.protectionStatus, "PROTECTED");
      assert.equal(position.stopLossPrice, "63000");
      const status = await expectJson(await partner.call("GET", "/v1/users/ana/execution-status"), 200);
      assert.deepEqual(status.positions.map((p: { protection: unknown }) => p.protection), [{
        status: "PROTECTED",
        stopLossPrice: 63000,
        takeProfitPrice: 67000,
        reason: null,
      }]);
      assert.equal(status.providers[0].access.connection, "CONNECTED");
      const overview = await expectJson(await partner.call("GET", "/v1/users/ana/status"), 200);
      assert.equal(overview.openPositions, 1);
    });

    await t.step("a second opening finds the slot taken", async () => {
      await expectError(await execute(opening({ intentId: "manual-open-2" })), 422, "POSITION_COUNT_CAP");
    });

    await t.step("a partner's stop the market has already passed is refused, never executed", async () => {
      // A long's stop above the mark (65,000) would fire at once: the venue refuses it, and the service sells nothing.
      const crossed = await expectJson(
        await execute({
          externalUserId: "ana",
          type: "SET_STOP_LOSS",
          providerId: "VENUE_A",
          symbol: "BTCUSDT",
          positionSide: "BUY",
          stopLossPrice: 66000,
        }),
        200,
      );
      assert.equal(crossed.execution.status, "PROTECTION_DEGRADED");
      const snapshot = await env.deps.venues.VENUE_A.getAccount(credentialsOf(account));
      assert.equal(snapshot.positions[0].quantity, "0.003", "the position is still held");
      const stops = await env.deps.db.read.select().from(intents)
        .where(and(eq(intents.clientId, client.id), eq(intents.type, "STOP_LOSS")));
      assert.deepEqual(stops.map((leg) => [leg.status, leg.errorCode]).at(-1), ["REJECTED", "TRIGGER_CROSSED"]);
      assert.ok(stops.every((leg) => leg.orderType !== "MARKET"), "no leg executed at once");
    });

    await t.step("the stop is moved, and a suspended client can still close", async () => {
      const moved = await expectJson(
        await execute({
          externalUserId: "ana",
          type: "SET_STOP_LOSS",
          providerId: "VENUE_A",
          symbol: "BTCUSDT",
          positionSide: "BUY",
          stopLossPrice: 64000,
        }),
        200,
      );
      assert.equal(moved.execution.status, "PROTECTED");
      const stops = (await env.deps.venues.VENUE_A.listProtections(credentialsOf(account), "BTCUSDT"))
        .filter((order) => order.type === "STOP_MARKET");
      assert.deepEqual(stops.map((order) => order.triggerPrice), ["64000.00"]);

      await expectJson(await partner.call("POST", "/v1/users/ana/suspend", { body: { reason: "teste" } }), 200);
      await expectError(await execute(opening({ intentId: "manual-open-3" })), 403, "B2B_ACCESS_SUSPENDED");
      const closed = await expectJson(
        await execute({ externalUserId: "ana", type: "CLOSE_POSITION", providerId: "VENUE_A", symbol: "BTCUSDT" }),
        200,
      );
      assert.equal(closed.execution.status, "FILLED");
      await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
      const [position] = await env.deps.db.read.select().from(positions).where(eq(positions.clientId, client.id));
      assert.equal(position.status, "CLOSED");
      assert.deepEqual(await env.deps.venues.VENUE_A.listProtections(credentialsOf(account), "BTCUSDT"), []);
    });
  } finally {
    await env.close();
  }
});

Deno.test("manual orders: a lost answer executes as UNCERTAIN, and a retry of the key answers it", async () => {
  const { env, partner } = await readyClient();
  try {
    await expectJson(await putSetup(partner, completeSetup({ maxMarginPerTradeUsd: 100 })), 200);
    await simulatorFault(env, "LOSE_RESPONSE");
    const headers = ik();
    const body = opening({ intentId: "manual-lost-1" });
    const uncertain = await expectJson(await partner.call("POST", "/v1/orders/execute", { body, headers }), 200);
    assert.equal(uncertain.execution.status, "UNCERTAIN");
    await simulatorFault(env, "NONE");
    const replay = await expectJson(await partner.call("POST", "/v1/orders/execute", { body, headers }), 200);
    assert.equal(replay.execution.status, "UNCERTAIN", "the answer is final for its key: query, do not resend");
    const reconciled = await expectJson(
      await partner.call("POST", "/v1/orders/manual-lost-1/reconcile", {
        body: { externalUserId: "ana", providerId: "VENUE_A" },
        headers: ik(),
      }),
      200,
    );
    assert.equal(reconciled.intent.status, "FILLED");
    await simulatorFault(env, "DOWN");
    // An opening finds the account unreadable: entries pause, nothing is sent.
    await expectError(
      await partner.call("POST", "/v1/orders/execute", { body: opening({ intentId: "manual-down-1" }), headers: ik() }),
      422,
      "ENTRY_CIRCUIT_OPEN",
    );
    // Closing passes no gate: it goes to the venue, which does not answer.
    await expectError(
      await partner.call("POST", "/v1/orders/execute", {
        body: { externalUserId: "ana", type: "CLOSE_POSITION", providerId: "VENUE_A", symbol: "BTCUSDT" },
        headers: ik(),
      }),
      503,
      "PROVIDER_DOWN",
    );
  } finally {
    await env.close();
  }
});
