/**
 * Holding a signal's admitted entries to the platform's limits, together and
 * in a fair order: the distribution limit rotates the accounts left out to the
 * front of later signals; the aggregate caps count the signal's own entries,
 * open positions and openings in flight; a position the platform cannot
 * attribute stops every entry on the asset under a cap. Real HTTP stack and
 * VENUE_A simulator.
 */
import assert from "node:assert/strict";
import { asc, eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { intents, positions } from "../../db/schema.ts";
import { credentialsOf, findAccount } from "../../domain/accounts/load_account.ts";
import { findClient } from "../../domain/clients/load_client.ts";
import { dispatchAdmitted } from "../../domain/engine/dispatch_entries.ts";
import { evaluateSignal } from "../../domain/engine/evaluate_signal.ts";
import type { TestEnv } from "../_helpers/env.ts";
import { expectJson, operator } from "../_helpers/http.ts";
import { connectedVenueA } from "../connect/connect_fixture.ts";
import { engineCtx, judgedSignal } from "../execution/execution_fixture.ts";
import {
  automationBody,
  BTC_POLICY,
  completeSetup,
  ik,
  putAutomation,
  putSetup,
  readyClient,
} from "../setup/setup_fixture.ts";

const USERS = ["ana", "bia", "caio"];

/** A signal as the operator posts it; buying at 65,010 crosses the simulator's ask, so an entry fills at once. */
const signal = (signalId: string) => ({
  signalId,
  strategyId: "trend-follow",
  providerId: "VENUE_A" as const,
  symbol: "BTCUSDT",
  side: "BUY" as const,
  entryPrice: 65010,
  stopLossPrice: 63010,
  takeProfits: [{ price: 67010, share: 1 }],
  confidence: 80,
});

/** Three clients with connected accounts, complete setups (entries of 0.003 BTC, about 195 USD) and automation. */
async function threeTraders() {
  const { env, partner } = await readyClient();
  for (const user of USERS.slice(1)) {
    await expectJson(
      await partner.call("POST", "/v1/users", { body: { externalUserId: user }, headers: ik() }),
      201,
    );
    await connectedVenueA(env, partner, {}, user);
  }
  for (const user of USERS) {
    await expectJson(await putSetup(partner, completeSetup(), user), 200);
    await expectJson(await putAutomation(partner, automationBody(), user), 200);
  }
  await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
  return { env, partner };
}

/** Each user's admission record for a signal, as the operator reads it. */
async function verdicts(env: TestEnv, signalId: string): Promise<Record<string, string>> {
  const { admissions } = await expectJson(
    await operator(env, "GET", `/operator/v1/signals/${signalId}/admissions`),
    200,
  );
  return Object.fromEntries(
    admissions.map((record: { externalUserId: string; decision: string; code: string | null }) => [
      record.externalUserId,
      record.code ?? record.decision,
    ]),
  );
}

Deno.test("allocation: a distribution limit leaves accounts out in turn, the left-out first at the next signal", async () => {
  const { env } = await threeTraders();
  try {
    await expectJson(
      await operator(env, "PUT", "/operator/v1/providers/VENUE_A", { realExecution: true, maxEntriesPerSignal: 2 }),
      200,
    );
    const ctx = engineCtx(env);
    // Judged and allocated only (nothing sent), so every account stays eligible for the next signal.
    await evaluateSignal(ctx, judgedSignal("rot-1"));
    assert.deepEqual(await verdicts(env, "rot-1"), {
      ana: "ADMITTED",
      bia: "ADMITTED",
      caio: "SIGNAL_DISTRIBUTION_LIMIT",
    });
    await evaluateSignal(ctx, judgedSignal("rot-2"));
    assert.deepEqual(await verdicts(env, "rot-2"), {
      ana: "ADMITTED",
      bia: "SIGNAL_DISTRIBUTION_LIMIT",
      caio: "ADMITTED",
    }, "caio, left out before, goes first");
    await evaluateSignal(ctx, judgedSignal("rot-3"));
    assert.deepEqual(await verdicts(env, "rot-3"), {
      ana: "ADMITTED",
      bia: "ADMITTED",
      caio: "SIGNAL_DISTRIBUTION_LIMIT",
    }, "bia, left out at rot-2, goes first; ana and caio were both served at rot-2");
    const [why] = (await expectJson(
      await operator(env, "GET", "/operator/v1/signals/rot-3/admissions?decision=REFUSED"),
      200,
    )).admissions;
    assert.equal(why.stage, "ALLOCATION");
    assert.match(why.detail, /2 entradas por sinal/);
  } finally {
    await env.close();
  }
});

Deno.test("allocation: aggregate caps count the signal's entries and open positions; a position held outside leaves them unverified", async (t) => {
  const { env, partner } = await threeTraders();
  const putPolicy = (caps: Record<string, number | null>) =>
    operator(env, "PUT", "/operator/v1/asset-policies/VENUE_A/BTCUSDT", { ...BTC_POLICY, ...caps });
  try {
    await t.step("a position held outside the platform leaves the asset's exposure unverified", async () => {
      await expectJson(await putPolicy({ maxAssetNotionalUsd: 100_000 }), 200);
      const caio = (await findClient(env.deps.db.read, partner.partnerId, "caio"))!;
      const account = (await findAccount(env.deps.db.read, caio.id, "VENUE_A"))!;
      await env.deps.venues.VENUE_A.placeOrder(credentialsOf(account), {
        symbol: "BTCUSDT",
        side: "SELL",
        type: "MARKET",
        quantity: "0.002",
        reduceOnly: false,
        clientOrderId: "caio-own-order-1",
      });
      await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
      const summary = await expectJson(await operator(env, "POST", "/operator/v1/signals", signal("cap-0")), 200);
      // Its own entries pause (mixed exposure); the others' wait for the asset's exposure to be known again.
      assert.deepEqual(summary.refused, { ENTRY_CIRCUIT_OPEN: 1, EXPOSURE_UNVERIFIED: 2 }, JSON.stringify(summary));
      // Closing the outside position is the way back: the reconciliation sees the asset attributed again.
      await env.deps.venues.VENUE_A.placeOrder(credentialsOf(account), {
        symbol: "BTCUSDT",
        side: "BUY",
        type: "MARKET",
        quantity: "0.002",
        reduceOnly: true,
        clientOrderId: "caio-own-order-2",
      });
      await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
    });

    await t.step("the signal's entries together: two fit under 500 USD, the third would not", async () => {
      await expectJson(await putPolicy({ maxSignalNotionalUsd: 500, maxAssetNotionalUsd: null }), 200);
      const summary = await expectJson(await operator(env, "POST", "/operator/v1/signals", signal("cap-1")), 200);
      assert.equal(summary.admitted, 2, JSON.stringify(summary));
      assert.deepEqual(summary.refused, { AGGREGATE_EXPOSURE_LIMIT: 1 });
      const { admissions } = await expectJson(
        await operator(env, "GET", "/operator/v1/signals/cap-1/admissions?decision=REFUSED"),
        200,
      );
      assert.match(admissions[0].detail, /limite por sinal \(500 USD\)/);
    });

    await t.step("the direction: two open longs of about 195 USD leave no room under 500", async () => {
      await expectJson(await putPolicy({ maxDirectionNotionalUsd: 500 }), 200);
      // The third trader is the only one without a position; the others hold their slot.
      const summary = await expectJson(await operator(env, "POST", "/operator/v1/signals", signal("cap-2")), 200);
      assert.deepEqual(summary.refused, { POSITION_COUNT_CAP: 2, AGGREGATE_EXPOSURE_LIMIT: 1 });
      const { admissions } = await expectJson(
        await operator(env, "GET", "/operator/v1/signals/cap-2/admissions?decision=REFUSED"),
        200,
      );
      const capped = admissions.find((record: { code: string }) => record.code === "AGGREGATE_EXPOSURE_LIMIT");
      assert.equal(capped.externalUserId, "caio");
      assert.match(capped.detail, /limite agregado na direção \(500 USD\)/);
    });
  } finally {
    await env.close();
  }
});

Deno.test("dispatch: each signal's sends begin at another admitted account and wrap around", async () => {
  const { env, partner } = await threeTraders();
  const ctx = engineCtx(env);
  try {
    const ids = Object.fromEntries(
      await Promise.all(
        USERS.map(async (user) => [(await findClient(env.deps.db.read, partner.partnerId, user))!.id, user]),
      ),
    );
    const sendOrder = async (signalId: string) => {
      await dispatchAdmitted(ctx, signalId);
      const sent = await env.deps.db.read.select({ clientId: intents.clientId }).from(intents)
        .where(eq(intents.signalId, signalId)).orderBy(asc(intents.id));
      return sent.map(({ clientId }) => ids[clientId]);
    };
    await evaluateSignal(ctx, judgedSignal("order-1"));
    await evaluateSignal(ctx, judgedSignal("order-2"));
    const first = await sendOrder("order-1");
    // Each account's one slot is judged again when its entry goes: the first signal's positions are marked closed
    // (in the database alone: this test is about the order of sends) so the second signal's entries may go too.
    await withTransaction(env.deps.db, (tx) => tx.update(positions).set({ status: "CLOSED" }));
    const second = await sendOrder("order-2");
    assert.deepEqual([...first].sort(), USERS, "every admitted account is sent once");
    assert.deepEqual([...second].sort(), USERS);
    assert.notEqual(first[0], second[0], `${first} then ${second}: not the same account first`);
    // Wrapping around keeps client order from the starting point.
    const rotation = [...USERS, ...USERS];
    assert.deepEqual(second, rotation.slice(rotation.indexOf(second[0]), rotation.indexOf(second[0]) + 3));
  } finally {
    await env.close();
  }
});
