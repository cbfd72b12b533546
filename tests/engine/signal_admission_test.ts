/**
 * Posting a signal evaluates every candidate account and leaves an admission
 * record for each, through the real HTTP stack and the VENUE_A simulator.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { accountStates, signals } from "../../db/schema.ts";
import { findClient } from "../../domain/clients/load_client.ts";
import { expectError, expectJson, operator } from "../_helpers/http.ts";
import { automationBody, completeSetup, putAutomation, putSetup, readyClient } from "../setup/setup_fixture.ts";
import { withTransaction } from "../../db/client.ts";

const signal = (overrides: Record<string, unknown> = {}) => ({
  signalId: "sig-0001",
  strategyId: "trend-follow",
  providerId: "VENUE_A",
  symbol: "BTCUSDT",
  side: "BUY",
  entryPrice: 65001,
  stopLossPrice: 63001,
  takeProfits: [{ price: 67001, share: 0.5 }, { price: 69001, share: 0.5 }],
  confidence: 80,
  ...overrides,
});

Deno.test("signals: every candidate gets an admission record, and the same signal is evaluated once", async () => {
  const { env, partner } = await readyClient();
  try {
    await expectJson(await putSetup(partner, completeSetup()), 200);
    await expectJson(await putAutomation(partner, automationBody()), 200);
    for (const user of ["bia", "caio"]) {
      await expectJson(
        await partner.call("POST", "/v1/users", {
          body: { externalUserId: user },
          headers: { "idempotency-key": `create-${user}-1` },
        }),
        201,
      );
    }
    // caio automates but never enabled a setup; bia has no automation and is not a candidate at all.
    await expectJson(await putAutomation(partner, automationBody(), "caio"), 200);

    // An account connected since the last reconciliation: its exposure is not known yet.
    const client = (await findClient(env.deps.db.read, partner.partnerId, "ana"))!;
    await withTransaction(env.deps.db, (tx) => tx.delete(accountStates).where(eq(accountStates.clientId, client.id)));
    const pending = await expectJson(await operator(env, "POST", "/operator/v1/signals", signal()), 200);
    assert.deepEqual(pending.refused, { ENTRY_CIRCUIT_OPEN: 1, SETUP_DISABLED: 1 });
    assert.equal(pending.evaluated, 2);
    assert.equal(pending.admitted, 0);
    const [why] = (await expectJson(
      await operator(env, "GET", `/operator/v1/partners/${partner.partnerId}/clients/ana/admissions`),
      200,
    )).admissions;
    assert.equal(why.code, "ENTRY_CIRCUIT_OPEN");
    assert.equal(why.stage, "GATE_8");
    assert.match(why.detail, /Reconciliação pendente/);

    await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
    const admitted = await expectJson(
      await operator(env, "POST", "/operator/v1/signals", signal({ signalId: "sig-0002" })),
      200,
    );
    assert.equal(admitted.admitted, 1, JSON.stringify(admitted));
    const records = (await expectJson(
      await operator(env, "GET", "/operator/v1/signals/sig-0002/admissions?decision=ADMITTED"),
      200,
    )).admissions;
    assert.equal(records.length, 1);
    assert.equal(records[0].externalUserId, "ana");
    // 200 USD at 65,001 (margin 50 × 5 would allow 250; 20 USD of loss over a 2,000 stop, 0.010 BTC): 0.003 BTC.
    assert.deepEqual([records[0].quantity, records[0].price], ["0.003", "65001.00"]);

    const again = await expectJson(
      await operator(env, "POST", "/operator/v1/signals", signal({ signalId: "sig-0002" })),
      200,
    );
    assert.deepEqual(again, { ...admitted, requestId: again.requestId }, "stored once, answered again");
    await expectError(
      await operator(env, "POST", "/operator/v1/signals", signal({ signalId: "sig-0002", confidence: 10 })),
      409,
      "STATE_CONFLICT",
    );
    const low = await expectJson(
      await operator(env, "POST", "/operator/v1/signals", signal({ signalId: "sig-0003", symbol: "ETHUSDT" })),
      200,
    );
    assert.deepEqual(low.refused, { ASSET_POLICY_REQUIRED: 1, SETUP_DISABLED: 1 });
    await expectError(
      await operator(env, "POST", "/operator/v1/signals", signal({ signalId: "sig-0004", symbol: "SOLUSDT" })),
      400,
      "VALIDATION_ERROR",
    );
  } finally {
    await env.close();
  }
});

Deno.test("signals: a signal refused as invalid stores nothing, so its id can be posted again corrected", async () => {
  const { env } = await readyClient();
  try {
    // Found by the fuzzer: the signal was stored before its strategy and market were checked, so the
    // refused one stayed EVALUATING and the corrected post answered 409 STATE_CONFLICT.
    for (const wrong of [{ strategyId: "no-such-strategy" }, { symbol: "SOLUSDT" }]) {
      await expectError(
        await operator(env, "POST", "/operator/v1/signals", signal({ signalId: "sig-fix", ...wrong })),
        400,
        "VALIDATION_ERROR",
      );
    }
    assert.equal(await env.deps.db.read.$count(signals), 0);
    const corrected = await expectJson(
      await operator(env, "POST", "/operator/v1/signals", signal({ signalId: "sig-fix" })),
      200,
    );
    assert.equal(corrected.signalId, "sig-fix");
  } finally {
    await env.close();
  }
});

Deno.test("signals: entry-moment refusals come from the real book and the automation's conditions", async () => {
  const { env, partner } = await readyClient();
  try {
    await expectJson(await putSetup(partner, completeSetup()), 200);
    await expectJson(await putAutomation(partner, automationBody({ conditions: { minConfidence: 70 } })), 200);
    await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);

    const unsure = await expectJson(
      await operator(env, "POST", "/operator/v1/signals", signal({ signalId: "sig-low", confidence: 60 })),
      200,
    );
    assert.deepEqual(unsure.refused, { BELOW_MIN_CONFIDENCE: 1 });

    await fetch(`${env.venueUrls.venueA}/_control/markets/BTCUSDT`, {
      method: "PUT",
      body: JSON.stringify({ markPrice: "65000", bid: "64800", ask: "65200" }),
    }).then((response) => response.body?.cancel());
    const wide = await expectJson(
      await operator(env, "POST", "/operator/v1/signals", signal({ signalId: "sig-wide" })),
      200,
    );
    assert.deepEqual(wide.refused, { SPREAD_LIMIT: 1 });
  } finally {
    await env.close();
  }
});
