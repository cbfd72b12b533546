/**
 * VENUE_A's watchAccount against the simulator over real loopback HTTP and
 * WebSocket: pushes for orders, stops and funding; drops, expiry and the
 * 24-hour cut restored with onLost then onLive; many accounts on one
 * connection; every timer and socket freed by close (the test sanitizers).
 */
import assert from "node:assert/strict";
import {
  type AccountPush,
  type AccountWatch,
  type PushCoverage,
  type VenueAdapter,
  VenueError,
} from "../../venues/types.ts";
import type { StreamTuning } from "../../venues/venue_a/adapter.ts";
import { toAccountPush } from "../../venues/venue_a/mappers.ts";
import type { WireUserEvent } from "../../venues/venue_a/wire.ts";
import { startVenueA, type VenueAHarness } from "./venue_a_harness.ts";

type Seen = { type: "live"; coverage: PushCoverage } | { type: "lost"; reason: string } | {
  type: "push";
  push: AccountPush;
};

/** An AccountWatcher that keeps what it was told, in order, and lets a test wait for it. */
class Recorder {
  readonly seen: Seen[] = [];
  #waiters = new Set<() => void>();

  onPush = (push: AccountPush) => this.#add({ type: "push", push });
  onLive = (coverage: PushCoverage) => this.#add({ type: "live", coverage });
  onLost = (reason: string) => this.#add({ type: "lost", reason });

  #add(seen: Seen): void {
    this.seen.push(seen);
    for (const wake of this.#waiters) wake();
  }

  get pushes(): AccountPush[] {
    return this.seen.flatMap((s) => s.type === "push" ? [s.push] : []);
  }

  count(type: Seen["type"]): number {
    return this.seen.filter((s) => s.type === type).length;
  }

  /** Resolves with the index of the first entry from `from` on matching `match`. */
  waitFor(match: (seen: Seen) => boolean, from = 0, timeoutMs = 4000): Promise<number> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const index = this.seen.findIndex((s, i) => i >= from && match(s));
        if (index < 0) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve(index);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`Not seen within ${timeoutMs} ms; saw ${JSON.stringify(this.seen.slice(from))}`));
      }, timeoutMs);
      this.#waiters.add(check);
      check();
    });
  }

  live(from = 0) {
    return this.waitFor((s) => s.type === "live", from);
  }

  order(clientOrderId: string, status: string, from = 0) {
    return this.waitFor(
      (s) =>
        s.type === "push" && s.push.kind === "ORDER" && s.push.clientOrderId === clientOrderId &&
        s.push.status === status,
      from,
    );
  }
}

/** Fast enough for tests: a keepalive would otherwise wait 30 minutes, a reconnect 250 ms. */
const FAST: Partial<StreamTuning> = { reconnectDelaysMs: [50, 100, 200], keyRetryDelaysMs: [50, 100] };

interface Setup {
  h: VenueAHarness;
  adapter: VenueAdapter;
  watches: AccountWatch[];
  [Symbol.asyncDispose](): Promise<void>;
}

/** The simulator and an adapter on it; disposing closes every watch first, then the simulator. */
async function setup(options: { now?: () => number; stream?: Partial<StreamTuning> } = {}): Promise<Setup> {
  const h = await startVenueA({ now: options.now });
  const adapter = h.adapter({ now: options.now, stream: { ...FAST, ...options.stream } });
  const watches: AccountWatch[] = [];
  return {
    h,
    adapter,
    watches,
    async [Symbol.asyncDispose]() {
      await Promise.all(watches.map((w) => w.close()));
      await h.close();
    },
  };
}

async function watched(s: Setup, accountOptions: Record<string, unknown> = {}) {
  const keys = await s.h.account(accountOptions);
  const recorder = new Recorder();
  const watch = s.adapter.watchAccount!(keys.credentials, recorder);
  s.watches.push(watch);
  await recorder.live();
  return { keys, recorder, watch };
}

