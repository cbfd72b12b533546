/**
 * The protection-monitor job against the venue simulators: a protected
 * position costs one venue read and no write; a stop cancelled behind the
 * service's back degrades the position (one `protection.degraded`) and is
 * placed again, a refused placement only a bounded number of times; a refused
 * key is PROVIDER_ACCESS_LOST; a target that filled is not a missing leg.
 */
import assert from "node:assert/strict";
import { and, eq } from "drizzle-orm";
import { accountPushes, events, intents, positions, providerAccounts } from "../../db/schema.ts";
import { holdServiceLease } from "../../domain/jobs/service_leases.ts";
import { PUSH_KEEPER_LEASE } from "../../domain/execution/push_states.ts";
import { credentialsOf, findAccount } from "../../domain/accounts/load_account.ts";
import { findClient } from "../../domain/clients/load_client.ts";
import type { Ctx } from "../../domain/context.ts";
import { insertIntent, type IntentDraft } from "../../domain/execution/intents.ts";
import { openPositionFromFill, protectPosition } from "../../domain/execution/protection.ts";
import { sendIntent } from "../../domain/execution/send_intent.ts";
import { withTransaction } from "../../db/client.ts";
import { runProtectionMonitor } from "../../jobs/protection_monitor.ts";
import type { ProviderId, VenueAdapter } from "../../venues/types.ts";
import type { TestEnv } from "../_helpers/env.ts";
import { expectJson, operator } from "../_helpers/http.ts";
import { connectWallet, openPage, walletSetUp } from "../connect/connect_fixture.ts";
import { readyClient } from "../setup/setup_fixture.ts";
import { engineCtx, simulatorFault, TWO_TARGETS_PLAN } from "./execution_fixture.ts";

const SYMBOLS: Record<ProviderId, { symbol: string; coin: string }> = {
  VENUE_A: { symbol: "BTCUSDT", coin: "BTCUSDT" },
  VENUE_B: { symbol: "BTCUSDC", coin: "BTC" },
};

/** ana's VENUE_A account, connected and reconciled, or her VENUE_B wallet connected through the page. */
async function connected(providerId: ProviderId) {
  if (providerId === "VENUE_A") return await readyClient();
  const { env, partner, wallet } = await walletSetUp();
  await connectWallet((await openPage(env, partner)).request, wallet);
  return { env, partner };
}

/** A long of 0.004 BTC (market at 65000) protected by a stop at 60000 and targets at 67000 and 69000. */
async function protectedLong(providerId: ProviderId) {
  const { env, partner } = await connected(providerId);
  const ctx = engineCtx(env);
  const client = (await findClient(env.deps.db.read, partner.partnerId, "ana"))!;
  const account = (await findAccount(env.deps.db.read, client.id, providerId))!;
  const draft: IntentDraft = {
    partnerId: partner.partnerId,
    intentId: "entry-monitor",
    clientId: client.id,
    providerId,
    type: "OPEN_POSITION",
    opensPosition: true,
    symbol: SYMBOLS[providerId].symbol,
    side: "BUY",
    orderType: "MARKET",
    quantity: "0.004",
    reduceOnly: false,
  };
  const intent = await withTransaction(env.deps.db, (tx) => insertIntent(tx, draft, "SUBMITTING", env.clock.now()));
  const entry = await sendIntent(ctx, intent, account);
  assert.equal(entry.status, "FILLED", `${entry.errorCode} ${entry.errorMessage}`);
  const opened = await protectPosition(ctx, await openPositionFromFill(ctx, entry, TWO_TARGETS_PLAN), account);
  assert.equal(opened.protectionStatus, "PROTECTED", opened.protectionReason ?? "");
  const db = env.deps.db.read;
  return {
    env,
    partner,
    account,
    opened,
    position: async () => (await db.select().from(positions).where(eq(positions.positionId, opened.positionId)))[0],
    legs: (type: string) =>
      db.select().from(intents).where(and(eq(intents.positionId, opened.positionId), eq(intents.type, type))),
    count: async (eventType: string) => (await db.select().from(events).where(eq(events.eventType, eventType))).length,
    atVenue: () => env.deps.venues[providerId].listProtections(credentialsOf(account), SYMBOLS[providerId].symbol),
    market: (markPrice: string) =>
      fetch(`${venueUrl(env, providerId)}/_control/markets/${SYMBOLS[providerId].coin}`, {
        method: "PUT",
        body: JSON.stringify({ markPrice }),
      }).then((response) => response.body?.cancel()),
  };
}

const venueUrl = (env: TestEnv, providerId: ProviderId) =>
  providerId === "VENUE_A" ? env.venueUrls.venueA : env.venueUrls.venueB;

async function runMonitor(env: TestEnv) {
  const body = await expectJson(await operator(env, "POST", "/operator/v1/jobs/protection-monitor/run"), 200);
  assert.equal(body.job, "protection-monitor");
  return body.summary;
}

