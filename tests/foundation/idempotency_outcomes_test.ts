/**
 * Idempotency-Key on work whose effect lies outside the database (a venue
 * order), through the real adapter and the VENUE_A simulator:
 * - an uncertain outcome (the answer was lost) is final for the key: a retry
 *   replays it and never sends a second order;
 * - an outcome where nothing happened (the venue was down) frees the key;
 * - a request that is merely slow keeps its key past the lease (renewal);
 * - a stalled owner whose lease ran out is fenced out after a takeover.
 */
import assert from "node:assert/strict";
import type { Context } from "hono";
import { withTransaction } from "../../db/client.ts";
import { settings } from "../../db/schema.ts";
import { AnsweredMeanwhile, IdempotentAnswer } from "../../domain/idempotency/idempotency_keys.ts";
import { callVenue } from "../../domain/venues/call_venue.ts";
import { type AppEnv, partnerCtx } from "../../routes/env.ts";
import { idempotent } from "../../routes/middleware/idempotency.ts";
import { idempotentJson } from "../../routes/respond.ts";
import type { VenueCredentials } from "../../venues/types.ts";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { asPartner, createPartner, expectError, expectJson, type TestPartner } from "../_helpers/http.ts";

const LEASE_MS = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface VenueOrderRoute {
  runs: number;
  gate?: Promise<void>;
}

/** A test-only IK route shaped like an order execution: claim the key, then send a market order. */
function mountVenueOrder(app: TestEnv["app"], credentials: () => VenueCredentials, route: VenueOrderRoute) {
  app.post("/v1/test/venue-order", idempotent({ leaseMs: LEASE_MS }), (c: Context<AppEnv>) => {
    const { clientOrderId } = c.get("jsonBody") as { clientOrderId: string };
    return idempotentJson(c, 201, async (ctx) => {
      await ctx.idempotency!.claim();
      // Only the first run waits at the gate: a wrongful second run must answer, not hang the test.
      if (++route.runs === 1 && route.gate) await route.gate;
      const order = await callVenue(ctx, "VENUE_A", (venue) =>
        venue.placeOrder(credentials(), {
          symbol: "BTCUSDT",
          side: "BUY",
          type: "MARKET",
          quantity: "0.010",
          reduceOnly: false,
          clientOrderId,
        }));
      await withTransaction(ctx.db, (tx) => ctx.idempotency!.record(tx, order));
      return order;
    }, (order) => ({ orderId: order.orderId, requestId: partnerCtx(c).requestId }));
  });
}

