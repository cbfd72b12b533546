/**
 * Issue 29, defect 2: after any crash and one reconciliation, every position
 * the venue holds for a connected account is known to the service and
 * protected, or the service says why (execution-status and an event), and no
 * protective order is left half-cancelled. The process "dies" at a venue call
 * (tests/_helpers/kill_points.ts) or between two domain steps, then recovers
 * as a restarted service would; the venue simulator's own books are the truth
 * (tests/_helpers/position_truth.ts).
 */
import assert from "node:assert/strict";
import { and, eq, sql } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { events, intents, positions } from "../../db/schema.ts";
import { credentialsOf } from "../../domain/accounts/load_account.ts";
import { openPositionFromFill } from "../../domain/execution/protection.ts";
import { sendIntent } from "../../domain/execution/send_intent.ts";
import type { VenueAdapter } from "../../venues/types.ts";
import { VenueError } from "../../venues/types.ts";
import type { TestEnv } from "../_helpers/env.ts";
import { expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import { armKill, describeKill, type KillPoint, ProcessKilled, spyKillPoints } from "../_helpers/kill_points.ts";
import { positionTruth, type VenueBook } from "../_helpers/position_truth.ts";
import { completeSetup, ik, putSetup, readyClient } from "../setup/setup_fixture.ts";
import { anaAtVenueA, engineCtx, opening } from "./execution_fixture.ts";

/** ana on VENUE_A with a setup that lets her open 0.003 BTC by hand, break-even on. */
async function trading() {
  const { env, partner, keys } = await readyClient();
  await expectJson(await putSetup(partner, completeSetup({ maxMarginPerTradeUsd: 100, autoBreakEven: true })), 200);
  const ana = await anaAtVenueA(env, partner.partnerId);
  return { env, partner, apiKey: keys.apiKey, ...ana };
}
type World = Awaited<ReturnType<typeof trading>>;

const execute = (partner: TestPartner, body: Record<string, unknown>, headers = ik()) =>
  partner.call("POST", "/v1/orders/execute", { body, headers });

const runJob = (env: TestEnv, name: string) => operator(env, "POST", `/operator/v1/jobs/${name}/run`);

async function market(env: TestEnv, markPrice: string) {
  const response = await fetch(`${env.venueUrls.venueA}/_control/markets/BTCUSDT`, {
    method: "PUT",
    body: JSON.stringify({ markPrice }),
  });
  assert.equal(response.status, 200, await response.text());
}

async function book(env: TestEnv, apiKey: string): Promise<VenueBook> {
  const response = await fetch(`${env.venueUrls.venueA}/_control/accounts/${apiKey}`);
  assert.equal(response.status, 200);
  return await response.json();
}

/** The truth as the crash harness checks it: the venue's books, execution-status and the records. */
async function truth(world: World): Promise<string[]> {
  const status = await expectJson(await world.partner.call("GET", "/v1/users/ana/execution-status"), 200);
  return await positionTruth(
    "ana",
    world.env.deps.db.read,
    world.client.id,
    await book(world.env, world.apiKey),
    status.positions,
  );
}

/**
 * What a restart finds: by the time the new process runs, a minute has
 * passed since the dead one's sends (its requests in flight are past the
 * venue's window, so a query settles them); then one reconciliation, as the
 * job runs it.
 */
async function restartAndReconcileOnce(env: TestEnv) {
  await withTransaction(
    env.deps.db,
    (tx) => tx.update(intents).set({ sentWallAt: sql`${intents.sentWallAt} - 60000` }),
  );
  await expectJson(await runJob(env, "reconcile"), 200);
}

/** A manual opening (0.003 BTC at 65,010, stop 63,000, targets 67,000 and 69,000), filled and PROTECTED. */
async function opened(world: World) {
  const answer = await expectJson(await execute(world.partner, opening({ intentId: "open-first" })), 200);
  assert.equal(answer.execution.status, "FILLED");
  const [position] = await world.env.deps.db.read.select().from(positions)
    .where(eq(positions.clientId, world.client.id));
  assert.equal(position.protectionStatus, "PROTECTED");
  return position;
}

/** Working protective orders at the venue, as `kind price` (VENUE_A prints two decimals). */
async function waiting(world: World): Promise<string[]> {
  return (await book(world.env, world.apiKey)).algoOrders.filter((order) => order.algoStatus === "NEW")
    .map((order) => `${order.orderType} ${Number(order.triggerPrice)}`).sort();
}

/**
 * Venue calls the dead process still had in flight when it was killed (a
 * flow's concurrent legs, past their kill point, awaiting a read before their
 * send), counted so the restart waits for them: by the time the new process
 * runs, a minute has passed and whatever the dead one sent has landed.
 */
function trackInFlight(env: TestEnv) {
  const venue = env.deps.venues.VENUE_A;
  const pending = new Set<Promise<unknown>>();
  env.deps.venues.VENUE_A = new Proxy(venue, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const result = value.apply(target, args);
        if (!(result instanceof Promise)) return result;
        const settled = result.catch(() => {}).finally(() => pending.delete(settled));
        pending.add(settled);
        return result;
      };
    },
  });
  return {
    async settled() {
      while (pending.size) await Promise.all([...pending]);
    },
    restore() {
      env.deps.venues.VENUE_A = venue;
    },
  };
}

