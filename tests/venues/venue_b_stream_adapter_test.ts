/**
 * VENUE_B's watchAccount against the simulator over real HTTP/WebSocket: a
 * user with subscriptions of its own gets every change pushed; users beyond
 * the per-IP user limit get their fills from the public trades naming them;
 * drops are reported and restored; closing frees what the watch held. Every
 * test ends with nothing open (Deno's sanitizers check it).
 */
import assert from "node:assert/strict";
import type { AccountPush, AccountWatch, VenueAdapter } from "../../venues/types.ts";
import { createVenueBAdapter, type VenueBAdapterDeps } from "../../venues/venue_b/adapter.ts";
import { cloidFromClientOrderId } from "../../venues/venue_b/mappers.ts";
import { streamUrlOf } from "../../venues/venue_b/stream.ts";
import { type Client, connectClient, newSecretBox, type SimHandle, startSim } from "./venue_b_fixture.ts";
import { RecordingWatcher, WAIT_MS, WsProbe, wsUrl } from "./venue_b_stream_fixture.ts";

const FULL = { orders: true, funding: true };
const FILLS_ONLY = { orders: false, funding: false };

/** Clocks short enough for tests: reconnections within tens of milliseconds. */
const TIMING = { reconnectMinMs: 20, reconnectMaxMs: 200, subscribeTimeoutMs: 2_000 };

/** The adapter that watches, as a service has one: its own, apart from the clients' trading adapters. */
async function watchingAdapter(sim: SimHandle, stream: VenueBAdapterDeps["stream"] = {}): Promise<VenueAdapter> {
  return createVenueBAdapter({
    baseUrl: sim.baseUrl,
    secrets: await newSecretBox(),
    stream: { ...stream, timing: { ...TIMING, ...stream.timing } },
  });
}

/** Watches that a test closes whatever happens. */
class Watches implements AsyncDisposable {
  readonly #open: AccountWatch[] = [];

