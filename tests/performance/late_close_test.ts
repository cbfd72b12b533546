/**
 * A position still open when its period closed, then closed by the partner:
 * the venue dates its closing fill inside the closed period (the service
 * learns of it after the close). Its result belongs to that period: shown as
 * pending there while a fact is missing, then stated by an ADJUSTMENT that
 * lowers the period's fee. Driven end to end through the VENUE_A simulator.
 */
import assert from "node:assert/strict";
import { expectJson, operator } from "../_helpers/http.ts";
import { automationBody, completeSetup, ik, putAutomation, putSetup, readyClient } from "../setup/setup_fixture.ts";
import { anaAtVenueA, opening } from "../execution/execution_fixture.ts";
import { fundingReadThrough } from "./trade_fixture.ts";

Deno.test("performance: a closing fill dated inside an already closed period is shown pending, then adjusts that period", async () => {
  const { env, partner } = await readyClient();
  const { client } = await anaAtVenueA(env, partner.partnerId);
  const execute = (body: Record<string, unknown>) =>
    partner.call("POST", "/v1/orders/execute", { body, headers: ik() });
  const close = (intentId: string) =>
    execute({ externalUserId: "ana", type: "CLOSE_POSITION", providerId: "VENUE_A", symbol: "BTCUSDT", intentId });
  const job = async (name: string) =>
    (await expectJson(await operator(env, "POST", `/operator/v1/jobs/${name}/run`), 200)).summary;
  // Venue times are wall-clock times: funding known through this instant is what a reconciliation a minute
  // from now would record (it trusts its read up to a minute before it).
  const fundingKnown = () => fundingReadThrough(env, client.id, "VENUE_A", new Date().toISOString());
  const mark = (markPrice: string) =>
    fetch(`${env.venueUrls.venueA}/_control/markets/BTCUSDT`, { method: "PUT", body: JSON.stringify({ markPrice }) })
      .then((response) => response.body?.cancel());
  const live = async () => {
    const view = await expectJson(await partner.call("GET", "/v1/users/ana/performance"), 200);
    return view.current.providers.find((p: { providerId: string }) => p.providerId === "VENUE_A");
  };
  try {
    await expectJson(await putSetup(partner, completeSetup({ maxMarginPerTradeUsd: 100 })), 200);
    await expectJson(await putAutomation(partner, automationBody({ enabled: false })), 200);
    // A first trade, opened and closed in November at a profit: the ORIGINAL statement charges a fee.
    await expectJson(await execute(opening({ intentId: "manual-open-0" })), 200);
    await job("reconcile");
    await mark("66000");
    await expectJson(await close("manual-close-0"), 200);
    await mark("65000");
    await job("reconcile");
    await fundingKnown();
    // The second is still open when November closes.
    await expectJson(await execute(opening({ intentId: "manual-open-1" })), 200);
    await job("reconcile");
    env.clock.freeze(Date.parse("2026-12-01T00:05:00Z"));
    assert.equal((await job("period-close")).statements, 1);
    const [original] = (await expectJson(await partner.call("GET", "/v1/users/ana/statements"), 200)).statements;

    await expectJson(await close("manual-close-1"), 200);
    await job("reconcile");
    const closedLate = await live();
    assert.deepEqual(
      [closedLate.netPerformanceUsd, closedLate.pendingPortions, closedLate.pendingInEndedPeriods],
      [0, 0, 1],
      "December has nothing of it; November's pending result is shown",
    );
    assert.equal((await job("period-close")).adjustments, 0, "nothing to state while the funding is unknown");

    await fundingKnown();
    env.clock.freeze(Date.parse("2026-12-02T00:00:00Z"));
    assert.equal((await job("period-close")).adjustments, 1);
    const [adjustment] = (await expectJson(await partner.call("GET", "/v1/users/ana/statements"), 200)).statements;
    assert.deepEqual(
      [adjustment.kind, adjustment.reason, adjustment.periodStart, adjustment.adjustsStatementId],
      ["ADJUSTMENT", "LATE_FACTS", original.periodStart, original.statementId],
    );
    assert.ok(adjustment.netPerformanceUsd < 0, "bought at the ask, sold at the bid, fees paid: a loss");
    assert.ok(adjustment.performanceFeeUsd < 0, "the period's fee goes down");
    const [obligation] = (await expectJson(await partner.call("GET", "/v1/users/ana/obligations"), 200)).obligations;
    assert.equal(
      Math.round((original.performanceFeeUsd + adjustment.performanceFeeUsd) * 100),
      Math.round(obligation.amountUsd * 100),
      "the open obligation is reduced to the restated fee",
    );
    assert.equal((await live()).pendingInEndedPeriods, 0);
    const feed = await expectJson(await partner.call("GET", "/v1/events?limit=500"), 200);
    assert.equal(feed.events.filter((e: { type: string }) => e.type === "statement.adjusted").length, 1);
  } finally {
    await env.close();
  }
});