/**
 * Run `flow` once to learn its kill points, then once per kill point in a
 * fresh world: killed there, restarted, reconciled once, the truth must hold
 * (and `check` too, right after the kill, before any recovery).
 */
async function atEveryKillPoint(
  t: Deno.TestContext,
  prepare: (world: World) => Promise<void>,
  flow: (world: World) => Promise<unknown>,
  check?: (world: World, point: KillPoint) => Promise<void>,
) {
  const first = await trading();
  let points: KillPoint[];
  try {
    await prepare(first);
    const spy = spyKillPoints(first.env);
    await flow(first);
    points = spy.points();
    assert.ok(points.length > 0, "the flow makes venue calls");
    assert.deepEqual(await truth(first), [], "without a kill");
  } finally {
    await first.env.close();
  }
  for (const point of points) {
    await t.step(`killed ${describeKill(point)}`, async () => {
      const world = await trading();
      try {
        await prepare(world);
        const inFlight = trackInFlight(world.env);
        const kill = armKill(world.env, point);
        await flow(world).catch((error) => {
          if (!(error instanceof ProcessKilled)) throw error;
        });
        await inFlight.settled();
        kill.restart();
        inFlight.restore();
        assert.ok(kill.fired, "the kill point was reached");
        await check?.(world, point);
        await restartAndReconcileOnce(world.env);
        assert.deepEqual(await truth(world), []);
      } finally {
        await world.env.close();
      }
    });
  }
}

Deno.test("recovery: an opening killed at any of its venue calls is known and protected after one reconciliation", async (t) => {
  await atEveryKillPoint(t, async () => {}, async (world) => {
    const answer = await execute(world.partner, opening({ intentId: "open-killed" }));
    if (answer.status === 500) throw new ProcessKilled("the opening");
    await expectJson(answer, 200);
  });
});

Deno.test("recovery: a position whose process died before its stop and targets were recorded gets all of them", async () => {
  const world = await trading();
  try {
    const ctx = engineCtx(world.env);
    const plan = {
      stopLossPrice: "63000",
      takeProfits: [{ price: "67000", share: "0.5" }, { price: "69000", share: "0.5" }],
    };
    const filled = await sendIntent(
      ctx,
      await world.record(world.draft("entry-died-1", { protectionPlan: plan })),
      world.account,
    );
    assert.equal(filled.status, "FILLED");
    await openPositionFromFill(ctx, filled, { ...plan, autoBreakEven: false, signalId: null });
    // The process dies here: the position is recorded (and announced), its protective orders are not.
    await restartAndReconcileOnce(world.env);
    assert.deepEqual(await truth(world), []);
    assert.deepEqual(await waiting(world), [
      "STOP_MARKET 63000",
      "TAKE_PROFIT_MARKET 67000",
      "TAKE_PROFIT_MARKET 69000",
    ]);
  } finally {
    await world.env.close();
  }
});

