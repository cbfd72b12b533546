/**
 * The reconcile job against the VENUE_A simulator: it settles uncertain
 * intents by querying, keeps the account's positions for the gates, and
 * records fills and funding as facts exactly once.
 */
import assert from "node:assert/strict";
import { and, eq } from "drizzle-orm";
import { accountStates, positions, resultFacts } from "../../db/schema.ts";
import { sendIntent } from "../../domain/execution/send_intent.ts";
import { realizedToday } from "../../domain/setups/daily_loss.ts";
import { add, cmp, sub } from "../../venues/decimal.ts";
import { expectJson, operator } from "../_helpers/http.ts";
import { readyClient } from "../setup/setup_fixture.ts";
import { anaAtVenueA, engineCtx, simulatorFault } from "./execution_fixture.ts";

Deno.test("reconcile job: uncertain intents settled by query, positions kept, facts recorded once", async () => {
  const { env, partner } = await readyClient();
  try {
    const { client, draft, record, account } = await anaAtVenueA(env, partner.partnerId);
    const send = async (intentId: string, overrides: Parameters<typeof draft>[1]) =>
      await sendIntent(engineCtx(env), await record(draft(intentId, overrides)), account);
    const runJob = async () =>
      (await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200)).summary;
    const state = async () =>
      (await env.deps.db.read.select().from(accountStates)
        .where(and(eq(accountStates.clientId, client.id), eq(accountStates.providerId, "VENUE_A"))))[0];

    await simulatorFault(env, "LOSE_RESPONSE");
    assert.equal((await send("entry-lost-1", {})).status, "UNCERTAIN");
    await simulatorFault(env, "NONE");

    const first = await runJob();
    assert.equal(first.accounts, 1);
    assert.equal(first.intentsChecked, 1);
    assert.equal(first.intentsStillUncertain, 0);
    assert.equal(first.newFacts >= 1, true);
    assert.deepEqual((await state()).positions.map((p) => [p.symbol, p.side, p.quantity]), [[
      "BTCUSDT",
      "LONG",
      "0.002",
    ]]);
    assert.equal((await runJob()).newFacts, 0, "a second run records nothing again");

    await fetch(`${env.venueUrls.venueA}/_control/markets/BTCUSDT`, {
      method: "PUT",
      body: JSON.stringify({ markPrice: "64000" }),
    })
      .then((response) => response.body?.cancel());
    const close = await send("close-1", {
      type: "CLOSE_POSITION",
      opensPosition: false,
      side: "SELL",
      reduceOnly: true,
    });
    assert.equal(close.status, "FILLED");
    const second = await runJob();
    assert.equal(second.newFacts >= 1, true);
    assert.deepEqual((await state()).positions, []);

    const facts = await env.deps.db.read.select().from(resultFacts).where(eq(resultFacts.clientId, client.id));
    const net = facts.reduce((sum, fact) => add(sum, fact.net), "0");
    assert.equal(cmp(await realizedToday(env.deps.db.read, client.id, "VENUE_A", env.clock.now()), net), 0);
    assert.equal(cmp(net, "-2"), -1, `bought at 65,000 and sold near 64,000: a loss above 2 USD (${net})`);
    const realized = facts.reduce((sum, fact) => add(sum, fact.realizedPnl), "0");
    assert.equal(cmp(sub(realized, net), "0"), 1, "fees make the net worse than the realized PnL");
  } finally {
    await env.close();
  }
});

Deno.test("reconcile job: an entry whose process died between its fill and its position opens and is protected", async () => {
  const { env, partner } = await readyClient();
  try {
    const { draft, record, account } = await anaAtVenueA(env, partner.partnerId);
    // The send's answer was recorded (FILLED), then the process died before opening the position.
    const plan = { stopLossPrice: "60000", takeProfits: [{ price: "70000", share: "1" }] };
    const filled = await sendIntent(
      engineCtx(env),
      await record(draft("entry-died-1", { protectionPlan: plan })),
      account,
    );
    assert.equal(filled.status, "FILLED");
    const job = async () =>
      (await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200)).summary;
    await job();
    const held = await env.deps.db.read.select().from(positions).where(eq(positions.entryIntentId, filled.id));
    assert.deepEqual(held.map((p) => [p.status, p.quantity, p.protectionStatus]), [["OPEN", "0.002", "PROTECTED"]]);
    await job();
    const again = await env.deps.db.read.select().from(positions).where(eq(positions.entryIntentId, filled.id));
    assert.equal(again.length, 1, "opened once, however often the job runs");
  } finally {
    await env.close();
  }
});