  watch(adapter: VenueAdapter, client: Client): RecordingWatcher {
    const watcher = new RecordingWatcher();
    this.#open.push(adapter.watchAccount!(client.credentials, watcher));
    return watcher;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await Promise.all(this.#open.map((watch) => watch.close()));
  }

  /** The watch opened `index`-th. */
  at(index: number): AccountWatch {
    return this.#open[index];
  }
}

type Streams = { connections: { subscriptions: { type: string; user?: string; coin?: string }[] }[] };

async function streamsAt(sim: SimHandle): Promise<Streams["connections"]> {
  return (await sim.control<Streams>("GET", "/ws")).connections;
}

/** Retries `check` until it passes or WAIT_MS has gone by. */
async function eventually(check: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

const isOrder = (clientOrderId: string, status: string) => (push: AccountPush) =>
  push.kind === "ORDER" && push.clientOrderId === cloidFromClientOrderId(clientOrderId) && push.status === status;

Deno.test("VENUE_B watchAccount pushes every order change and funding of a user with its own subscriptions", async () => {
  await using sim = startSim();
  const client = await connectClient(sim);
  const adapter = await watchingAdapter(sim);
  await using watches = new Watches();
  const watcher = watches.watch(adapter, client);
  assert.deepEqual(await watcher.live(), FULL);
  // The principal's address, never the agent's.
  assert.deepEqual((await streamsAt(sim)).map((c) => c.subscriptions), [[
    { type: "orderUpdates", user: client.principal.address },
    { type: "userEvents", user: client.principal.address },
  ]]);

  const { adapter: trading, credentials } = client;
  const sol = { symbol: "SOLUSDC", side: "BUY" as const, reduceOnly: false, quantity: "1" };
  await trading.placeOrder(credentials, { ...sol, type: "LIMIT", price: "140", clientOrderId: "rest" });
  const placed = await watcher.push(isOrder("rest", "NEW"), 0, "the resting order");
  assert.equal(placed.kind === "ORDER" && placed.symbol, "SOLUSDC");
  await trading.cancelOrder(credentials, "SOLUSDC", "rest");
  await watcher.push(isOrder("rest", "CANCELED"), 0, "its cancel");

  await trading.placeOrder(credentials, { ...sol, type: "MARKET", clientOrderId: "long" });
  await watcher.push(isOrder("long", "FILLED"), 0, "the market order filled");
  await watcher.push((push) => push.kind === "TRADE" && push.symbol === "SOLUSDC", 0, "its fill");

  await sim.control("POST", "/funding", { coin: "SOL", rate: "0.0001" });
  await watcher.push((push) => push.kind === "FUNDING", 0, "the funding payment");

  await trading.placeProtection(credentials, {
    symbol: "SOLUSDC",
    kind: "STOP_LOSS",
    side: "SELL",
    triggerPrice: "140",
    quantity: "1",
    clientOrderId: "stop",
  });
  // The venue's orderUpdates do not say an open order waits for a trigger: it reads NEW.
  await watcher.push(isOrder("stop", "NEW"), 0, "the stop resting");
  const armed = watcher.reports.length;
  await sim.control("PUT", "/markets/SOL", { markPrice: "139.5" });
  // Fired ("triggered": NEW again, the order now executes), then filled: the consumer reads the fill.
  await watcher.push(isOrder("stop", "FILLED"), armed, "the stop filled");
  assert.deepEqual(
    watcher.pushes.slice(-3).map((
      push,
    ) => [push.kind, push.kind === "ORDER" ? push.status : "symbol" in push && push.symbol]),
    [["ORDER", "NEW"], ["TRADE", "SOLUSDC"], ["ORDER", "FILLED"]],
  );
  assert.equal(watcher.reports.filter((report) => report.kind !== "push").length, 1, "one onLive, no onLost");
});

Deno.test("VENUE_B users beyond the own-subscription slots get TRADE pushes from the trades naming either side", async () => {
  await using sim = startSim();
  const [own, buyer, seller] = [await connectClient(sim), await connectClient(sim), await connectClient(sim)];
  const adapter = await watchingAdapter(sim, { maxOwnUsers: 1 });
  await using watches = new Watches();
  const ownWatcher = watches.watch(adapter, own);
  assert.deepEqual(await ownWatcher.live(), FULL);
  const buyerWatcher = watches.watch(adapter, buyer);
  const sellerWatcher = watches.watch(adapter, seller);
  assert.deepEqual(await buyerWatcher.live(), FILLS_ONLY);
  assert.deepEqual(await sellerWatcher.live(), FILLS_ONLY);
  // One connection per own user, and one shared by everyone else: trades of every listed coin.
  assert.deepEqual((await streamsAt(sim)).map((c) => c.subscriptions.map((s) => s.user ?? s.coin)).sort(), [
    [own.principal.address, own.principal.address],
    ["BTC", "ETH", "SOL"],
  ]);

  const market = { symbol: "ETHUSDC", type: "MARKET" as const, reduceOnly: false, quantity: "0.5" };
  await buyer.adapter.placeOrder(buyer.credentials, { ...market, side: "BUY", clientOrderId: "b" });
  assert.deepEqual(
    { ...await buyerWatcher.push((push) => push.kind === "TRADE", 0, "the buyer's trade"), at: 0 },
    { kind: "TRADE", symbol: "ETHUSDC", at: 0 },
  );
  await seller.adapter.placeOrder(seller.credentials, { ...market, side: "SELL", clientOrderId: "s" });
  await sellerWatcher.push((push) => push.kind === "TRADE" && push.symbol === "ETHUSDC", 0, "the seller's trade");
  // An order change that trades nothing is not pushed to them (their coverage said so).
  await buyer.adapter.placeOrder(buyer.credentials, {
    ...market,
    type: "LIMIT",
    price: "2500",
    side: "BUY",
    clientOrderId: "quiet",
  });
  await buyer.adapter.cancelOrder(buyer.credentials, "ETHUSDC", "quiet");
  await own.adapter.placeOrder(own.credentials, { ...market, side: "BUY", clientOrderId: "o" });
  await ownWatcher.push(isOrder("o", "FILLED"), 0, "the own user's fill");
  assert.deepEqual(buyerWatcher.pushes.map((push) => push.kind), ["TRADE"]);
  assert.deepEqual(sellerWatcher.pushes.map((push) => push.kind), ["TRADE"]);
});

Deno.test("VENUE_B gives 8 of the venue's 10 users per IP their own subscriptions; the 9th rides on the trades", async () => {
  await using sim = startSim();
  const adapter = await watchingAdapter(sim);
  const clients = [];
  for (let index = 0; index < 9; index++) clients.push(await connectClient(sim));
  await using watches = new Watches();
  const watchers = clients.map((client) => watches.watch(adapter, client));
  const coverages = await Promise.all(watchers.map((watcher) => watcher.live()));
  assert.deepEqual(coverages, [...Array(8).fill(FULL), FILLS_ONLY]);
  const { usersByIp } = await sim.control<{ usersByIp: Record<string, string[]> }>("GET", "/ws");
  assert.equal(usersByIp["127.0.0.1"].length, 8);
  assert.equal((await streamsAt(sim)).length, 9, "8 own connections and the shared one: under the venue's 10");
});

Deno.test("VENUE_B: a user the venue refuses (its 10 per IP taken) rides on the trades instead", async () => {
  await using sim = startSim();
  // Nine users tracked by someone else behind the same IP.
  await using other = await WsProbe.open(wsUrl(sim));
  for (let index = 0; index < 9; index++) {
    await other.subscribe({ type: "userEvents", user: `0x${String(index).padStart(40, "0")}` });
  }
  const [first, second] = [await connectClient(sim), await connectClient(sim)];
  const adapter = await watchingAdapter(sim, { maxOwnUsers: 2 });
  await using watches = new Watches();
  const firstWatcher = watches.watch(adapter, first);
  assert.deepEqual(await firstWatcher.live(), FULL);
  const secondWatcher = watches.watch(adapter, second);
  assert.deepEqual(await secondWatcher.live(), FILLS_ONLY, "refused with 'Cannot track more than 10 total users.'");
  await second.adapter.placeOrder(second.credentials, {
    symbol: "BTCUSDC",
    side: "BUY",
    type: "MARKET",
    quantity: "0.001",
    reduceOnly: false,
    clientOrderId: "b",
  });
  await secondWatcher.push((push) => push.kind === "TRADE" && push.symbol === "BTCUSDC", 0, "its trade");
});

Deno.test("VENUE_B reports a dropped connection lost, then live again once resubscribed", async () => {
  await using sim = startSim();
  const [own, shared] = [await connectClient(sim), await connectClient(sim)];
  const adapter = await watchingAdapter(sim, { maxOwnUsers: 1 });
  await using watches = new Watches();
  const ownWatcher = watches.watch(adapter, own);
  const sharedWatcher = watches.watch(adapter, shared);
  await ownWatcher.live();
  await sharedWatcher.live();

  await sim.control("POST", "/ws/drop", { user: own.principal.address });
  assert.match(await ownWatcher.lost(), /^VENUE_B stream closed/);
  assert.deepEqual(await ownWatcher.live(2), FULL);
  assert.equal(sharedWatcher.reports.length, 1, "the other connection was not touched");
  await own.adapter.placeOrder(own.credentials, {
    symbol: "SOLUSDC",
    side: "BUY",
    type: "LIMIT",
    quantity: "1",
    price: "140",
    reduceOnly: false,
    clientOrderId: "after",
  });
  await ownWatcher.push(isOrder("after", "NEW"), 0, "a push after the reconnection");

  // The venue down for a while: attempts fail (503 on upgrade) and back off until it answers again.
  await sim.control("PUT", "/faults", { mode: "DOWN" });
  const before = sharedWatcher.reports.length;
  await sim.control("POST", "/ws/drop", {});
  await sharedWatcher.lost(before);
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.equal(sharedWatcher.reports.slice(before).filter((r) => r.kind === "lost").length, 1, "lost once per outage");
  await sim.control("PUT", "/faults", { mode: "NONE" });
  assert.deepEqual(await sharedWatcher.live(before), FILLS_ONLY);
  assert.deepEqual(await ownWatcher.live(ownWatcher.reports.length - 1), FULL);
});

Deno.test("VENUE_B close() unsubscribes and frees the user's slot for the next watch without one", async () => {
  await using sim = startSim();
  const [first, waiting] = [await connectClient(sim), await connectClient(sim)];
  const adapter = await watchingAdapter(sim, { maxOwnUsers: 1 });
  const firstWatcher = new RecordingWatcher();
  const firstWatch = adapter.watchAccount!(first.credentials, firstWatcher);
  await firstWatcher.live();
  const waitingWatcher = new RecordingWatcher();
  const waitingWatch = adapter.watchAccount!(waiting.credentials, waitingWatcher);
  assert.deepEqual(await waitingWatcher.live(), FILLS_ONLY);

  await firstWatch.close();
  assert.deepEqual(await waitingWatcher.live(1), FULL, "promoted to the freed slot");
  // The trades connection ends once nobody rides on it; the venue sees it go a moment later.
  await eventually(async () =>
    assert.deepEqual((await streamsAt(sim)).map((c) => c.subscriptions), [[
      { type: "orderUpdates", user: waiting.principal.address },
      { type: "userEvents", user: waiting.principal.address },
    ]], "the first user's subscriptions and the trades are gone")
  );
  const reportsAtClose = firstWatcher.reports.length;

  await waitingWatch.close();
  assert.deepEqual(await streamsAt(sim), [], "no connection remains once no watch does");
  await waitingWatch.close();
  assert.equal(firstWatcher.reports.length, reportsAtClose, "nothing is reported after close");
});

Deno.test("VENUE_B pings keep a quiet connection open past the venue's idle timeout", async () => {
  await using sim = startSim({ stream: { idleTimeoutMs: 400 } });
  const client = await connectClient(sim);
  const adapter = await watchingAdapter(sim, { timing: { pingIntervalMs: 100 } });
  await using watches = new Watches();
  const watcher = watches.watch(adapter, client);
  await watcher.live();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  assert.deepEqual(watcher.reports.map((report) => report.kind), ["live"]);
  assert.equal((await streamsAt(sim)).length, 1);
});

Deno.test("VENUE_B gives up a connection whose pings go unanswered, and reconnects", async () => {
  await using sim = startSim();
  const client = await connectClient(sim);
  const adapter = await watchingAdapter(sim, {
    timing: { pingIntervalMs: 50, pongTimeoutMs: 300, subscribeTimeoutMs: 300 },
  });
  await using watches = new Watches();
  const watcher = watches.watch(adapter, client);
  await watcher.live();
  // The venue goes silent on an open connection: nothing says it is gone but the missing pong.
  await sim.control("PUT", "/ws", { muted: true });
  assert.equal(await watcher.lost(), "VENUE_B stream: a ping went unanswered");
  await new Promise((resolve) => setTimeout(resolve, 300));
  await sim.control("PUT", "/ws", { muted: false });
  assert.deepEqual(await watcher.live(2), FULL);
  assert.deepEqual(watcher.reports.map((report) => report.kind), ["live", "lost", "live"]);
});

Deno.test("VENUE_B's WebSocket is beside the REST base URL", () => {
  assert.equal(streamUrlOf("https://api.hyperliquid.xyz"), "wss://api.hyperliquid.xyz/ws");
  assert.equal(streamUrlOf("http://127.0.0.1:8080/sim/venue-b/"), "ws://127.0.0.1:8080/sim/venue-b/ws");
});