Deno.test("recovery: a position opened while the reconciliation was reading the account is kept, not closed", async () => {
  const world = await trading();
  const adapter = world.env.deps.venues.VENUE_A;
  try {
    // The reconciliation reads the account; before it goes on, an opening (another request, or another
    // instance) fills and is protected.
    let armed = true;
    let answer: Record<string, unknown> | undefined;
    const racing = Object.create(adapter) as VenueAdapter;
    racing.getAccount = async (credentials) => {
      const snapshot = await adapter.getAccount(credentials);
      if (armed) {
        armed = false;
        answer = await expectJson(await execute(world.partner, opening({ intentId: "open-race" })), 200);
      }
      return snapshot;
    };
    world.env.deps.venues.VENUE_A = racing;
    await expectJson(await runJob(world.env, "reconcile"), 200);
    world.env.deps.venues.VENUE_A = adapter;
    assert.equal((answer?.execution as { status: string }).status, "FILLED");
    assert.deepEqual(await truth(world), []);
    await expectJson(await runJob(world.env, "reconcile"), 200);
    assert.deepEqual(await truth(world), []);
    const [position] = await world.env.deps.db.read.select().from(positions)
      .where(eq(positions.clientId, world.client.id));
    assert.deepEqual([position.status, position.protectionStatus], ["OPEN", "PROTECTED"]);
  } finally {
    world.env.deps.venues.VENUE_A = adapter;
    await world.env.close();
  }
});

Deno.test("recovery: the break-even move never leaves the position without a working stop, whatever the kill", async (t) => {
  await atEveryKillPoint(
    t,
    async (world) => {
      await opened(world);
      // The first target (67,000) fills: the next reconciliation moves the stop to the entry price.
      await market(world.env, "67100");
    },
    async (world) => {
      const answer = await runJob(world.env, "reconcile");
      if (answer.status === 500) throw new ProcessKilled("the reconciliation");
      await expectJson(answer, 200);
    },
    async (world) => {
      assert.equal((await waiting(world)).filter((order) => order.startsWith("STOP_MARKET")).length >= 1, true);
    },
  );
});

Deno.test("recovery: SET_TAKE_PROFIT killed at any of its venue calls leaves the targets the position names working", async (t) => {
  await atEveryKillPoint(t, async (world) => void await opened(world), async (world) => {
    const answer = await execute(world.partner, {
      externalUserId: "ana",
      type: "SET_TAKE_PROFIT",
      providerId: "VENUE_A",
      symbol: "BTCUSDT",
      positionSide: "BUY",
      takeProfits: [{ price: 68000, share: 1 }],
    });
    if (answer.status === 500) throw new ProcessKilled("SET_TAKE_PROFIT");
    await expectJson(answer, 200);
  });
});

Deno.test("recovery: SET_STOP_LOSS killed at any of its venue calls leaves the position with a working stop", async (t) => {
  await atEveryKillPoint(
    t,
    async (world) => void await opened(world),
    async (world) => {
      const answer = await execute(world.partner, {
        externalUserId: "ana",
        type: "SET_STOP_LOSS",
        providerId: "VENUE_A",
        symbol: "BTCUSDT",
        positionSide: "BUY",
        stopLossPrice: 64000,
      });
      if (answer.status === 500) throw new ProcessKilled("SET_STOP_LOSS");
      await expectJson(answer, 200);
    },
    async (world) => {
      assert.equal((await waiting(world)).filter((order) => order.startsWith("STOP_MARKET")).length >= 1, true);
    },
  );
});

Deno.test("recovery: closing killed at any of its venue calls leaves no protective order working", async (t) => {
  await atEveryKillPoint(t, async (world) => void await opened(world), async (world) => {
    const closed = await execute(world.partner, {
      externalUserId: "ana",
      type: "CLOSE_POSITION",
      providerId: "VENUE_A",
      symbol: "BTCUSDT",
    });
    if (closed.status === 500) throw new ProcessKilled("CLOSE_POSITION");
    await expectJson(closed, 200);
    const answer = await runJob(world.env, "reconcile");
    if (answer.status === 500) throw new ProcessKilled("the reconciliation");
    await expectJson(answer, 200);
  });
});