/** Polls `predicate` until it holds. */
async function until(predicate: () => boolean | Promise<boolean>, what: string, timeoutMs = 4000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await predicate())) {
    if (performance.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function streams(h: VenueAHarness) {
  return h.control<{
    connections: { id: number; path: string; streams: number }[];
    listenKeys: { apiKey: string; listenKey: string }[];
  }>("GET", "/streams");
}

Deno.test("watchAccount: onLive with full coverage, then ORDER pushes for an order placed, cancelled and filled", async () => {
  await using s = await setup();
  const { keys, recorder } = await watched(s);
  assert.deepEqual(recorder.seen, [{ type: "live", coverage: { orders: true, funding: true } }]);
  const { credentials } = keys;
  await s.adapter.placeOrder(credentials, {
    symbol: "BTCUSDT",
    side: "BUY",
    type: "LIMIT",
    quantity: "0.010",
    price: "60000",
    reduceOnly: false,
    clientOrderId: "lim-1",
  });
  await recorder.order("lim-1", "NEW");
  await s.adapter.cancelOrder(credentials, "BTCUSDT", "lim-1");
  await recorder.order("lim-1", "CANCELED");
  await s.adapter.placeOrder(credentials, {
    symbol: "BTCUSDT",
    side: "BUY",
    type: "MARKET",
    quantity: "0.010",
    reduceOnly: false,
    clientOrderId: "mkt-1",
  });
  await recorder.order("mkt-1", "FILLED");
  const pushes = recorder.pushes;
  assert.deepEqual(pushes.map((p) => p.kind === "ORDER" ? `${p.clientOrderId} ${p.status}` : p.kind), [
    "lim-1 NEW",
    "lim-1 CANCELED",
    "mkt-1 NEW",
    "mkt-1 FILLED",
  ], "a fill's ACCOUNT_UPDATE (reason ORDER) adds no push of its own");
  assert.ok(pushes.every((p) => p.kind === "ORDER" && p.symbol === "BTCUSDT" && p.at > 0));
});

Deno.test("a stop: ORDER pushes by its client id through the trigger, and the triggered order's own fill", async () => {
  await using s = await setup();
  const { keys, recorder } = await watched(s);
  await s.adapter.placeOrder(keys.credentials, {
    symbol: "BTCUSDT",
    side: "BUY",
    type: "MARKET",
    quantity: "0.010",
    reduceOnly: false,
    clientOrderId: "entry",
  });
  await s.adapter.placeProtection(keys.credentials, {
    symbol: "BTCUSDT",
    kind: "STOP_LOSS",
    side: "SELL",
    triggerPrice: "64000",
    quantity: "0.010",
    clientOrderId: "sl-1",
  });
  const placed = await recorder.order("sl-1", "TRIGGER_PENDING");
  await s.h.control("PUT", "/markets/BTCUSDT", { markPrice: "63900" });
  const finished = await recorder.order("sl-1", "FILLED", placed);
  const sequence = recorder.seen.slice(placed, finished + 1).flatMap((seen) =>
    seen.type === "push" && seen.push.kind === "ORDER" ? [`${seen.push.clientOrderId} ${seen.push.status}`] : []
  );
  const triggered = sequence.find((line) => line.startsWith("algo_"))!.split(" ")[0];
  assert.deepEqual(sequence, [
    "sl-1 TRIGGER_PENDING",
    "sl-1 NEW",
    `${triggered} NEW`,
    "sl-1 NEW",
    `${triggered} FILLED`,
    "sl-1 FILLED",
  ], "ALGO_UPDATE (TRIGGERING, TRIGGERED) around ORDER_TRADE_UPDATE of the order the trigger placed");
});

Deno.test("funding pushes FUNDING and a transfer ACCOUNT", async () => {
  await using s = await setup();
  const { keys, recorder } = await watched(s);
  await s.adapter.placeOrder(keys.credentials, {
    symbol: "ETHUSDT",
    side: "SELL",
    type: "MARKET",
    quantity: "1.000",
    reduceOnly: false,
    clientOrderId: "short",
  });
  await recorder.order("short", "FILLED");
  await s.h.control("POST", "/funding", { symbol: "ETHUSDT", rate: "0.0001" });
  await recorder.waitFor((seen) => seen.type === "push" && seen.push.kind === "FUNDING");
  await s.h.control("POST", `/accounts/${keys.apiKey}/transfers`, { asset: "USDT", amount: "100" });
  await recorder.waitFor((seen) => seen.type === "push" && seen.push.kind === "ACCOUNT");
});

Deno.test("a dropped connection: onLost, then onLive once reconnected, and pushes resume", async () => {
  await using s = await setup();
  const { keys, recorder } = await watched(s);
  const from = recorder.seen.length;
  assert.deepEqual(await s.h.control("POST", "/streams/drop", {}), { dropped: 1 });
  const lost = await recorder.waitFor((seen) => seen.type === "lost", from);
  assert.match((recorder.seen[lost] as { reason: string }).reason, /stream connection closed/);
  await recorder.live(lost);
  await s.adapter.placeOrder(keys.credentials, {
    symbol: "BTCUSDT",
    side: "BUY",
    type: "MARKET",
    quantity: "0.010",
    reduceOnly: false,
    clientOrderId: "after-drop",
  });
  await recorder.order("after-drop", "FILLED");
});

Deno.test("while the venue refuses connections the watch stays lost, retrying with backoff, until it is back", async () => {
  await using s = await setup();
  const { recorder } = await watched(s);
  const from = recorder.seen.length;
  await s.h.control("PUT", "/faults", { mode: "DOWN" });
  await s.h.control("POST", "/streams/drop", {});
  await recorder.waitFor((seen) => seen.type === "lost", from);
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.equal(recorder.count("lost"), 1, "one onLost per outage, however many attempts fail");
  assert.equal(recorder.count("live"), 1);
  await s.h.control("PUT", "/faults", { mode: "NONE" });
  await recorder.live(from);
});

Deno.test("an expired key: onLost, a new key, onLive, and the new key's pushes", async () => {
  await using s = await setup();
  const { keys, recorder } = await watched(s);
  const before = (await streams(s.h)).listenKeys.map((k) => k.listenKey);
  const from = recorder.seen.length;
  await s.h.control("POST", "/streams/expire", { apiKey: keys.apiKey });
  const lost = await recorder.waitFor((seen) => seen.type === "lost", from);
  assert.equal((recorder.seen[lost] as { reason: string }).reason, "the listen key expired");
  await recorder.live(lost);
  const after = (await streams(s.h)).listenKeys.map((k) => k.listenKey);
  assert.equal(after.length, 1);
  assert.notEqual(after[0], before[0], "a new key replaced the dead one");
  await s.h.signed("POST", "/fapi/v1/order", {
    symbol: "BTCUSDT",
    side: "BUY",
    type: "MARKET",
    quantity: "0.010",
    newClientOrderId: "renewed",
  }, keys);
  await recorder.order("renewed", "FILLED");
});

/** A fetch that logs the listen key requests, checking each carries the key header and nothing signed. */
function listenKeyLog(apiKey: () => string, log: string[]): typeof fetch {
  return (input, init) => {
    const url = new URL(String(input));
    if (url.pathname === "/fapi/v1/listenKey") {
      log.push(init?.method ?? "GET");
      assert.equal(new Headers(init?.headers).get("X-MBX-APIKEY"), apiKey());
      assert.equal(`${url.search}${init?.body ?? ""}`, "", "USER_STREAM: nothing signed");
    }
    return fetch(input, init);
  };
}

Deno.test("keepalive: a PUT each period, with the API key header alone", async () => {
  const sent: string[] = [];
  await using s = await setup();
  const keys = await s.h.account();
  const adapter = s.h.adapter({ fetch: listenKeyLog(() => keys.apiKey, sent), stream: { ...FAST, keepaliveMs: 100 } });
  const recorder = new Recorder();
  s.watches.push(adapter.watchAccount!(keys.credentials, recorder));
  await recorder.live();
  await until(() => sent.filter((m) => m === "PUT").length >= 3, "three keepalives");
  assert.deepEqual([sent[0], recorder.count("lost")], ["POST", 0]);
});

Deno.test("a key that died while its connection was down is found by the keepalive after reconnecting, and renewed", async () => {
  const sent: string[] = [];
  await using s = await setup();
  const keys = await s.h.account();
  // The keepalive period stays the venue's 30 minutes: only the check after a reconnection can find the dead key.
  const adapter = s.h.adapter({
    fetch: listenKeyLog(() => keys.apiKey, sent),
    // Reconnecting after 300 ms leaves the test time to kill the key while no connection carries it.
    stream: { ...FAST, reconnectDelaysMs: [300], recheckWindowMs: 100 },
  });
  const recorder = new Recorder();
  s.watches.push(adapter.watchAccount!(keys.credentials, recorder));
  await recorder.live();
  // The connection drops and the key dies before the adapter is back: its listenKeyExpired reaches nobody, and
  // the venue takes the dead key at the next handshake and stays silent.
  const from = recorder.seen.length;
  await s.h.control("POST", "/streams/drop", {});
  await s.h.control("POST", "/streams/expire", { apiKey: keys.apiKey });
  await recorder.waitFor((x) => x.type === "lost", from);
  await until(() => sent.filter((m) => m === "POST").length === 2, "a new key asked for");
  assert.deepEqual(sent.slice(0, 3), ["POST", "PUT", "POST"], "the check (PUT, -1125), then a new key");
  // The venue subscribes a connection to live keys only: one stream on it means the new key flows.
  await until(async () => (await streams(s.h)).connections.some((c) => c.streams === 1), "the new key on a connection");
  await recorder.waitFor((x) => x.type === "live", from);
  await s.h.signed("POST", "/fapi/v1/order", {
    symbol: "BTCUSDT",
    side: "BUY",
    type: "MARKET",
    quantity: "0.010",
    newClientOrderId: "after-renewal",
  }, keys);
  await recorder.order("after-renewal", "FILLED");
});

Deno.test("many accounts share one connection", async () => {
  await using s = await setup();
  const watches = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(() => watched(s)));
  await until(async () => (await streams(s.h)).connections.length === 1, "one connection");
  assert.deepEqual((await streams(s.h)).connections.map((c) => [c.path, c.streams]), [["/private/stream", 8]]);
  assert.ok(watches.every((w) => w.recorder.count("lost") === 0));
});

Deno.test("beyond keysPerConnection a second connection opens; each watcher hears its own account only", async () => {
  await using s = await setup({ stream: { keysPerConnection: 3 } });
  const accounts = await Promise.all([0, 1, 2, 3, 4].map(() => s.h.account()));
  const recorders = accounts.map(() => new Recorder());
  accounts.forEach((a, i) => s.watches.push(s.adapter.watchAccount!(a.credentials, recorders[i])));
  await Promise.all(recorders.map((r) => r.live()));
  const open = await streams(s.h);
  assert.deepEqual(open.connections.map((c) => [c.path, c.streams]).sort(), [["/private/stream", 2], [
    "/private/stream",
    3,
  ]]);
  for (const [i, account] of accounts.entries()) {
    await s.h.signed("POST", "/fapi/v1/order", {
      symbol: "SOLUSDT",
      side: "BUY",
      type: "MARKET",
      quantity: "1",
      newClientOrderId: `acct-${i}`,
    }, account);
  }
  await Promise.all(recorders.map((r, i) => r.order(`acct-${i}`, "FILLED")));
  for (const [i, recorder] of recorders.entries()) {
    const ids = new Set(recorder.pushes.flatMap((p) => p.kind === "ORDER" ? [p.clientOrderId] : []));
    assert.deepEqual([...ids], [`acct-${i}`], "each watcher hears its own account only");
  }
});

Deno.test("a key joining a live connection replaces it without a gap for the keys already on it", async () => {
  await using s = await setup();
  const first = await watched(s);
  const before = (await streams(s.h)).connections.map((c) => c.id);
  const second = await watched(s);
  // The replaced connection closes just after the new one opens.
  await until(async () => (await streams(s.h)).connections.length === 1, "the old connection closed");
  const after = await streams(s.h);
  assert.deepEqual(after.connections.map((c) => c.streams), [2], "one connection carries both");
  assert.notDeepEqual(after.connections.map((c) => c.id), before, "the connection was replaced");
  assert.equal(first.recorder.count("lost"), 0, "the new connection opened before the old one closed");
  assert.equal(first.recorder.count("live"), 1);
  await s.h.signed("POST", "/fapi/v1/order", {
    symbol: "BTCUSDT",
    side: "BUY",
    type: "MARKET",
    quantity: "0.010",
    newClientOrderId: "first-still-heard",
  }, first.keys);
  await first.recorder.order("first-still-heard", "FILLED");
  assert.equal(second.recorder.pushes.length, 0);
});

Deno.test("the 24-hour cut on the venue's clock is restored; the adapter's own refresh comes first and costs no gap", async () => {
  let now = Date.UTC(2026, 10, 2, 10);
  const clock = () => now;
  {
    await using s = await setup({ now: clock });
    const { recorder } = await watched(s);
    const from = recorder.seen.length;
    now += 24 * 60 * 60_000;
    await s.h.control("GET", "/streams");
    await recorder.waitFor((seen) => seen.type === "lost", from);
    await recorder.live(from);
  }
  {
    await using s = await setup({ now: clock, stream: { refreshAfterMs: 300 } });
    const { recorder } = await watched(s);
    const first = (await streams(s.h)).connections[0].id;
    await new Promise((resolve) => setTimeout(resolve, 500));
    const later = (await streams(s.h)).connections;
    assert.equal(later.length, 1);
    assert.ok(later[0].id > first, "replaced before the venue's cut");
    assert.deepEqual([recorder.count("lost"), recorder.count("live")], [0, 1]);
  }
});

Deno.test("two watches of one account share its key; closing the last stops keepalive, deletes the key, closes the connection", async () => {
  const spent: number[] = [];
  await using s = await setup();
  const adapter = s.h.adapter({
    budget: { spend: (weight) => Promise.resolve(void spent.push(weight)) },
    stream: FAST,
  });
  const keys = await s.h.account();
  const [a, b] = [new Recorder(), new Recorder()];
  const watchA = adapter.watchAccount!(keys.credentials, a);
  await a.live();
  const watchB = adapter.watchAccount!(keys.credentials, b);
  await b.live();
  assert.deepEqual(spent, [1], "one listen key for both, its weight spent from the egress budget");
  assert.equal((await streams(s.h)).listenKeys.length, 1);
  await watchA.close();
  await s.h.signed("POST", "/fapi/v1/order", {
    symbol: "BTCUSDT",
    side: "BUY",
    type: "MARKET",
    quantity: "0.010",
    newClientOrderId: "still-b",
  }, keys);
  await b.order("still-b", "FILLED");
  assert.equal(a.pushes.length, 0, "a closed watch hears nothing more");
  await watchB.close();
  assert.deepEqual(spent, [1, 1], "DELETE weighs 1 too");
  const left = await streams(s.h);
  assert.deepEqual([left.listenKeys, left.connections], [[], []]);
});

Deno.test("a key the venue refuses: onLost with the reason, retried until it works", async () => {
  await using s = await setup();
  const keys = await s.h.account();
  await s.h.control("PUT", "/faults", { mode: "REJECT_KEYS" });
  const recorder = new Recorder();
  s.watches.push(s.adapter.watchAccount!(keys.credentials, recorder));
  const lost = await recorder.waitFor((seen) => seen.type === "lost");
  assert.match((recorder.seen[lost] as { reason: string }).reason, /no listen key.*-2015/);
  await s.h.control("PUT", "/faults", { mode: "NONE" });
  await recorder.live(lost);
});

Deno.test("toAccountPush reads the venue's documented event examples", () => {
  const order = {
    e: "ORDER_TRADE_UPDATE",
    E: 1568879465651,
    T: 1568879465650,
    o: { s: "BTCUSDT", c: "TEST", S: "SELL", o: "TRAILING_STOP_MARKET", x: "NEW", X: "NEW", i: 8886774 },
  };
  const algo = {
    e: "ALGO_UPDATE",
    T: 1750515742297,
    E: 1750515742303,
    o: { caid: "Q5xaq5EGKgXXa0fD7fs0Ip", aid: 2148719, s: "BNBUSDT", q: "0.01", X: "CANCELED", aq: "0.00000" },
  };
  const funding = { e: "ACCOUNT_UPDATE", E: 1564745798939, T: 1564745798938, a: { m: "FUNDING_FEE", B: [], P: [] } };
  const push = (event: unknown) => toAccountPush(event as WireUserEvent);
  assert.deepEqual(push(order), {
    kind: "ORDER",
    symbol: "BTCUSDT",
    clientOrderId: "TEST",
    status: "NEW",
    at: 1568879465651,
  });
  assert.deepEqual(push(algo), {
    kind: "ORDER",
    symbol: "BNBUSDT",
    clientOrderId: "Q5xaq5EGKgXXa0fD7fs0Ip",
    status: "CANCELED",
    at: 1750515742303,
  });
  const finished = push({ ...algo, o: { ...algo.o, X: "FINISHED", aq: "0.01" } });
  assert.equal(finished?.kind === "ORDER" && finished.status, "FILLED", "FINISHED with all executed is a fill");
  const cut = push({ ...algo, o: { ...algo.o, X: "FINISHED", q: "0.02", aq: "0.01" } });
  assert.equal(cut?.kind === "ORDER" && cut.status, "FILLED", "FINISHED with less than its quantity is still a fill");
  const empty = push({ ...algo, o: { ...algo.o, X: "FINISHED", aq: "0.00000" } });
  assert.equal(empty?.kind === "ORDER" && empty.status, "CANCELED", "FINISHED with nothing executed is not");
  assert.deepEqual(push(funding), { kind: "FUNDING", at: 1564745798939 });
  assert.deepEqual(push({ ...funding, a: { m: "DEPOSIT" } }), { kind: "ACCOUNT", at: 1564745798939 });
  assert.equal(push({ ...funding, a: { m: "ORDER" } }), null);
  assert.equal(push({ e: "TRADE_LITE", E: 1 }), null);
});

Deno.test("a listen key this egress's own budget refused is asked again when its window turns, without backoff", async () => {
  await using s = await setup();
  let refusals = 3;
  const adapter = s.h.adapter({
    budget: {
      spend: () =>
        refusals-- > 0
          ? Promise.reject(new VenueError("RATE_LIMITED", "budget spent", { providerId: "VENUE_A", retryAfterMs: 30 }))
          : Promise.resolve(),
    },
    // A venue's own refusals back off for seconds; thousands of accounts at a keeper's start must not.
    stream: { ...FAST, keyRetryDelaysMs: [5_000, 10_000] },
  });
  const keys = await s.h.account();
  const recorder = new Recorder();
  s.watches.push(adapter.watchAccount!(keys.credentials, recorder));
  await until(() => recorder.count("live") === 1, "the key after three budget refusals", 2_000);
  assert.equal(refusals, -1, "asked four times");
});
