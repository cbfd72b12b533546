/**
 * From signal to protected position on the VENUE_A simulator: an admitted
 * entry is sent once, a fill opens the position with the signal's stop and
 * targets, a resting entry is followed by the reconcile job (filled later, or
 * cancelled at its timeout on the test clock).
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { admissions, entryLeases, intents, positions } from "../../db/schema.ts";
import { credentialsOf, findAccount } from "../../domain/accounts/load_account.ts";
import { findClient } from "../../domain/clients/load_client.ts";
import { dispatchAdmitted } from "../../domain/engine/dispatch_entries.ts";
import { evaluateSignal } from "../../domain/engine/evaluate_signal.ts";
import type { TestEnv } from "../_helpers/env.ts";
import { expectJson, operator } from "../_helpers/http.ts";
import { automationBody, completeSetup, putAutomation, putSetup, readyClient } from "../setup/setup_fixture.ts";
import { engineCtx, judgedSignal, signal } from "../execution/execution_fixture.ts";

async function tradingClient() {
  const { env, partner } = await readyClient();
  await expectJson(await putSetup(partner, completeSetup({ orderSizeUsd: 240, maxLossPerTrade: 50 })), 200);
  await expectJson(await putAutomation(partner, automationBody()), 200);
  await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
  const client = (await findClient(env.deps.db.read, partner.partnerId, "ana"))!;
  const account = (await findAccount(env.deps.db.read, client.id, "VENUE_A"))!;
  return { env, partner, client, account };
}

async function entryOf(env: TestEnv, clientId: number) {
  return (await env.deps.db.read.select().from(intents).where(eq(intents.clientId, clientId)))
    .find((intent) => intent.type === "ENTRY")!;
}

async function leaseOwner(env: TestEnv, clientId: number) {
  const [lease] = await env.deps.db.read.select().from(entryLeases).where(eq(entryLeases.clientId, clientId));
  return lease.owner;
}

async function reconcile(env: TestEnv) {
  return (await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200)).summary;
}

Deno.test("dispatch: an admitted entry that fills opens a protected position, and is sent once", async () => {
  const { env, client, account } = await tradingClient();
  try {
    // Buying at 65,010 crosses the simulator's ask: the LIMIT entry fills at once.
    const summary = await expectJson(
      await operator(env, "POST", "/operator/v1/signals", signal("sig-fill", 65010)),
      200,
    );
    assert.equal(summary.admitted, 1, JSON.stringify(summary));
    assert.equal(summary.dispatched, 1);
    const entry = await entryOf(env, client.id);
    assert.equal(entry.status, "FILLED");
    assert.equal(entry.orderType, "LIMIT");
    assert.equal(entry.quantity, "0.003", "240 USD at 65,010, rounded down to the step");

    const [position] = await env.deps.db.read.select().from(positions).where(eq(positions.clientId, client.id));
    assert.equal(position.protectionStatus, "PROTECTED", position.protectionReason ?? "");
    assert.equal(position.side, "LONG");
    const protections = await env.deps.venues.VENUE_A.listProtections(credentialsOf(account), "BTCUSDT");
    assert.equal(protections.length, 3, "stop and two targets");
    // The legs, recorded together with the position, each answered under its own row: the order the venue holds.
    const legs = (await env.deps.db.read.select().from(intents).where(eq(intents.positionId, position.positionId)))
      .sort((a, b) => a.id - b.id);
    assert.deepEqual(legs.map((leg) => [leg.intentId, leg.status]), [
      [`${position.positionId}:STOP_LOSS:1`, "ACCEPTED"],
      [`${position.positionId}:TAKE_PROFIT:2`, "ACCEPTED"],
      [`${position.positionId}:TAKE_PROFIT:3`, "ACCEPTED"],
    ]);
    assert.deepEqual(
      new Set(legs.map((leg) => `${leg.clientOrderId} ${leg.orderId} ${Number(leg.triggerPrice)}`)),
      new Set(protections.map((order) => `${order.clientOrderId} ${order.orderId} ${Number(order.triggerPrice)}`)),
    );
    assert.equal(await leaseOwner(env, client.id), null, "the account is free for its next entry");

    const again = await expectJson(await operator(env, "POST", "/operator/v1/signals", signal("sig-fill", 65010)), 200);
    assert.equal(again.dispatched, 1);
    const entries = (await env.deps.db.read.select().from(intents).where(eq(intents.clientId, client.id)))
      .filter((intent) => intent.type === "ENTRY");
    assert.equal(entries.length, 1, "the same signal never sends twice");
    const snapshot = await env.deps.venues.VENUE_A.getAccount(credentialsOf(account));
    assert.equal(snapshot.positions[0].quantity, "0.003");
  } finally {
    await env.close();
  }
});

Deno.test("dispatch: a fill answered before its protection was read is protected after the answer's commit", async () => {
  const { env, client } = await tradingClient();
  try {
    // The market's rules arrive 300 ms late (a catalogue refresh at the venue): the order is not held for them, and
    // the answer's write does not wait for them either.
    const markets = env.deps.caches.markets;
    const read = markets.get.bind(markets);
    let slowReads = 0;
    markets.get = (key, load) => {
      slowReads++;
      return new Promise((resolve) => setTimeout(resolve, 300)).then(() => read(key, load));
    };
    const summary = await expectJson(
      await operator(env, "POST", "/operator/v1/signals", signal("sig-late-rules", 65010)),
      200,
    );
    assert.equal(summary.dispatched, 1, JSON.stringify(summary));
    assert.ok(slowReads > 0, "the dispatch read the market's rules");
    const entry = await entryOf(env, client.id);
    assert.equal(entry.status, "FILLED");
    const [position] = await env.deps.db.read.select().from(positions).where(eq(positions.clientId, client.id));
    assert.equal(position.protectionStatus, "PROTECTED", position.protectionReason ?? "");
    const legs = await env.deps.db.read.select().from(intents).where(eq(intents.positionId, position.positionId));
    assert.deepEqual(legs.map((leg) => leg.status).sort(), ["ACCEPTED", "ACCEPTED", "ACCEPTED"]);
    assert.equal(await leaseOwner(env, client.id), null, "the account is free for its next entry");
  } finally {
    await env.close();
  }
});

Deno.test("dispatch: a resting entry is protected when it fills, or cancelled at its timeout", async (t) => {
  const { env, client, account } = await tradingClient();
  const market = (markPrice: string) =>
    fetch(`${env.venueUrls.venueA}/_control/markets/BTCUSDT`, { method: "PUT", body: JSON.stringify({ markPrice }) })
      .then((response) => response.body?.cancel());
  try {
    await t.step("a resting entry fills when the market comes to it", async () => {
      await expectJson(await operator(env, "POST", "/operator/v1/signals", signal("sig-rest", 64900)), 200);
      assert.equal((await entryOf(env, client.id)).status, "ACCEPTED");
      assert.equal(await leaseOwner(env, client.id), null, "a resting entry frees its account with its answer");
      await market("64850");
      await reconcile(env);
      const entry = await entryOf(env, client.id);
      assert.equal(entry.status, "FILLED");
      const [position] = await env.deps.db.read.select().from(positions).where(eq(positions.clientId, client.id));
      assert.equal(position.protectionStatus, "PROTECTED");
    });
    await t.step("the next signal finds the slot taken", async () => {
      await reconcile(env);
      const summary = await expectJson(
        await operator(env, "POST", "/operator/v1/signals", signal("sig-next", 64800)),
        200,
      );
      assert.deepEqual(summary.refused, { POSITION_COUNT_CAP: 1 });
    });
    await t.step("a position whose protection is not confirmed pauses the account's entries", async () => {
      const [position] = await env.deps.db.read.select().from(positions).where(eq(positions.clientId, client.id));
      await withTransaction(env.deps.db, (tx) =>
        tx.update(positions).set({ protectionStatus: "PROTECTION_DEGRADED" })
          .where(eq(positions.positionId, position.positionId)));
      const summary = await expectJson(
        await operator(env, "POST", "/operator/v1/signals", signal("sig-degraded", 64800)),
        200,
      );
      assert.deepEqual(summary.refused, { ENTRY_CIRCUIT_OPEN: 1 });
      const [record] = (await expectJson(
        await operator(env, "GET", "/operator/v1/signals/sig-degraded/admissions"),
        200,
      )).admissions;
      assert.match(record.detail, /sem proteção confirmada/);
      await withTransaction(
        env.deps.db,
        (tx) =>
          tx.update(positions).set({ protectionStatus: "PROTECTED" }).where(
            eq(positions.positionId, position.positionId),
          ),
      );
    });
    await t.step("after closing, a resting entry is cancelled at its timeout on the test clock", async () => {
      await env.deps.venues.VENUE_A.placeOrder(credentialsOf(account), {
        symbol: "BTCUSDT",
        side: "SELL",
        type: "MARKET",
        quantity: "0.003",
        reduceOnly: true,
        clientOrderId: "close-by-hand",
      });
      await market("65000");
      await reconcile(env);
      await expectJson(await operator(env, "POST", "/operator/v1/signals", signal("sig-late", 64000)), 200);
      const resting = (await env.deps.db.read.select().from(intents).where(eq(intents.signalId, "sig-late")))[0];
      assert.equal(resting.status, "ACCEPTED");
      await expectJson(await operator(env, "PUT", "/operator/v1/clock", { now: "2026-11-02T10:31:00.000Z" }), 200);
      await reconcile(env);
      const cancelled = (await env.deps.db.read.select().from(intents).where(eq(intents.signalId, "sig-late")))[0];
      assert.equal(cancelled.status, "CANCELED");
      assert.equal(cancelled.errorCode, "ENTRY_TIMEOUT");
    });
  } finally {
    await env.close();
  }
});

Deno.test("dispatch: two signals judged before either is sent trade once; the second finds the slot taken when it goes", async () => {
  const { env, client, account } = await tradingClient();
  try {
    const ctx = engineCtx(env);
    // A paced fan-out reaches an account minutes after its admission: both signals were judged on a free account.
    await evaluateSignal(ctx, judgedSignal("first-0001"));
    await evaluateSignal(ctx, judgedSignal("second-0001"));
    assert.equal((await dispatchAdmitted(ctx, "first-0001")).dispatched, 1);
    const second = await dispatchAdmitted(ctx, "second-0001");
    assert.equal(second.dispatched, 0);
    const [record] = await env.deps.db.read.select().from(admissions).where(eq(admissions.signalId, "second-0001"));
    assert.deepEqual([record.decision, record.code, record.stage], ["REFUSED", "POSITION_COUNT_CAP", "DISPATCH"]);
    const entries = (await env.deps.db.read.select().from(intents).where(eq(intents.clientId, client.id)))
      .filter((intent) => intent.type === "ENTRY");
    assert.equal(entries.length, 1, "one entry recorded");
    const snapshot = await env.deps.venues.VENUE_A.getAccount(credentialsOf(account));
    assert.deepEqual(snapshot.positions.map((p) => p.quantity), ["0.003"], "one position at the venue");
  } finally {
    await env.close();
  }
});
