/**
 * A position's life on the VENUE_A simulator, kept by the reconcile job: a
 * target fills and the stop moves to break-even, a stop removed at the venue
 * is placed again, the last target closes the position and the leftover stop
 * is cancelled, and the fills become results.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { events, intents, performancePortions, positions, resultFacts } from "../../db/schema.ts";
import { credentialsOf, findAccount } from "../../domain/accounts/load_account.ts";
import { findClient } from "../../domain/clients/load_client.ts";
import { expectJson, operator } from "../_helpers/http.ts";
import { automationBody, completeSetup, putAutomation, putSetup, readyClient } from "../setup/setup_fixture.ts";

Deno.test("position lifecycle: target, break-even, a stop placed again, close, results", async (t) => {
  const { env, partner } = await readyClient();
  const market = (markPrice: string) =>
    fetch(`${env.venueUrls.venueA}/_control/markets/BTCUSDT`, { method: "PUT", body: JSON.stringify({ markPrice }) })
      .then((response) => response.body?.cancel());
  const reconcile = async () =>
    (await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200)).summary;
  try {
    await expectJson(
      await putSetup(partner, completeSetup({ orderSizeUsd: 240, maxLossPerTrade: 50, autoBreakEven: true })),
      200,
    );
    await expectJson(await putAutomation(partner, automationBody()), 200);
    await reconcile();
    const client = (await findClient(env.deps.db.read, partner.partnerId, "ana"))!;
    const account = (await findAccount(env.deps.db.read, client.id, "VENUE_A"))!;
    const position = async () =>
      (await env.deps.db.read.select().from(positions).where(eq(positions.clientId, client.id)))[0];
    const legs = async () =>
      (await env.deps.db.read.select().from(intents).where(eq(intents.clientId, client.id)))
        .filter((intent) => intent.positionId !== null);

    await expectJson(
      await operator(env, "POST", "/operator/v1/signals", {
        signalId: "sig-life",
        strategyId: "trend-follow",
        providerId: "VENUE_A",
        symbol: "BTCUSDT",
        side: "BUY",
        entryPrice: 65010,
        stopLossPrice: 63010,
        takeProfits: [{ price: 67010, share: 0.5 }, { price: 69010, share: 0.5 }],
        confidence: 80,
      }),
      200,
    );
    assert.equal((await position()).protectionStatus, "PROTECTED");
    assert.equal((await position()).quantity, "0.003");

    await t.step("the first target fills and the stop moves to the entry price", async () => {
      await market("67100");
      await reconcile();
      const moved = await position();
      assert.equal(moved.quantity, "0.002", "the first target took 0.001 (half of 0.003, on the step)");
      assert.equal(moved.breakEvenDone, true);
      assert.equal(moved.stopLossPrice, moved.entryPrice);
      assert.equal(moved.protectionStatus, "PROTECTED", moved.protectionReason ?? "");
      const stops = (await legs()).filter((leg) => leg.type === "STOP_LOSS");
      assert.deepEqual(stops.map((leg) => leg.status), ["CANCELED", "ACCEPTED"]);
    });

    await t.step("a stop removed at the venue is placed again", async () => {
      const stop = (await legs()).find((leg) => leg.type === "STOP_LOSS" && leg.status === "ACCEPTED")!;
      await env.deps.venues.VENUE_A.cancelProtection(credentialsOf(account), "BTCUSDT", stop.clientOrderId);
      const summary = await reconcile();
      assert.equal(summary.stopsPlacedAgain, 1);
      assert.equal((await position()).protectionStatus, "PROTECTED");
      const protections = await env.deps.venues.VENUE_A.listProtections(credentialsOf(account), "BTCUSDT");
      assert.equal(protections.filter((order) => order.type === "STOP_MARKET").length, 1);
    });

    await t.step("the last target closes it; the leftover stop is cancelled; fills become results", async () => {
      await market("69100");
      const summary = await reconcile();
      assert.equal(summary.positionsClosed, 1);
      const closed = await position();
      assert.equal(closed.status, "CLOSED");
      const protections = await env.deps.venues.VENUE_A.listProtections(credentialsOf(account), "BTCUSDT");
      assert.deepEqual(protections, [], "no stale reduce-only order waits for the next position");
      const types = (await env.deps.db.read.select().from(events)).map((event) => event.eventType);
      assert.ok(types.includes("position.opened") && types.includes("position.updated"));
      assert.ok(types.includes("position.closed"));
      await reconcile();
      const facts = await env.deps.db.read.select().from(resultFacts).where(eq(resultFacts.clientId, client.id));
      assert.equal(facts.filter((fact) => fact.kind === "FILL").length >= 3, true, "entry and two targets");
      // Every fill is attributed to the position: the entry's, and each target's by the order it triggered.
      const fills = facts.filter((fact) => fact.kind === "FILL");
      assert.deepEqual(new Set(fills.map((fact) => fact.positionId)), new Set([closed.positionId]));
      assert.deepEqual(fills.map((fact) => fact.role).sort(), ["ENTRY", "EXIT", "EXIT"]);
      // Two closing portions; funding is trusted up to a minute before the last read, so they wait for it.
      const portions = await env.deps.db.read.select().from(performancePortions)
        .where(eq(performancePortions.positionId, closed.positionId));
      assert.deepEqual(portions.map((p) => [p.status, p.pendingReason]), [
        ["PENDING", "FUNDING_PENDING"],
        ["PENDING", "FUNDING_PENDING"],
      ]);
    });
  } finally {
    await env.close();
  }
});
