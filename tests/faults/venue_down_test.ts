/**
 * The venue goes down around an entry. Whatever it did not take is answered
 * cleanly (503 PROVIDER_DOWN, or the entry blocked before anything is sent),
 * nothing reaches it twice, and once it is back the reconcile job brings the
 * service's records and the venue into agreement and entries trade again.
 * The simulator's record of every order it ever took is the ground truth.
 */
import assert from "node:assert/strict";
import { expectError, expectJson, operator } from "../_helpers/http.ts";
import { ik } from "../setup/setup_fixture.ts";
import { assertProtectedOnce, linkVenueA, ordersAtVenueA, runJob, tradingClient, venueFault } from "./_venue_faults.ts";
import { opening, signal } from "../execution/execution_fixture.ts";

Deno.test("venue down at the moment of a manual entry: 503 PROVIDER_DOWN, nothing at the venue; back up, the same key sends it once", async () => {
  const { env, partner, keys } = await tradingClient();
  const link = linkVenueA(env);
  const health = async () =>
    (await expectJson(await partner.call("GET", "/v1/health"), 200)).providers
      .find((p: { providerId: string }) => p.providerId === "VENUE_A").status;
  try {
    // The account and book reads pass; the order itself meets the venue's "Service Unavailable.".
    link.fail("POST", "/fapi/v1/order", "UNREACHABLE");
    const headers = ik();
    const body = opening({ intentId: "down-entry-1" });
    const refused = await expectError(
      await partner.call("POST", "/v1/orders/execute", { body, headers }),
      503,
      "PROVIDER_DOWN",
    );
    assert.doesNotMatch(refused.error.message, /fapi|Service Unavailable|http/i, "no venue internals");
    assert.deepEqual((await ordersAtVenueA(env, keys.apiKey)).orders, [], "the venue took nothing");
    const recorded = await expectJson(
      await partner.call("GET", "/v1/orders/down-entry-1?externalUserId=ana&providerId=VENUE_A"),
      200,
    );
    assert.equal(recorded.status, "NOT_PLACED", "known not taken: the same intent may be sent again");
    assert.equal(await health(), "UNAVAILABLE");

    link.heal();
    // A refusal where nothing happened freed the key: the same request now executes, once.
    const filled = await expectJson(await partner.call("POST", "/v1/orders/execute", { body, headers }), 200);
    assert.equal(filled.execution.status, "FILLED");
    const again = await expectJson(await partner.call("POST", "/v1/orders/execute", { body, headers: ik() }), 200);
    assert.equal(again.execution.orderId, filled.execution.orderId, "the same intent is answered, not resent");
    assert.equal(await health(), "AVAILABLE");

    await runJob(env, "reconcile");
    await assertProtectedOnce(env, partner, keys.apiKey);
  } finally {
    await link.close();
    await env.close();
  }
});

Deno.test("venue down during a signal fan-out: entries blocked or not placed, nothing sent twice; back up, the reconcile job converges and the next signal trades", async (t) => {
  const { env, partner, keys } = await tradingClient();
  const link = linkVenueA(env);
  try {
    await t.step("the whole venue down: the signal is refused or every entry blocked, nothing is sent", async () => {
      await venueFault(env, "venueA", "DOWN");
      try {
        const answer = await operator(env, "POST", "/operator/v1/signals", signal("down-sig-1"));
        if (answer.status === 503) {
          // The market's rules were not cached and cannot be read: the signal is refused whole, unjudged.
          await expectError(answer, 503, "PROVIDER_DOWN");
        } else {
          // With the rules cached, the book still cannot be read: each entry is refused at the entry moment.
          const summary = await expectJson(answer, 200);
          assert.equal(summary.admitted, 0, JSON.stringify(summary));
          assert.deepEqual(summary.refused, { BOOK_UNVERIFIED: 1 }, JSON.stringify(summary));
        }
      } finally {
        await venueFault(env, "venueA", "NONE");
      }
      assert.deepEqual((await ordersAtVenueA(env, keys.apiKey)).orders, []);
      const intents = await expectJson(await partner.call("GET", "/v1/users/ana/intents?status=ALL"), 200);
      assert.deepEqual(intents.intents, [], "no intent recorded");
    });

    await t.step(
      "down when the entry is sent: recorded as not placed, the same signal sends nothing more",
      async () => {
        link.fail("POST", "/fapi/v1/order", "UNREACHABLE");
        const summary = await expectJson(
          await operator(env, "POST", "/operator/v1/signals", signal("down-sig-2")),
          200,
        );
        assert.equal(summary.admitted, 1, JSON.stringify(summary));
        const intents = await expectJson(await partner.call("GET", "/v1/users/ana/intents?status=ALL"), 200);
        const entry = intents.intents.find((i: { type: string }) => i.type !== "STOP_LOSS" && i.type !== "TAKE_PROFIT");
        assert.equal(entry.status, "NOT_PLACED", JSON.stringify(intents.intents));
        assert.deepEqual((await ordersAtVenueA(env, keys.apiKey)).orders, [], "the venue took nothing");
        link.heal();
        // The same signal again (a retrying signal source) is evaluated once: nothing is sent now.
        await expectJson(await operator(env, "POST", "/operator/v1/signals", signal("down-sig-2")), 200);
        assert.deepEqual((await ordersAtVenueA(env, keys.apiKey)).orders, []);
      },
    );

    await t.step(
      "back up: the reconcile job finds nothing open, and the next signal fills and is protected",
      async () => {
        await runJob(env, "reconcile");
        const status = await expectJson(await partner.call("GET", "/v1/users/ana/execution-status"), 200);
        assert.deepEqual(status.positions, [], "no position the venue does not have");
        const automation = await expectJson(await partner.call("GET", "/v1/users/ana/automation"), 200);
        const venueA = automation.providers.find((p: { providerId: string }) => p.providerId === "VENUE_A");
        assert.equal(venueA.newEntries, "ALLOWED", JSON.stringify(venueA));

        const summary = await expectJson(
          await operator(env, "POST", "/operator/v1/signals", signal("down-sig-3")),
          200,
        );
        assert.equal(summary.dispatched, 1, JSON.stringify(summary));
        await runJob(env, "reconcile");
        await assertProtectedOnce(env, partner, keys.apiKey);
      },
    );
  } finally {
    await venueFault(env, "venueA", "NONE");
    await link.close();
    await env.close();
  }
});
