/**
 * Issue 29, defect 3: one answer, one truth. An execute answered
 * `status: FILLED` with `errorCode: NOT_AT_VENUE`: the error of an earlier
 * send (never received by the venue, or answered too late) stayed on the
 * intent when a later send, or the query that settled it, found it filled.
 * The answer and the stored intent must say the same thing, and a filled
 * order carries no error.
 */
import assert from "node:assert/strict";
import { sql } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { intents } from "../../db/schema.ts";
import { expectJson, operator } from "../_helpers/http.ts";
import { armKill } from "../_helpers/kill_points.ts";
import { completeSetup, ik, putSetup, readyClient } from "../setup/setup_fixture.ts";
import { opening, simulatorFault } from "./execution_fixture.ts";

async function trading() {
  const ready = await readyClient();
  await expectJson(await putSetup(ready.partner, completeSetup({ maxMarginPerTradeUsd: 100 })), 200);
  return ready;
}

const close = (intentId: string) => ({
  externalUserId: "ana",
  type: "CLOSE_POSITION",
  providerId: "VENUE_A",
  symbol: "BTCUSDT",
  intentId,
});

Deno.test("execute: an order sent again after the venue never received it answers FILLED with no error, as stored", async () => {
  const { env, partner } = await trading();
  try {
    const opened = await expectJson(
      await partner.call("POST", "/v1/orders/execute", { body: opening({ intentId: "open-answer-1" }), headers: ik() }),
      200,
    );
    assert.equal(opened.execution.status, "FILLED");
    // The close is recorded, and the process dies before it reaches the venue.
    const headers = ik();
    const kill = armKill(env, { at: "placeOrder", nth: 1, when: "before" });
    const killed = await partner.call("POST", "/v1/orders/execute", { body: close("close-answer-1"), headers });
    kill.restart();
    assert.equal(killed.status, 500);
    // Restarted past the venue's window, the reconciliation finds the venue never had it.
    await withTransaction(
      env.deps.db,
      (tx) => tx.update(intents).set({ sentWallAt: sql`${intents.sentWallAt} - 60000` }),
    );
    await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
    const query = "externalUserId=ana&providerId=VENUE_A";
    const notPlaced = await expectJson(await partner.call("GET", `/v1/orders/close-answer-1?${query}`), 200);
    assert.deepEqual([notPlaced.status, notPlaced.errorCode], ["NOT_PLACED", "NOT_AT_VENUE"]);

    // The partner retries the request that got no answer: the intent is sent again and fills.
    const retried = await expectJson(
      await partner.call("POST", "/v1/orders/execute", { body: close("close-answer-1"), headers }),
      200,
    );
    assert.deepEqual(
      [retried.execution.status, retried.execution.errorCode, retried.execution.errorMessage],
      ["FILLED", null, null],
    );
    const stored = await expectJson(await partner.call("GET", `/v1/orders/close-answer-1?${query}`), 200);
    assert.deepEqual([stored.status, stored.errorCode, stored.errorMessage], ["FILLED", null, null]);
    const replayed = await partner.call("POST", "/v1/orders/execute", { body: close("close-answer-1"), headers });
    assert.deepEqual((await expectJson(replayed, 200)).execution, retried.execution);
  } finally {
    await env.close();
  }
});

Deno.test("execute: a lost answer settled FILLED by the reconciliation no longer carries PROVIDER_DOWN", async () => {
  const { env, partner } = await trading();
  try {
    await simulatorFault(env, "LOSE_RESPONSE");
    const body = opening({ intentId: "open-answer-2" });
    const uncertain = await expectJson(await partner.call("POST", "/v1/orders/execute", { body, headers: ik() }), 200);
    await simulatorFault(env, "NONE");
    // The answer of an uncertain send is UNCERTAIN with the reason: status and code agree.
    assert.deepEqual([uncertain.execution.status, uncertain.execution.errorCode], ["UNCERTAIN", "PROVIDER_DOWN"]);
    const reconciled = await expectJson(
      await partner.call("POST", "/v1/orders/open-answer-2/reconcile", {
        body: { externalUserId: "ana", providerId: "VENUE_A" },
        headers: ik(),
      }),
      200,
    );
    assert.deepEqual(
      [reconciled.intent.status, reconciled.intent.errorCode, reconciled.intent.errorMessage],
      ["FILLED", null, null],
    );
    // Asked again under a new key, the same intent answers what became of it.
    const again = await expectJson(await partner.call("POST", "/v1/orders/execute", { body, headers: ik() }), 200);
    assert.deepEqual([again.execution.status, again.execution.errorCode], ["FILLED", null]);
  } finally {
    await env.close();
  }
});