/** The adapter, recording the name of every method the domain calls on it. */
function recorded(venue: VenueAdapter) {
  const calls: string[] = [];
  const proxy = new Proxy(venue, {
    get(target, name) {
      const value = Reflect.get(target, name);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push(String(name));
        return value.apply(target, args);
      };
    },
  });
  return { proxy, calls };
}

for (const providerId of ["VENUE_A", "VENUE_B"] as const) {
  Deno.test(`protection monitor (${providerId}): a protected position stays PROTECTED on one venue read and no write`, async () => {
    const { env, opened, position, count } = await protectedLong(providerId);
    try {
      const { proxy, calls } = recorded(env.deps.venues[providerId]);
      const ctx: Ctx = { ...engineCtx(env), venues: { ...env.deps.venues, [providerId]: proxy } };
      const summary = await runProtectionMonitor(ctx);
      assert.deepEqual(calls, ["listProtections"]);
      assert.deepEqual(summary, {
        accounts: 1,
        failed: 0,
        leftToPushes: 0,
        leftForNextRun: 0,
        positions: 1,
        protected: 1,
        degraded: 0,
        exhausted: 0,
        accessLost: 0,
        pending: 0,
        legsPlacedAgain: 0,
      });
      const after = await position();
      assert.equal(after.protectionStatus, "PROTECTED");
      assert.equal(after.updatedAt, opened.updatedAt, "nothing is written when all is as recorded");
      assert.equal(await count("protection.degraded"), 0);

      // Once the venue pushes the account's every order change (its keeper live), a leg that stops working is
      // pushed and read at once: the monitor leaves the account, and reads nothing.
      await holdServiceLease(env.deps.db, PUSH_KEEPER_LEASE, "keeper", 30_000);
      await withTransaction(env.deps.db, (tx) =>
        tx.insert(accountPushes).values({
          clientId: opened.clientId,
          providerId,
          owner: "keeper",
          live: true,
          flowingSince: Date.now() - 1000,
          coversOrders: true,
          coversFunding: true,
          changedAt: Date.now(),
        }));
      calls.length = 0;
      const left = await runProtectionMonitor(ctx);
      assert.deepEqual([left.accounts, left.leftToPushes, calls], [0, 1, []]);
    } finally {
      await env.close();
    }
  });

  Deno.test(`protection monitor (${providerId}): a stop cancelled at the venue degrades the position and is placed again`, async () => {
    const { env, account, position, legs, count, atVenue } = await protectedLong(providerId);
    try {
      const [stop] = await legs("STOP_LOSS");
      await env.deps.venues[providerId].cancelProtection(credentialsOf(account), stop.symbol, stop.clientOrderId);

      const first = await runMonitor(env);
      assert.equal(first.degraded, 1, JSON.stringify(first));
      assert.equal(first.legsPlacedAgain, 1);
      const degraded = await position();
      assert.equal(degraded.protectionStatus, "PROTECTION_DEGRADED");
      assert.equal(
        degraded.protectionReason,
        "Proteção não confirmada no provedor: stop loss 60000 (cancelada). Recolocação: tentativa 1 de 3.",
      );
      assert.equal(await count("protection.degraded"), 1);
      assert.deepEqual((await legs("STOP_LOSS")).map((leg) => leg.status), ["CANCELED", "ACCEPTED"]);
      const stops = (await atVenue()).filter((order) => order.type === "STOP_MARKET");
      assert.equal(stops.length, 1, "one stop at the venue");

      const second = await runMonitor(env);
      assert.equal(second.protected, 1, JSON.stringify(second));
      const restored = await position();
      assert.equal(restored.protectionStatus, "PROTECTED");
      assert.equal(restored.protectionReason, null);
      assert.equal(restored.protectionAttempts, 0, "a verified position gets its attempts back");
      assert.equal(await count("protection.degraded"), 1, "the event marks the transition only");
      assert.equal(await count("position.updated"), 1, "coming back to PROTECTED is a change of the position");
    } finally {
      await env.close();
    }
  });
}