async function venueAccount(env: TestEnv): Promise<{ apiKey: string; credentials: VenueCredentials }> {
  const control = (method: string, path: string, body?: unknown) =>
    fetch(`${env.venueUrls.venueA}/_control${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then((response) => response.json());
  const { apiKey, apiSecret } = await control("POST", "/accounts", {});
  await env.deps.venues.VENUE_A.listMarkets();
  return {
    apiKey,
    credentials: {
      scheme: "API_KEY",
      apiKey,
      sealedApiSecret: await env.deps.secrets.seal(apiSecret, `test_credentials/${apiKey}/api_secret`),
    },
  };
}

async function simulator(env: TestEnv, method: string, path: string, body?: unknown) {
  const response = await fetch(`${env.venueUrls.venueA}/_control${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return await response.json();
}

async function setup(route: VenueOrderRoute) {
  const account = { apiKey: "", credentials: null as VenueCredentials | null };
  const mount = (app: TestEnv["app"]) => mountVenueOrder(app, () => account.credentials!, route);
  const env = await startTestEnv({ extend: mount });
  // A second instance on the same database: its duplicates meet the key in the database, not in memory.
  const twin = await startTestEnv({ databaseUrl: env.databaseUrl, extend: mount });
  twin.deps.venues = env.deps.venues; // both instances trade on one simulated venue account
  Object.assign(account, await venueAccount(env));
  const partner = await createPartner(env);
  const send = (key: string, clientOrderId: string, through: TestEnv = env) =>
    asPartner(through, partner.partnerId, partner.clientId, partner.clientSecret)
      .call("POST", "/v1/test/venue-order", { body: { clientOrderId }, headers: { "idempotency-key": key } });
  const ordersAtVenue = async () =>
    ((await simulator(env, "GET", `/accounts/${account.apiKey}`)) as { orders: unknown[] }).orders.length;
  const close = async () => {
    await twin.close();
    await env.close();
  };
  return { env, twin, send, ordersAtVenue, close };
}

Deno.test("an uncertain venue outcome is final for its key: the retry replays it and sends nothing", async () => {
  const route: VenueOrderRoute = { runs: 0 };
  const { env, twin, send, ordersAtVenue, close } = await setup(route);
  try {
    await simulator(env, "PUT", "/faults", { mode: "LOSE_RESPONSE" });
    const first = await send("key-uncertain-1", "lost-order-1");
    const error = await expectError(first, 503, "PROVIDER_DOWN");
    assert.match(error.error.message, /intenção/);
    await simulator(env, "PUT", "/faults", { mode: "NONE" });
    const retry = await send("key-uncertain-1", "lost-order-1", twin);
    assert.equal(retry.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(await expectError(retry, 503, "PROVIDER_DOWN"), error);
    assert.equal(route.runs, 1, "the retry did not run the action again");
    assert.equal(await ordersAtVenue(), 1, "exactly one order reached the venue");
  } finally {
    await close();
  }
});

Deno.test("a venue outcome where nothing happened frees the key for a retry", async () => {
  const route: VenueOrderRoute = { runs: 0 };
  const { env, twin, send, ordersAtVenue, close } = await setup(route);
  try {
    await simulator(env, "PUT", "/faults", { mode: "DOWN" });
    await expectError(await send("key-down-1", "down-order-1"), 503, "PROVIDER_DOWN");
    await simulator(env, "PUT", "/faults", { mode: "NONE" });
    const retry = await expectJson(await send("key-down-1", "down-order-1", twin), 201);
    assert.ok(retry.orderId);
    assert.equal(route.runs, 2);
    assert.equal(await ordersAtVenue(), 1);
  } finally {
    await close();
  }
});

Deno.test("a request blocked past its lease keeps the key: a duplicate waits, then replays", async () => {
  let open!: () => void;
  const route: VenueOrderRoute = { runs: 0, gate: new Promise<void>((resolve) => (open = resolve)) };
  const { twin, send, ordersAtVenue, close } = await setup(route);
  try {
    const first = send("key-slow-1", "slow-order-1");
    while (route.runs === 0) await sleep(5);
    await sleep(LEASE_MS * 4); // the lease alone would have run out three times over
    await expectError(await send("key-slow-1", "slow-order-1", twin), 409, "IDEMPOTENCY_IN_PROGRESS");
    open();
    const answer = await expectJson(await first, 201);
    const replay = await send("key-slow-1", "slow-order-1", twin);
    assert.equal(replay.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(await expectJson(replay, 201), answer);
    assert.equal(route.runs, 1);
    assert.equal(await ordersAtVenue(), 1);
  } finally {
    await close();
  }
});

Deno.test("a stalled owner is fenced out: after a takeover it can neither answer nor release the key", async () => {
  const env = await startTestEnv();
  let partner: TestPartner;
  try {
    partner = await createPartner(env);
    const db = env.deps.db;
    const scope = { partnerId: partner.partnerId, route: "POST /v1/test/fenced", key: "key-fenced-1" };
    const answerFor = () => {
      const answer = new IdempotentAnswer(db, scope, "same-body-hash", env.clock.now(), LEASE_MS);
      answer.encodeWith((output) => ({ status: 201, body: JSON.stringify(output) }));
      return answer;
    };
    const stalled = answerFor();
    await stalled.claim();
    const rival = answerFor();
    await assert.rejects(rival.claim(), AnsweredMeanwhile, "no takeover beside a live owner");

    stalled.endLease(); // as if its process froze: nobody renews the lease
    await sleep(LEASE_MS * 2);
    await rival.claim();
    await assert.rejects(
      withTransaction(db, async (tx) => {
        await tx.insert(settings).values({ key: "stalled-effect", value: "x" });
        await stalled.record(tx, { by: "stalled" });
      }),
      AnsweredMeanwhile,
    );
    await stalled.release(); // must not free the rival's key
    await withTransaction(db, async (tx) => {
      await tx.insert(settings).values({ key: "rival-effect", value: "x" });
      await rival.record(tx, { by: "rival" });
    });
    rival.endLease();
    const effects = (await db.read.select().from(settings)).map((row) => row.key);
    assert.ok(!effects.includes("stalled-effect"), "the fenced owner's effect rolled back");
    assert.ok(effects.includes("rival-effect"));
    const late = answerFor();
    await assert.rejects(late.claim(), (error: AnsweredMeanwhile) => {
      assert.equal(error.row?.state, "DONE");
      assert.equal(error.row?.responseBody, JSON.stringify({ by: "rival" }));
      return true;
    });
  } finally {
    await env.close();
  }
});