Deno.test("recovery: a protective order whose cancel failed when its position closed is cancelled by the next reconciliation", async () => {
  const world = await trading();
  const adapter = world.env.deps.venues.VENUE_A;
  try {
    await opened(world);
    await expectJson(
      await execute(world.partner, {
        externalUserId: "ana",
        type: "CLOSE_POSITION",
        providerId: "VENUE_A",
        symbol: "BTCUSDT",
      }),
      200,
    );
    // The reconciliation closes the position; the venue does not answer the second cancel.
    let cancels = 0;
    const flaky = Object.create(adapter) as VenueAdapter;
    flaky.cancelProtection = (credentials, symbol, clientOrderId) => {
      if (++cancels === 2) throw new VenueError("UNAVAILABLE", "The venue did not answer", { providerId: "VENUE_A" });
      return adapter.cancelProtection(credentials, symbol, clientOrderId);
    };
    world.env.deps.venues.VENUE_A = flaky;
    await expectJson(await runJob(world.env, "reconcile"), 200);
    world.env.deps.venues.VENUE_A = adapter;
    await expectJson(await runJob(world.env, "reconcile"), 200);
    assert.deepEqual(await truth(world), []);
    assert.deepEqual(await waiting(world), []);
  } finally {
    world.env.deps.venues.VENUE_A = adapter;
    await world.env.close();
  }
});

Deno.test("recovery: a venue position no intent of the service explains is reported once, in execution-status and an event", async () => {
  const world = await trading();
  try {
    const venue = world.env.deps.venues.VENUE_A;
    const credentials = credentialsOf(world.account);
    // Opened at the venue by someone else (the client, another tool): the service sent nothing for it.
    await venue.placeOrder(credentials, {
      symbol: "BTCUSDT",
      side: "SELL",
      type: "MARKET",
      quantity: "0.002",
      reduceOnly: false,
      clientOrderId: "elsewhere-1",
    });
    await expectJson(await runJob(world.env, "reconcile"), 200);
    await expectJson(await runJob(world.env, "reconcile"), 200);
    assert.deepEqual(await truth(world), []);
    const status = await expectJson(await world.partner.call("GET", "/v1/users/ana/execution-status"), 200);
    assert.equal(status.positions.length, 1);
    const [external] = status.positions;
    assert.deepEqual([external.symbol, external.side, external.quantity], ["BTCUSDT", "SHORT", 0.002]);
    assert.equal(external.protection.status, "UNKNOWN");
    assert.match(external.protection.reason, /não foi aberta pelo serviço/);
    const announced = async (type: string) =>
      (await world.env.deps.db.read.select().from(events).where(eq(events.eventType, type)))
        .filter((event) => (event.data as { positionId?: string }).positionId === external.positionId);
    assert.equal((await announced("protection.degraded")).length, 1, "reported once, however often reconciled");

    // Closed at the venue: gone from execution-status, and its end announced.
    await venue.placeOrder(credentials, {
      symbol: "BTCUSDT",
      side: "BUY",
      type: "MARKET",
      quantity: "0.002",
      reduceOnly: true,
      clientOrderId: "elsewhere-2",
    });
    await expectJson(await runJob(world.env, "reconcile"), 200);
    const after = await expectJson(await world.partner.call("GET", "/v1/users/ana/execution-status"), 200);
    assert.deepEqual(after.positions, []);
    assert.equal((await announced("position.closed")).length, 1);
    assert.deepEqual(await truth(world), []);
  } finally {
    await world.env.close();
  }
});

Deno.test("recovery: a filled entry the process never recorded is adopted once: position, protection, position.opened", async () => {
  const world = await trading();
  try {
    const kill = armKill(world.env, { at: "placeOrder", nth: 1, when: "after" });
    const answer = await execute(world.partner, opening({ intentId: "open-unrecorded" }));
    kill.restart();
    assert.equal(answer.status, 500, "the process died with the venue's answer");
    await restartAndReconcileOnce(world.env);
    await expectJson(await runJob(world.env, "reconcile"), 200);
    assert.deepEqual(await truth(world), []);
    const [entry] = await world.env.deps.db.read.select().from(intents)
      .where(and(eq(intents.clientId, world.client.id), eq(intents.intentId, "open-unrecorded")));
    assert.equal(entry.status, "FILLED");
    const [position] = await world.env.deps.db.read.select().from(positions)
      .where(eq(positions.entryIntentId, entry.id));
    assert.equal(position.protectionStatus, "PROTECTED");
    const opens = (await world.env.deps.db.read.select().from(events).where(eq(events.eventType, "position.opened")))
      .filter((event) => (event.data as { positionId: string }).positionId === position.positionId);
    assert.equal(opens.length, 1);
  } finally {
    await world.env.close();
  }
});
