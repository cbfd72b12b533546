/**
 * The client's credential stops working while a position is open: the
 * VENUE_A API key revoked, the venue refusing every key for a while, the
 * VENUE_B agent removed. The spec's rule: the account goes to ACCESS_LOST
 * (event `provider.access_lost`, once), new entries are blocked, maintenance
 * continues, meaning the service still tries to protect and close and only
 * the venue's refusal stops it. Nothing is sent that the venue did not ask
 * for, and a credential accepted again brings everything back.
 */
import assert from "node:assert/strict";
import type { TestEnv } from "../_helpers/env.ts";
import { expectError, expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import { connectWallet, openLink, openPage } from "../connect/connect_fixture.ts";
import { ik } from "../setup/setup_fixture.ts";
import { ordersAtVenueA, runJob, tradingClient, tradingClientB, venueFault } from "./_venue_faults.ts";
import { signalB } from "../execution/execution_fixture.ts";
import { opening, signal } from "../execution/execution_fixture.ts";

/** What a partner sees of one provider: connection, entries, maintenance, the position's protection, events. */
async function viewOf(partner: TestPartner, providerId: string) {
  const providers = await expectJson(await partner.call("GET", "/v1/users/ana/providers"), 200);
  const automation = await expectJson(await partner.call("GET", "/v1/users/ana/automation"), 200);
  const status = await expectJson(await partner.call("GET", "/v1/users/ana/execution-status"), 200);
  const events = await expectJson(await partner.call("GET", "/v1/events?limit=200"), 200);
  // deno-lint-ignore no-explicit-any
  const mine = (list: any[]) => list.find((item) => item.providerId === providerId);
  return {
    connection: mine(providers.providers).connection as string,
    eligible: mine(providers.providers).eligibleForNewEntries as boolean,
    entries: mine(automation.providers) as { newEntries: string; blockReason: string; positionMaintenance: string },
    protection: status.positions.map((p: { protection: { status: string } }) => p.protection.status) as string[],
    accessLostEvents: events.events.filter((e: { type: string; data: { providerId?: string } }) =>
      e.type === "provider.access_lost" && e.data.providerId === providerId
    ).length as number,
  };
}

async function runMaintenanceJobs(env: TestEnv) {
  await runJob(env, "reconcile");
  await runJob(env, "protection-monitor");
}

/** The spec's access-lost state, as a partner reads it. */
function assertAccessLost(view: Awaited<ReturnType<typeof viewOf>>) {
  assert.equal(view.connection, "ACCESS_LOST");
  assert.equal(view.eligible, false);
  assert.equal(view.entries.newEntries, "BLOCKED");
  assert.equal(view.entries.blockReason, "PROVIDER_ACCESS_LOST");
  assert.equal(view.entries.positionMaintenance, "CONTINUES");
  assert.deepEqual(view.protection, ["PROVIDER_ACCESS_LOST"], "the position cannot be known protected");
  assert.equal(view.accessLostEvents, 1, "provider.access_lost, once");
}

const close = (providerId: string, symbol: string) => ({
  externalUserId: "ana",
  type: "CLOSE_POSITION",
  providerId,
  symbol,
});

Deno.test("VENUE_A key revoked mid-position: ACCESS_LOST once, entries refused, closing still tried, reconnecting is RECOVERING", async () => {
  const { env, partner, keys } = await tradingClient();
  try {
    assert.equal(
      (await expectJson(await operator(env, "POST", "/operator/v1/signals", signal("rev-1")), 200)).dispatched,
      1,
    );
    assert.deepEqual((await viewOf(partner, "VENUE_A")).protection, ["PROTECTED"]);
    const before = await ordersAtVenueA(env, keys.apiKey);

    // The client revokes the key at the venue.
    await fetch(`${env.venueUrls.venueA}/_control/accounts/${keys.apiKey}`, { method: "DELETE" })
      .then((response) => response.body?.cancel());
    await runMaintenanceJobs(env);
    assertAccessLost(await viewOf(partner, "VENUE_A"));
    await runMaintenanceJobs(env);
    assert.equal((await viewOf(partner, "VENUE_A")).accessLostEvents, 1, "still lost: no second event");

    const refused = await expectJson(await operator(env, "POST", "/operator/v1/signals", signal("rev-2")), 200);
    assert.deepEqual(refused.refused, { PROVIDER_ACCESS_LOST: 1 }, JSON.stringify(refused));
    const manual = await partner.call("POST", "/v1/orders/execute", {
      body: opening({ intentId: "rev-open-1" }),
      headers: ik(),
    });
    assert.ok([403, 422].includes(manual.status), `a new manual entry is refused: ${manual.status}`);
    await manual.body?.cancel();
    // Maintenance is not blocked by the service: the close goes to the venue, which refuses the key.
    await expectError(
      await partner.call("POST", "/v1/orders/execute", { body: close("VENUE_A", "BTCUSDT"), headers: ik() }),
      422,
      "PROVIDER_CREDENTIAL_REJECTED",
    );
    const after = await ordersAtVenueA(env, keys.apiKey);
    assert.deepEqual([after.orders, after.algoOrders], [before.orders, before.algoOrders], "nothing new at the venue");

    await openLink(env, partner);
    assert.equal((await viewOf(partner, "VENUE_A")).connection, "RECOVERING", "a pending reconnection");
  } finally {
    await env.close();
  }
});

Deno.test("VENUE_A refusing every key, then accepting again: access lost and restored by the jobs, the same protective orders", async () => {
  const { env, partner, keys } = await tradingClient();
  try {
    assert.equal(
      (await expectJson(await operator(env, "POST", "/operator/v1/signals", signal("rej-1")), 200)).dispatched,
      1,
    );
    const legs = (await ordersAtVenueA(env, keys.apiKey)).algoOrders.map((o) => o.clientAlgoId).toSorted();
    assert.equal(legs.length, 3);

    await venueFault(env, "venueA", "REJECT_KEYS");
    try {
      await runMaintenanceJobs(env);
      assertAccessLost(await viewOf(partner, "VENUE_A"));
    } finally {
      await venueFault(env, "venueA", "NONE");
    }

    await runMaintenanceJobs(env);
    const back = await viewOf(partner, "VENUE_A");
    assert.equal(back.connection, "CONNECTED");
    assert.deepEqual(back.protection, ["PROTECTED"]);
    assert.notEqual(back.entries.blockReason, "PROVIDER_ACCESS_LOST");
    assert.equal(back.accessLostEvents, 1);
    const after = await ordersAtVenueA(env, keys.apiKey);
    assert.deepEqual(after.algoOrders.map((o) => o.clientAlgoId).toSorted(), legs, "the same legs, none added");
    assert.equal(after.orders.length, 1);
  } finally {
    await venueFault(env, "venueA", "NONE");
    await env.close();
  }
});

Deno.test("VENUE_B agent removed mid-position: found by the next signed action, ACCESS_LOST once and kept, entries refused, closing still tried; reconnecting restores it", async () => {
  const { env, partner, wallet } = await tradingClientB();
  const info = async (body: Record<string, unknown>) =>
    await (await fetch(`${env.venueUrls.venueB}/info`, { method: "POST", body: JSON.stringify(body) })).json();
  try {
    const opened = await expectJson(await operator(env, "POST", "/operator/v1/signals", signalB("agent-1")), 200);
    assert.equal(opened.dispatched, 1, JSON.stringify(opened));
    assert.deepEqual((await viewOf(partner, "VENUE_B")).protection, ["PROTECTED"]);
    const openOrders = (await info({ type: "frontendOpenOrders", user: wallet.address })).length;

    // The client removes the service's agent from the wallet.
    const agents = await info({ type: "extraAgents", user: wallet.address });
    assert.equal(agents.length, 1, JSON.stringify(agents));
    const removed = await fetch(`${env.venueUrls.venueB}/_control/agents/${agents[0].address}`, { method: "DELETE" });
    assert.equal(removed.status, 200, await removed.text());

    // This venue's reads go by the wallet's address: only a signed action meets the removed agent.
    // Moving the stop is maintenance: the service tries it, the venue refuses the agent's signature.
    const moveStop = {
      externalUserId: "ana",
      type: "SET_STOP_LOSS",
      providerId: "VENUE_B",
      symbol: "BTCUSDC",
      positionSide: "BUY",
      stopLossPrice: 64000,
    };
    await expectError(
      await partner.call("POST", "/v1/orders/execute", { body: moveStop, headers: ik() }),
      422,
      "PROVIDER_CREDENTIAL_REJECTED",
    );
    // The jobs' reads succeed (they need no agent) and must not take that for the agent being back.
    await runMaintenanceJobs(env);
    assertAccessLost(await viewOf(partner, "VENUE_B"));
    await runMaintenanceJobs(env);
    assertAccessLost(await viewOf(partner, "VENUE_B"));

    const refused = await expectJson(await operator(env, "POST", "/operator/v1/signals", signalB("agent-2")), 200);
    assert.deepEqual(refused.refused, { PROVIDER_ACCESS_LOST: 1 }, JSON.stringify(refused));
    await expectError(
      await partner.call("POST", "/v1/orders/execute", { body: close("VENUE_B", "BTCUSDC"), headers: ik() }),
      422,
      "PROVIDER_CREDENTIAL_REJECTED",
    );
    const held = await info({ type: "clearinghouseState", user: wallet.address });
    assert.equal(held.assetPositions.length, 1, "the position is still open at the venue");
    assert.equal((await info({ type: "frontendOpenOrders", user: wallet.address })).length, openOrders);

    // The client reconnects through the page: a new agent, approved by the wallet.
    await connectWallet((await openPage(env, partner)).request, wallet);
    await runMaintenanceJobs(env);
    const back = await viewOf(partner, "VENUE_B");
    assert.equal(back.connection, "CONNECTED");
    assert.deepEqual(back.protection, ["PROTECTED"]);
    assert.equal(back.accessLostEvents, 1);
  } finally {
    await env.close();
  }
});

Deno.test("VENUE_B refusing every agent, then accepting again: ACCESS_LOST kept while refused, restored by the jobs without reconnecting", async () => {
  const { env, partner, wallet } = await tradingClientB();
  const openOrders = async () =>
    (await (await fetch(`${env.venueUrls.venueB}/info`, {
      method: "POST",
      body: JSON.stringify({ type: "frontendOpenOrders", user: wallet.address }),
    })).json()).length;
  try {
    assert.equal(
      (await expectJson(await operator(env, "POST", "/operator/v1/signals", signalB("rej-b-1")), 200)).dispatched,
      1,
    );
    const legs = await openOrders();
    await venueFault(env, "venueB", "REJECT_KEYS");
    try {
      await expectError(
        await partner.call("POST", "/v1/orders/execute", { body: close("VENUE_B", "BTCUSDC"), headers: ik() }),
        422,
        "PROVIDER_CREDENTIAL_REJECTED",
      );
      await runMaintenanceJobs(env);
      assertAccessLost(await viewOf(partner, "VENUE_B"));
    } finally {
      await venueFault(env, "venueB", "NONE");
    }
    await runMaintenanceJobs(env);
    const back = await viewOf(partner, "VENUE_B");
    assert.equal(back.connection, "CONNECTED", "the venue confirms the agent again");
    assert.deepEqual(back.protection, ["PROTECTED"]);
    assert.equal(back.accessLostEvents, 1);
    assert.equal(await openOrders(), legs, "the same protective orders, none added");
  } finally {
    await venueFault(env, "venueB", "NONE");
    await env.close();
  }
});
