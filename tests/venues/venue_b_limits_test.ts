/**
 * VENUE_B's rate limits in the simulator, as the venue's "Rate limits and user
 * limits" page states them (venues/sim/venue_b/limits.ts): the IP's 1,200
 * weight a minute answered 429 with a JSON `null` body, history reads weighing
 * 1 more per 20 items returned, an expired action weighing five times, and
 * the per-address budget of L1 actions with its throttled request every 10
 * seconds and the cancels' higher cap. The adapter charges history reads by
 * what they return and maps both refusals to RATE_LIMITED.
 */
import assert from "node:assert/strict";
import { HttpTransport, InfoClient } from "@nktkas/hyperliquid";
import { type RequestBudget, VenueError } from "../../venues/types.ts";
import { signL1Action } from "../../venues/venue_b/signing.ts";
import { connectClient, startSim, testNonce } from "./venue_b_fixture.ts";
import { EgressBudget } from "../../domain/venues/egress_budget.ts";
import { startTestEnv } from "../_helpers/env.ts";

const limitsOf = (sim: ReturnType<typeof startSim>, user?: string) =>
  sim.control<{ ipWeightUsed: number; requestsUsed?: number; enabled: boolean; ipWeightPerMinute: number }>(
    "GET",
    `/limits${user ? `?user=${user}` : ""}`,
  );

type Connected = Awaited<ReturnType<typeof connectClient>>;

/** A BTC long of 0.001 with `payments` funding payments on it: a funding history of that many items. */
async function openWithFundings(
  sim: ReturnType<typeof startSim>,
  adapter: Connected["adapter"],
  credentials: Connected["credentials"],
  payments: number,
) {
  await sim.control("PUT", "/markets/BTC", { markPrice: "65000", bid: "64999", ask: "65001" });
  await adapter.placeOrder(credentials, {
    symbol: "BTCUSDC",
    side: "BUY",
    type: "MARKET",
    quantity: "0.001",
    reduceOnly: false,
    clientOrderId: "open-1",
  });
  for (let i = 0; i < payments; i++) await sim.control("POST", "/funding", { coin: "BTC", rate: "0.0001" });
}

function rateLimited(error: unknown): boolean {
  return error instanceof VenueError && error.kind === "RATE_LIMITED";
}

Deno.test("VENUE_B simulator limits the IP's weight a minute at the published 1,200 and answers 429 with null", async () => {
  await using sim = startSim();
  const limits = await limitsOf(sim);
  assert.deepEqual([limits.enabled, limits.ipWeightPerMinute, limits.ipWeightUsed], [true, 1200, 0]);
  // meta weighs 20: sixty of them are the minute.
  for (let i = 0; i < 60; i++) assert.equal((await sim.post("/info", { type: "meta" })).status, 200);
  assert.equal((await limitsOf(sim)).ipWeightUsed, 1200);
  const refused = await fetch(`${sim.baseUrl}/info`, { method: "POST", body: JSON.stringify({ type: "allMids" }) });
  assert.equal(refused.status, 429);
  assert.match(refused.headers.get("Content-Type") ?? "", /application\/json/);
  assert.equal(await refused.text(), "null");
  assert.equal((await limitsOf(sim)).ipWeightUsed, 1200, "a refused request is not counted");

  // Benches turn it off.
  await sim.control("PUT", "/limits", { enabled: false });
  assert.equal((await sim.post("/info", { type: "meta" })).status, 200);
});

Deno.test("VENUE_B simulator weighs info by type, history by the items returned, an expired action five times", async () => {
  await using sim = startSim();
  const { adapter, credentials, principal, agent } = await connectClient(sim);
  await sim.control("PUT", "/markets/BTC", { markPrice: "65000", bid: "64999", ask: "65001" });
  await adapter.placeOrder(credentials, {
    symbol: "BTCUSDC",
    side: "BUY",
    type: "MARKET",
    quantity: "0.001",
    reduceOnly: false,
    clientOrderId: "open-1",
  });
  for (let i = 0; i < 45; i++) await sim.control("POST", "/funding", { coin: "BTC", rate: "0.0001" });
  const weigh = async (body: unknown) => {
    const before = (await limitsOf(sim)).ipWeightUsed;
    const reply = await sim.post("/info", body);
    assert.equal(reply.status, 200);
    return (await limitsOf(sim)).ipWeightUsed - before;
  };
  assert.equal(await weigh({ type: "l2Book", coin: "BTC" }), 2);
  assert.equal(await weigh({ type: "userRole", user: principal.address }), 60);
  assert.equal(await weigh({ type: "openOrders", user: principal.address }), 20);
  // 45 funding payments: 20 + 2 (one more per whole 20 returned).
  assert.equal(await weigh({ type: "userFunding", user: principal.address, startTime: 0 }), 22);
  assert.equal(await weigh({ type: "userFills", user: principal.address }), 20, "one fill adds nothing");

  const before = (await limitsOf(sim)).ipWeightUsed;
  const action = { type: "noop" };
  const nonce = testNonce();
  const expiresAfter = Date.now() - 1_000;
  const signature = signL1Action(agent.privateKey, { action, nonce, isMainnet: true, expiresAfter });
  const expired = await sim.post("/exchange", { action, nonce, signature, expiresAfter });
  assert.match(JSON.stringify(expired.body), /expired/);
  assert.equal((await limitsOf(sim)).ipWeightUsed - before, 5);
});

