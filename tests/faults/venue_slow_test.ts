/**
 * The venue answers slowly. Requests that do not need it answer meanwhile;
 * an entry whose answer does not come back before the service stops waiting
 * may still have been executed, so it is UNCERTAIN, settled only by querying
 * the venue (the reconcile job), and never sent again. The simulator's record
 * of every order it took is the ground truth.
 */
import assert from "node:assert/strict";
import { expectError, expectJson } from "../_helpers/http.ts";
import { ik } from "../setup/setup_fixture.ts";
import { assertProtectedOnce, linkVenueA, ordersAtVenueA, runJob, tradingClient, venueFault } from "./_venue_faults.ts";
import { opening } from "../execution/execution_fixture.ts";

Deno.test("a slow venue holds only the entry waiting for it: status, health and other writes answer meanwhile", async () => {
  const { env, partner, keys } = await tradingClient();
  try {
    // Every venue request waits 1 s: the entry's account read, book read and order take 3 s at least.
    await venueFault(env, "venueA", "SLOW", 1000);
    let settled = false;
    const entry = partner.call("POST", "/v1/orders/execute", {
      body: opening({ intentId: "slow-entry-1" }),
      headers: ik(),
    })
      .finally(() => settled = true);
    for (const path of ["/v1/users/ana/status", "/v1/health", "/v1/users/ana/execution-status", "/v1/users"]) {
      await expectJson(await partner.call("GET", path), 200);
    }
    await expectJson(
      await partner.call("POST", "/v1/users", { body: { externalUserId: "bia" }, headers: ik() }),
      201,
    );
    assert.equal(settled, false, "all of that answered while the entry was still waiting for the venue");
    const filled = await expectJson(await entry, 200);
    assert.equal(filled.execution.status, "FILLED", "slow, but within the service's wait: the entry completes");
    assert.equal((await ordersAtVenueA(env, keys.apiKey)).orders.length, 1);
  } finally {
    await venueFault(env, "venueA", "NONE");
    await env.close();
  }
});

Deno.test("a venue slower than the service's wait: reads time out and block the entry; an order's timed-out answer is UNCERTAIN, reconciled by query, never resent", async (t) => {
  const { env, partner, keys } = await tradingClient();
  const link = linkVenueA(env, { timeoutMs: 1000 });
  const execute = (body: Record<string, unknown>, headers = ik()) =>
    partner.call("POST", "/v1/orders/execute", { body, headers });
  try {
    await t.step("every request slower than the wait: the entry is refused before any order is sent", async () => {
      await venueFault(env, "venueA", "SLOW", 1500);
      try {
        const answer = await execute(opening({ intentId: "slow-read-1" }));
        // The account read before the order timed out: the venue counts as unreachable, entries pause.
        if (answer.status === 503) await expectError(answer, 503, "PROVIDER_DOWN");
        else await expectError(answer, 422, "ENTRY_CIRCUIT_OPEN");
      } finally {
        await venueFault(env, "venueA", "NONE");
      }
      assert.deepEqual((await ordersAtVenueA(env, keys.apiKey)).orders, [], "no order was sent");
      await runJob(env, "reconcile"); // a read that answers again: the venue is reachable
    });

    const body = opening({ intentId: "slow-order-1" });
    const headers = ik();
    await t.step("the order's answer held past the wait: UNCERTAIN, and asking again sends nothing", async () => {
      link.fail("POST", "/fapi/v1/order", "ANSWER_HELD");
      const uncertain = await expectJson(await execute(body, headers), 200);
      assert.equal(uncertain.execution.status, "UNCERTAIN", JSON.stringify(uncertain));
      assert.equal((await ordersAtVenueA(env, keys.apiKey)).orders.length, 1, "the venue took the order");

      const replay = await execute(body, headers);
      assert.equal(replay.headers.get("idempotent-replayed"), "true");
      assert.equal((await expectJson(replay, 200)).execution.status, "UNCERTAIN", "final for its key");
      const again = await expectJson(await execute(body), 200);
      assert.equal(again.execution.status, "UNCERTAIN", "the same intent under a new key is answered, not resent");
      assert.equal((await ordersAtVenueA(env, keys.apiKey)).orders.length, 1, "still one order at the venue");
    });

    await t.step("the reconcile job settles it by query: FILLED and protected, still one order", async () => {
      link.heal();
      const summary = await runJob(env, "reconcile");
      assert.ok(summary.intentsChecked >= 1, JSON.stringify(summary));
      const intent = await expectJson(
        await partner.call("GET", "/v1/orders/slow-order-1?externalUserId=ana&providerId=VENUE_A"),
        200,
      );
      assert.equal(intent.status, "FILLED");
      await assertProtectedOnce(env, partner, keys.apiKey);
    });
  } finally {
    await venueFault(env, "venueA", "NONE");
    await link.close();
    await env.close();
  }
});
