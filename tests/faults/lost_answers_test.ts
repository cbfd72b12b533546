/**
 * The venue does the work and its answer is lost on the way back (the
 * simulator's LOSE_RESPONSE, or a link that drops only the answers of one
 * kind of request). The service cannot know whether the order exists, so it
 * records UNCERTAIN and never sends it again; the reconcile job asks the venue
 * by client order id and completes what is missing, so the position ends
 * protected with exactly one entry and one set of protective orders.
 */
import assert from "node:assert/strict";
import { expectJson, operator } from "../_helpers/http.ts";
import { ik } from "../setup/setup_fixture.ts";
import { linkVenueA, ordersAtVenueA, protectionOf, runJob, tradingClient, venueFault } from "./_venue_faults.ts";
import { opening, signal } from "../execution/execution_fixture.ts";

Deno.test("a signal's entry whose answer is lost: UNCERTAIN, never resent; the reconcile job finds it and protects the position", async () => {
  const { env, partner, keys } = await tradingClient();
  try {
    await venueFault(env, "venueA", "LOSE_RESPONSE");
    const summary = await expectJson(await operator(env, "POST", "/operator/v1/signals", signal("lost-sig-1")), 200);
    assert.equal(summary.dispatched, 1, JSON.stringify(summary));
    const intents = await expectJson(await partner.call("GET", "/v1/users/ana/intents?status=ALL"), 200);
    assert.deepEqual(intents.intents.map((i: { status: string }) => i.status), ["UNCERTAIN"], "no leg sent yet");
    assert.equal((await ordersAtVenueA(env, keys.apiKey)).orders.length, 1, "the venue took and filled the entry");

    // The signal source retries; the reconcile job runs while the answers are still being lost.
    await expectJson(await operator(env, "POST", "/operator/v1/signals", signal("lost-sig-1")), 200);
    await venueFault(env, "venueA", "NONE");
    await runJob(env, "reconcile");
    const atVenue = await ordersAtVenueA(env, keys.apiKey);
    assert.equal(atVenue.orders.length, 1, "the entry was never sent again");
    assert.deepEqual(atVenue.algoOrders.map((o) => o.orderType).toSorted(), [
      "STOP_MARKET",
      "TAKE_PROFIT_MARKET",
      "TAKE_PROFIT_MARKET",
    ]);
    assert.deepEqual(await protectionOf(partner), ["PROTECTED"]);
    await runJob(env, "reconcile");
    assert.equal((await ordersAtVenueA(env, keys.apiKey)).algoOrders.length, 3, "a second pass adds nothing");
  } finally {
    await venueFault(env, "venueA", "NONE");
    await env.close();
  }
});

Deno.test("protective orders whose answers are lost: nothing placed twice; the reconcile job settles them and the position is PROTECTED", async () => {
  const { env, partner, keys } = await tradingClient();
  const link = linkVenueA(env);
  try {
    link.fail("POST", "/fapi/v1/algoOrder", "ANSWER_LOST");
    const executed = await expectJson(
      await partner.call("POST", "/v1/orders/execute", { body: opening({ intentId: "lost-legs-1" }), headers: ik() }),
      200,
    );
    assert.equal(executed.execution.status, "FILLED", "the entry itself was answered");
    const legs = (await expectJson(await partner.call("GET", "/v1/users/ana/intents?status=ALL"), 200)).intents
      .filter((i: { type: string }) => i.type === "STOP_LOSS" || i.type === "TAKE_PROFIT");
    assert.deepEqual(legs.map((l: { status: string }) => l.status), ["UNCERTAIN", "UNCERTAIN", "UNCERTAIN"]);
    assert.equal((await ordersAtVenueA(env, keys.apiKey)).algoOrders.length, 3, "the venue holds all three");
    assert.notDeepEqual(await protectionOf(partner), ["PROTECTED"], "not known to be protected yet");

    // The jobs run while the answers are still lost: whatever they place is lost too, so nothing may be placed.
    await runJob(env, "reconcile");
    await runJob(env, "protection-monitor");
    link.heal();
    await runJob(env, "reconcile");
    await runJob(env, "protection-monitor");
    const atVenue = await ordersAtVenueA(env, keys.apiKey);
    assert.equal(atVenue.orders.length, 1);
    assert.deepEqual(atVenue.algoOrders.map((o) => o.orderType).toSorted(), [
      "STOP_MARKET",
      "TAKE_PROFIT_MARKET",
      "TAKE_PROFIT_MARKET",
    ], "one stop and two targets: none placed twice");
    assert.deepEqual(await protectionOf(partner), ["PROTECTED"]);
  } finally {
    await link.close();
    await env.close();
  }
});