Deno.test("VENUE_B simulator limits each address's actions, throttles it to one every 10 s, lets cancels go further", async () => {
  let clock = Date.now();
  await using sim = startSim({ now: () => clock });
  const { adapter, credentials, principal } = await connectClient(sim, { adapter: { now: () => clock } });
  await sim.control("PUT", "/markets/BTC", { markPrice: "65000", bid: "64999", ask: "65001" });
  await sim.control("PUT", "/limits", { addressRequestBuffer: 2 });
  const rest = (clientOrderId: string) =>
    adapter.placeOrder(credentials, {
      symbol: "BTCUSDC",
      side: "BUY",
      type: "LIMIT",
      price: "50000",
      quantity: "0.001",
      reduceOnly: false,
      clientOrderId,
    });
  await rest("a");
  await rest("b");
  assert.equal((await limitsOf(sim, principal.address)).requestsUsed, 2);
  await rest("c"); // over the limit: the throttled request of these 10 seconds
  const refusal = await rest("d").catch((error) => error);
  assert.ok(rateLimited(refusal), String(refusal));
  assert.match(
    (refusal as VenueError).message,
    /Too many cumulative requests sent \(4 > 2\) for cumulative volume traded \$0\.00\. Place taker orders/,
  );
  // Cancels may go on to min(limit + 100000, 2 × limit) = 4.
  await adapter.cancelOrder(credentials, "BTCUSDC", "a");
  clock += 10_000;
  await rest("e");
  assert.ok(rateLimited(await rest("f").catch((error) => error)));
});

Deno.test("VENUE_B adapter charges a history read by the items it returns", async () => {
  await using sim = startSim();
  const spent: number[] = [];
  const charged: number[] = [];
  const budget: RequestBudget = {
    spend: (weight) => Promise.resolve(void spent.push(weight)),
    charge: (weight) => Promise.resolve(void charged.push(weight)),
  };
  const { adapter, credentials } = await connectClient(sim, { adapter: { budget } });
  await openWithFundings(sim, adapter, credentials, 41);
  spent.length = 0;
  charged.length = 0;
  const since = Date.now() - 60_000;
  assert.equal((await adapter.getFunding(credentials, { since })).length, 41);
  assert.deepEqual([spent, charged], [[20], [2]], "41 items: 20 + 2, as the simulator counts it");
  const before = (await limitsOf(sim)).ipWeightUsed;
  await adapter.getFunding(credentials, { since });
  assert.equal((await limitsOf(sim)).ipWeightUsed - before, 22);
});

Deno.test("VENUE_B: the egress budget keeps long history reads under the simulator's 1,200 a minute", async () => {
  const env = await startTestEnv();
  try {
    await using sim = startSim();
    const budget = new EgressBudget(env.deps.db, "VENUE_B", "nat-history", 1200);
    const { adapter, credentials } = await connectClient(sim, { adapter: { budget } });
    // 200 payments: each read weighs 20 + 10 at the venue.
    await openWithFundings(sim, adapter, credentials, 200);
    const since = Date.now() - 60_000;
    let reads = 0;
    for (;;) {
      const refusal = await adapter.getFunding(credentials, { since }).then(() => null, (error) => error);
      if (refusal) {
        assert.ok(rateLimited(refusal), String(refusal));
        assert.equal((refusal as VenueError).detail.venueCode, undefined, "the budget refused, not the venue");
        break;
      }
      reads++;
    }
    const used = (await limitsOf(sim)).ipWeightUsed;
    assert.ok(used <= 1200, `${used} weight in ${reads} reads`);
    assert.ok(reads >= 30, `${reads} reads: the budget's 85 % of the minute is used`);
  } finally {
    await env.close();
  }
});

Deno.test("VENUE_B simulator answers userRateLimit as the SDK reads it: volume, requests used and cap", async () => {
  await using sim = startSim();
  const { adapter, credentials, principal } = await connectClient(sim);
  await sim.control("PUT", "/markets/BTC", { markPrice: "65000", bid: "64999", ask: "65001" });
  await adapter.placeOrder(credentials, {
    symbol: "BTCUSDC",
    side: "BUY",
    type: "MARKET",
    quantity: "0.001",
    reduceOnly: false,
    clientOrderId: "open-1",
  });
  const info = new InfoClient({ transport: new HttpTransport({ apiUrl: sim.baseUrl, isTestnet: false }) });
  // 0.001 at 65001: 65.001 USDC traded earns 65 requests over the 10,000 every address starts with.
  assert.deepEqual(await info.userRateLimit({ user: principal.address }), {
    cumVlm: "65.001",
    nRequestsUsed: 1,
    nRequestsCap: 10_065,
    nRequestsSurplus: 0,
  });
});
