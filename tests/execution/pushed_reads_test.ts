/**
 * Reading what a push named (domain/execution/pushed_reads.ts) against the
 * VENUE_A simulator: a target's fill resizes the position and records the
 * fill from the symbol's read alone; what such a read cannot judge (a size
 * that changed in a symbol the push did not name) asks for the whole read,
 * leaving the account as it was; a pushed funding payment is read alone.
 */
import assert from "node:assert/strict";
import { and, eq } from "drizzle-orm";
import { accountStates, positions, resultFacts } from "../../db/schema.ts";
import { credentialsOf } from "../../domain/accounts/load_account.ts";
import { openPositionFromFill, protectPosition } from "../../domain/execution/protection.ts";
import { readFunding, readNamedSymbols, WHOLE_READ_NEEDED } from "../../domain/execution/pushed_reads.ts";
import { sendIntent } from "../../domain/execution/send_intent.ts";
import { expectJson, operator } from "../_helpers/http.ts";
import { readyClient } from "../setup/setup_fixture.ts";
import { anaAtVenueA, engineCtx } from "./execution_fixture.ts";

Deno.test("pushed reads: a target's fill is read from its symbol, what the read cannot judge asks for a whole read", async () => {
  const { env, partner } = await readyClient();
  const control = (method: string, path: string, body: unknown) =>
    fetch(`${env.venueUrls.venueA}/_control${path}`, { method, body: JSON.stringify(body) })
      .then((response) => response.json());
  try {
    const ctx = engineCtx(env);
    const { client, account, draft, record } = await anaAtVenueA(env, partner.partnerId);
    const entry = await sendIntent(ctx, await record(draft("entry-named-1", { quantity: "0.004" })), account);
    const plan = {
      stopLossPrice: "60000",
      takeProfits: [{ price: "67000", share: "0.5" }, { price: "69000", share: "0.5" }],
      autoBreakEven: false,
      signalId: null,
    };
    const opened = await protectPosition(ctx, await openPositionFromFill(ctx, entry, plan), account);
    await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
    const position = async () =>
      (await env.deps.db.read.select().from(positions).where(eq(positions.positionId, opened.positionId)))[0];
    const fills = async () =>
      (await env.deps.db.read.select().from(resultFacts).where(eq(resultFacts.clientId, client.id)))
        .filter((fact) => fact.kind === "FILL");
    const state = async () =>
      (await env.deps.db.read.select().from(accountStates).where(and(
        eq(accountStates.clientId, client.id),
        eq(accountStates.providerId, "VENUE_A"),
      )))[0];

    const before = (await fills()).length;
    await control("PUT", "/markets/BTCUSDT", { markPrice: "67100" }); // the first target fills
    const read = await readNamedSymbols(ctx, account, ["BTCUSDT"]);
    assert.notEqual(read, WHOLE_READ_NEEDED);
    assert.equal((await position()).quantity, "0.002", "resized by the target's fill");
    assert.equal((await fills()).length, before + 1, "the target's fill recorded");
    assert.deepEqual((await state()).positions.map((size) => size.quantity), ["0.002"]);

    // A trade the pushes did not name, in another symbol: the symbol's read cannot judge it.
    await env.deps.venues.VENUE_A.placeOrder(credentialsOf(account), {
      symbol: "ETHUSDT",
      side: "BUY",
      type: "MARKET",
      quantity: "0.01",
      reduceOnly: false,
      clientOrderId: "unnamed-trade",
    });
    const kept = await state();
    assert.equal(await readNamedSymbols(ctx, account, ["BTCUSDT"]), WHOLE_READ_NEEDED);
    assert.deepEqual(await state(), kept, "nothing recorded from a read that could not judge");

    await control("POST", "/funding", { symbol: "BTCUSDT", rate: "0.0001" });
    assert.equal(await readFunding(ctx, account), 1, "the pushed funding payment, read alone");
    assert.ok((await state()).fundingKnownThrough > kept.fundingKnownThrough, "funding known through this read");
    assert.equal(await readFunding(ctx, account), 0, "read again: nothing new");
  } finally {
    await env.close();
  }
});