Deno.test("protection monitor: a stop the venue keeps refusing is placed at most 3 times, then reported", async () => {
  const { env, account, position, legs, count } = await protectedLong("VENUE_A");
  try {
    const [stop] = await legs("STOP_LOSS");
    await env.deps.venues.VENUE_A.cancelProtection(credentialsOf(account), stop.symbol, stop.clientOrderId);
    // A stand-in for a stop the venue keeps refusing: its price below the market's lowest (556.80).
    await withTransaction(
      env.deps.db,
      (tx) => tx.update(intents).set({ triggerPrice: "500" }).where(eq(intents.id, stop.id)),
    );
    for (let attempt = 1; attempt <= 3; attempt++) {
      const summary = await runMonitor(env);
      assert.equal(summary.legsPlacedAgain, 1, `attempt ${attempt}: ${JSON.stringify(summary)}`);
    }
    const exhausted = await runMonitor(env);
    assert.equal(exhausted.exhausted, 1, JSON.stringify(exhausted));
    assert.equal(exhausted.legsPlacedAgain, 0);
    assert.deepEqual((await legs("STOP_LOSS")).map((leg) => leg.status), [
      "CANCELED",
      "REJECTED",
      "REJECTED",
      "REJECTED",
    ]);
    const after = await position();
    assert.equal(after.protectionStatus, "PROTECTION_DEGRADED");
    assert.equal(after.protectionAttempts, 3);
    assert.match(after.protectionReason!, /stop loss 500 \(recusada, INVALID_ORDER\)/);
    assert.match(after.protectionReason!, /Recolocação esgotada após 3 tentativas/);
    assert.equal(await count("protection.degraded"), 1);
    assert.ok(env.logs.some((line) => line.includes("no placement attempt left") && line.includes(after.positionId)));

    const reconciled = await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
    assert.equal(reconciled.summary.stopsPlacedAgain, 0, "the reconciliation spends the same attempts");
  } finally {
    await env.close();
  }
});

Deno.test("protection monitor: a missing stop the market has already crossed is executed at once, and the position closes", async () => {
  const { env, account, position, legs, count, market } = await protectedLong("VENUE_A");
  try {
    const [stop] = await legs("STOP_LOSS");
    await env.deps.venues.VENUE_A.cancelProtection(credentialsOf(account), stop.symbol, stop.clientOrderId);
    // Below the stop's trigger (60000): placed again, the stop would fire at once, so the venue refuses it.
    await market("59000");
    const summary = await runMonitor(env);
    assert.equal(summary.legsPlacedAgain, 1, JSON.stringify(summary));
    assert.deepEqual(
      (await legs("STOP_LOSS")).map((leg) => [leg.orderType, leg.status, leg.errorCode]),
      [["STOP_MARKET", "CANCELED", null], ["STOP_MARKET", "REJECTED", "TRIGGER_CROSSED"], ["MARKET", "FILLED", null]],
    );
    assert.deepEqual((await env.deps.venues.VENUE_A.getAccount(credentialsOf(account))).positions, []);
    await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
    assert.equal((await position()).status, "CLOSED");
    assert.equal(await count("position.closed"), 1);
  } finally {
    await env.close();
  }
});

Deno.test("protection monitor: a refused key is PROVIDER_ACCESS_LOST, and a key accepted again restores protection", async () => {
  const { env, account, position, count } = await protectedLong("VENUE_A");
  const connection = async () =>
    (await env.deps.db.read.select().from(providerAccounts).where(eq(providerAccounts.accountId, account.accountId)))[0]
      .connection;
  try {
    await simulatorFault(env, "REJECT_KEYS");
    const lost = await runMonitor(env);
    assert.equal(lost.accessLost, 1, JSON.stringify(lost));
    const after = await position();
    assert.equal(after.protectionStatus, "PROVIDER_ACCESS_LOST");
    assert.match(after.protectionReason!, /recusou a credencial/);
    assert.equal(await connection(), "ACCESS_LOST");
    assert.equal(await count("provider.access_lost"), 1);
    assert.equal(await count("protection.degraded"), 1);
    assert.equal((await runMonitor(env)).accessLost, 1);
    assert.equal(await count("protection.degraded"), 1, "still lost: no second event");

    await simulatorFault(env, "NONE");
    const back = await runMonitor(env);
    assert.equal(back.protected, 1, JSON.stringify(back));
    assert.equal((await position()).protectionStatus, "PROTECTED");
    assert.equal(await connection(), "CONNECTED");
  } finally {
    await simulatorFault(env, "NONE");
    await env.close();
  }
});

Deno.test("protection monitor: a target that filled is not a missing leg; a revoked account is still watched", async () => {
  const { env, partner, position, legs, count, market } = await protectedLong("VENUE_A");
  try {
    await market("67100");
    const summary = await runMonitor(env);
    assert.equal(summary.protected, 1, JSON.stringify(summary));
    assert.equal(summary.legsPlacedAgain, 0);
    assert.deepEqual(
      (await legs("TAKE_PROFIT")).map((leg) => leg.status),
      ["FILLED", "ACCEPTED"],
      "the target missing from the venue's list was settled by querying it",
    );
    assert.equal((await legs("STOP_LOSS")).length, 1, "no stop placed again");
    assert.equal((await position()).protectionStatus, "PROTECTED");
    assert.equal(await count("protection.degraded"), 0);

    const revoked = await expectJson(await partner.call("DELETE", "/v1/users/ana/accounts/VENUE_A"), 200);
    assert.equal(revoked.account.secretRetainedForReconciliation, true);
    const watched = await runMonitor(env);
    assert.equal(watched.accounts, 1, JSON.stringify(watched));
    assert.equal(watched.protected, 1);
  } finally {
    await env.close();
  }
});
