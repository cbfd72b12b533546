/**
 * The keeper of the venues' account pushes against the simulators' streams
 * (VENUE_B's WebSocket, VENUE_A's user data stream): once the reconcile job
 * has recorded the account's pushes live (its read covered the gap before
 * they flowed) and with the job never run again, a target that fills, a stop
 * that fires and a funding payment are known to the service from the venue's
 * pushes alone, each read at its own cost; the account stops being pushed
 * when the keeper stops.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { accountPushes, positions, resultFacts } from "../../db/schema.ts";
import { AccountPushKeeper } from "../../domain/execution/account_pushes.ts";
import { expectJson, operator } from "../_helpers/http.ts";
import { anaAtVenueA, countWholeReads, engineCtx, signalB } from "../execution/execution_fixture.ts";
import { openPositionFromFill, protectPosition } from "../../domain/execution/protection.ts";
import { sendIntent } from "../../domain/execution/send_intent.ts";
import { readyClient } from "../setup/setup_fixture.ts";
import type { TestEnv } from "../_helpers/env.ts";
import { anaTradingAtVenueB } from "./venue_b_fixture.ts";

/** Waits for `check` to hold: a liveness wait (pushes are asynchronous), never a measure of speed. */
async function eventually<T>(what: string, check: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`Never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A keeper on `env`, and its wait until `clientId`'s pushes are recorded live at `providerId`. */
function keeperOf(env: TestEnv) {
  const keeper = new AccountPushKeeper({
    ...env.deps,
    actor: { kind: "system", job: "account-pushes" },
    requestId: "t",
  });
  const pushState = async (clientId: number) =>
    (await env.deps.db.read.select().from(accountPushes).where(eq(accountPushes.clientId, clientId)))[0];
  // The keeper records when pushes began flowing; a read of the reconcile job since then records them live.
  const live = (clientId: number) =>
    eventually("the account's pushes recorded as live", async () => {
      await keeper.tick();
      await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
      const state = await pushState(clientId);
      return state?.live && state;
    });
  return { keeper, pushState, live };
}

Deno.test("account pushes: fills and a fired stop at VENUE_B are known from the venue's pushes, no reconcile run", async () => {
  const { env, client, market, position } = await anaTradingAtVenueB();
  const { keeper, pushState, live } = keeperOf(env);
  try {
    keeper.start();
    const state = await live(client.id);
    assert.deepEqual([state.providerId, state.coversOrders, state.coversFunding], ["VENUE_B", true, true]);
    const counted = countWholeReads(env, "VENUE_B");

    const summary = await expectJson(await operator(env, "POST", "/operator/v1/signals", signalB("sig-push-1")), 200);
    assert.equal(summary.dispatched, 1, JSON.stringify(summary));
    const opened = await position();
    assert.equal(opened.protectionStatus, "PROTECTED", opened.protectionReason ?? "");

    await market("67200"); // the first target fills at the venue
    const moved = await eventually("the first target's fill read from a push", async () => {
      const current = await position();
      return current.breakEvenDone && current;
    });
    assert.equal(moved.stopLossPrice, moved.entryPrice, "the stop moved to break-even");

    await market(moved.entryPrice); // back to the entry: the break-even stop fires
    const closed = await eventually("the fired stop read from a push", async () => {
      const current = await position();
      return current.status === "CLOSED" && current;
    });
    assert.equal(closed.status, "CLOSED");
    const fills = await env.deps.db.read.select().from(resultFacts).where(eq(resultFacts.clientId, client.id));
    assert.ok(
      fills.filter((fact) => fact.kind === "FILL").length >= 3,
      "the entry's, the target's and the stop's fills",
    );
    assert.equal(counted.wholeReads, 0, "each push read at its own cost, never the account whole");

    await keeper.stop();
    assert.equal((await pushState(client.id)).live, false, "a stopped keeper leaves the account to the reconcile job");
  } finally {
    await keeper.stop();
    await env.close();
  }
});

Deno.test("account pushes: a target, funding and a fired stop at VENUE_A are known from its user data stream", async () => {
  const { env, partner } = await readyClient();
  const { keeper, live } = keeperOf(env);
  const market = (markPrice: string) =>
    fetch(`${env.venueUrls.venueA}/_control/markets/BTCUSDT`, { method: "PUT", body: JSON.stringify({ markPrice }) })
      .then((response) => response.body?.cancel());
  try {
    const { client, account, draft, record } = await anaAtVenueA(env, partner.partnerId);
    await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
    keeper.start();
    const state = await live(client.id);
    assert.deepEqual([state.providerId, state.coversOrders, state.coversFunding], ["VENUE_A", true, true]);
    const counted = countWholeReads(env, "VENUE_A");

    const entry = await sendIntent(engineCtx(env), await record(draft("entry-push-1", { quantity: "0.004" })), account);
    const plan = {
      stopLossPrice: "60000",
      takeProfits: [{ price: "67000", share: "0.5" }, { price: "69000", share: "0.5" }],
      autoBreakEven: true,
      signalId: null,
    };
    const opened = await protectPosition(
      engineCtx(env),
      await openPositionFromFill(engineCtx(env), entry, plan),
      account,
    );
    assert.equal(opened.protectionStatus, "PROTECTED", opened.protectionReason ?? "");
    const position = async () =>
      (await env.deps.db.read.select().from(positions).where(eq(positions.positionId, opened.positionId)))[0];

    await market("67100"); // the first target fills at the venue
    const moved = await eventually("the first target's fill read from a push", async () => {
      const current = await position();
      return current.breakEvenDone && current;
    });
    assert.equal(moved.stopLossPrice, moved.entryPrice, "the stop moved to break-even");

    await fetch(`${env.venueUrls.venueA}/_control/funding`, {
      method: "POST",
      body: JSON.stringify({ symbol: "BTCUSDT", rate: "0.0001" }),
    }).then((response) => response.body?.cancel());
    await eventually("the funding payment read from a push", async () => {
      const facts = await env.deps.db.read.select().from(resultFacts).where(eq(resultFacts.clientId, client.id));
      return facts.some((fact) => fact.kind === "FUNDING");
    });

    await market(String(Number(moved.entryPrice) - 100)); // the break-even stop fires
    const closed = await eventually("the fired stop read from a push", async () => {
      const current = await position();
      return current.status === "CLOSED" && current;
    });
    assert.equal(closed.status, "CLOSED");
    await eventually("the fired stop's fill recorded", async () => {
      const facts = await env.deps.db.read.select().from(resultFacts).where(eq(resultFacts.clientId, client.id));
      return facts.filter((fact) => fact.kind === "FILL").length >= 3;
    });
    assert.equal(counted.wholeReads, 0, "each push read at its own cost, never the account whole");
  } finally {
    await keeper.stop();
    await env.close();
  }
});
