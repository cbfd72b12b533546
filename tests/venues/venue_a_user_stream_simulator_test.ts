/**
 * The VENUE_A simulator's user data stream over real loopback HTTP and
 * WebSocket: the listen key endpoints, the routed connection paths, every
 * event the engine's changes push, expiry on the venue's clock, the limits,
 * and ccxt's own parser reading what the simulator sends.
 */
import assert from "node:assert/strict";
import ccxt from "ccxt";
import { startVenueA, type VenueAHarness } from "./venue_a_harness.ts";
import { openStream, settle, type StreamClient } from "./venue_a_stream_client.ts";

type Frame = Record<string, unknown>;
type Keys = { apiKey: string; apiSecret: string };

const EVENTS = "ORDER_TRADE_UPDATE/ALGO_UPDATE/ACCOUNT_UPDATE/listenKeyExpired";

function listenKeyRequest(h: VenueAHarness, method: string, apiKey?: string) {
  return fetch(`${h.baseUrl}/fapi/v1/listenKey`, {
    method,
    headers: apiKey ? { "X-MBX-APIKEY": apiKey } : {},
  }).then(async (r) => ({ status: r.status, headers: r.headers, body: await r.json() as Frame }));
}

async function listenKeyOf(h: VenueAHarness, keys: Keys): Promise<string> {
  return String((await listenKeyRequest(h, "POST", keys.apiKey)).body.listenKey);
}

const eventOf = (frame: Frame) => ("data" in frame ? frame.data : frame) as Frame;
const isEvent = (type: string, test: (o: Frame) => boolean = () => true) => (frame: Frame) => {
  const event = eventOf(frame);
  return event.e === type && test((event.o ?? event.a ?? event) as Frame);
};

function order(h: VenueAHarness, keys: Keys, params: Record<string, string>) {
  return h.signed("POST", "/fapi/v1/order", { symbol: "BTCUSDT", newOrderRespType: "RESULT", ...params }, keys);
}

async function withStream<T>(url: string, run: (stream: StreamClient) => Promise<T>): Promise<T> {
  const stream = await openStream(url);
  try {
    return await run(stream);
  } finally {
    await stream.close();
  }
}

Deno.test("listen key endpoints: the API key header alone, weight 1, one key per account, -1125 once it is gone", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const missing = await listenKeyRequest(h, "POST");
  assert.deepEqual([missing.status, missing.body], [401, { code: -2014, msg: "API-key format invalid." }]);

  const first = await listenKeyRequest(h, "POST", keys.apiKey);
  assert.equal(first.status, 200);
  assert.match(String(first.body.listenKey), /^[A-Za-z0-9]{64}$/);
  const used = Number(first.headers.get("X-MBX-USED-WEIGHT-1M"));
  const again = await listenKeyRequest(h, "POST", keys.apiKey);
  assert.deepEqual(again.body, first.body, "POST on an account with a live key returns that key");
  assert.equal(Number(again.headers.get("X-MBX-USED-WEIGHT-1M")), used + 1, "each call weighs 1");

  const kept = await listenKeyRequest(h, "PUT", keys.apiKey);
  assert.deepEqual([kept.status, kept.body], [200, first.body]);
  const stopped = await listenKeyRequest(h, "DELETE", keys.apiKey);
  assert.deepEqual([stopped.status, stopped.body], [200, {}]);
  const gone = await listenKeyRequest(h, "PUT", keys.apiKey);
  assert.deepEqual([gone.status, gone.body], [400, { code: -1125, msg: "This listenKey does not exist." }]);
  const renewed = await listenKeyRequest(h, "POST", keys.apiKey);
  assert.notEqual(renewed.body.listenKey, first.body.listenKey, "after DELETE a POST opens a new key");

  await h.control("DELETE", `/accounts/${keys.apiKey}`);
  const revoked = await listenKeyRequest(h, "POST", keys.apiKey);
  assert.deepEqual([revoked.status, revoked.body.code], [401, -2015]);
});

Deno.test("an order placed, cancelled, and filled pushes ORDER_TRADE_UPDATE NEW, CANCELED, TRADE and ACCOUNT_UPDATE ORDER", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const listenKey = await listenKeyOf(h, keys);
  await withStream(`${h.streamUrl}/private/ws?listenKey=${listenKey}&events=${EVENTS}`, async (stream) => {
    const resting = await order(h, keys, {
      side: "BUY",
      type: "LIMIT",
      timeInForce: "GTC",
      quantity: "0.010",
      price: "60000",
      newClientOrderId: "rest-1",
    });
    const placed = await stream.next(isEvent("ORDER_TRADE_UPDATE", (o) => o.c === "rest-1" && o.x === "NEW"));
    const newEvent = stream.frames[placed];
    assert.equal(newEvent.e, "ORDER_TRADE_UPDATE", "ws mode: the raw event, no wrapper");
    assert.ok(typeof newEvent.E === "number" && typeof newEvent.T === "number");
    const o = newEvent.o as Frame;
    assert.deepEqual(
      [o.s, o.S, o.o, o.f, o.q, o.p, o.X, o.i, o.l, o.z, o.ps, o.R, o.er],
      [
        "BTCUSDT",
        "BUY",
        "LIMIT",
        "GTC",
        "0.010",
        "60000.00",
        "NEW",
        resting.body.orderId,
        "0",
        "0",
        "BOTH",
        false,
        "0",
      ],
    );
    assert.ok(!("n" in o) && !("N" in o), "no commission fields without a commission");

    await h.signed("DELETE", "/fapi/v1/order", { symbol: "BTCUSDT", origClientOrderId: "rest-1" }, keys);
    await stream.next(
      isEvent("ORDER_TRADE_UPDATE", (o) => o.c === "rest-1" && o.x === "CANCELED" && o.X === "CANCELED"),
    );

    const from = stream.frames.length;
    await order(h, keys, { side: "BUY", type: "MARKET", quantity: "0.010", newClientOrderId: "mkt-1" });
    const trade = await stream.next(isEvent("ORDER_TRADE_UPDATE", (o) => o.c === "mkt-1" && o.x === "TRADE"), from);
    const fill = stream.frames[trade].o as Frame;
    assert.deepEqual(
      [fill.X, fill.l, fill.z, fill.L, fill.ap, fill.N, fill.m, fill.rp],
      ["FILLED", "0.010", "0.010", "65000.10", "65000.1", "USDT", false, "0"],
    );
    assert.ok(Number(fill.t) > 0 && Number(fill.n) > 0, "a fill carries its trade id and commission");
    const account = await stream.next(isEvent("ACCOUNT_UPDATE", (a) => a.m === "ORDER"), from);
    const update = stream.frames[account].a as { B: Frame[]; P: Frame[] };
    assert.deepEqual(update.B.map((b) => [b.a, b.bc]), [["USDT", "0.00000000"]]);
    assert.deepEqual(update.P.map((p) => [p.s, p.pa, p.ep, p.mt, p.ps]), [[
      "BTCUSDT",
      "0.010",
      "65000.1",
      "cross",
      "BOTH",
    ]]);
    const types = stream.frames.slice(from).map((f) => f.e);
    assert.ok(!types.includes("TRADE_LITE"), "the events filter lets through only what it names");
  });
});

Deno.test("a stop pushes ALGO_UPDATE NEW, TRIGGERING, TRIGGERED, FINISHED around its order's ORDER_TRADE_UPDATE", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const listenKey = await listenKeyOf(h, keys);
  await order(h, keys, { side: "BUY", type: "MARKET", quantity: "0.010" });
  await withStream(`${h.streamUrl}/private/ws/${listenKey}`, async (stream) => {
    const placed = await h.signed("POST", "/fapi/v1/algoOrder", {
      algoType: "CONDITIONAL",
      symbol: "BTCUSDT",
      side: "SELL",
      type: "STOP_MARKET",
      triggerPrice: "64000",
      closePosition: "true",
      workingType: "MARK_PRICE",
      clientAlgoId: "sl-1",
    }, keys);
    const created = await stream.next(isEvent("ALGO_UPDATE", (o) => o.caid === "sl-1" && o.X === "NEW"));
    const algo = stream.frames[created].o as Frame;
    assert.deepEqual(
      [algo.aid, algo.at, algo.o, algo.s, algo.S, algo.tp, algo.cp, algo.wt, algo.ai],
      [placed.body.algoId, "CONDITIONAL", "STOP_MARKET", "BTCUSDT", "SELL", "64000", true, "MARK_PRICE", ""],
    );

    const from = stream.frames.length;
    await h.control("PUT", "/markets/BTCUSDT", { markPrice: "63900" });
    const finished = await stream.next(isEvent("ALGO_UPDATE", (o) => o.caid === "sl-1" && o.X === "FINISHED"), from);
    const sequence = stream.frames.slice(from, finished + 1).map((f) => {
      const o = f.o as Frame | undefined;
      return f.e === "ALGO_UPDATE" ? `ALGO ${o!.X}` : f.e === "ORDER_TRADE_UPDATE" ? `ORDER ${o!.x}` : String(f.e);
    }).filter((line) => line !== "TRADE_LITE" && line !== "ACCOUNT_UPDATE");
    assert.deepEqual(sequence, ["ALGO TRIGGERING", "ORDER NEW", "ALGO TRIGGERED", "ORDER TRADE", "ALGO FINISHED"]);
    const triggered = stream.frames.find((f) => f.e === "ALGO_UPDATE" && (f.o as Frame).X === "TRIGGERED")!.o as Frame;
    const executed = stream.frames.find((f) =>
      f.e === "ORDER_TRADE_UPDATE" && (f.o as Frame).x === "TRADE" &&
      stream.frames.indexOf(f) > from
    )!.o as Frame;
    assert.equal(triggered.ai, String(executed.i), "ALGO_UPDATE names the regular order its trigger placed");
    assert.deepEqual([executed.o, executed.S, executed.R, executed.cp, executed.X], [
      "MARKET",
      "SELL",
      true,
      true,
      "FILLED",
    ]);
    const done = stream.frames[finished].o as Frame;
    assert.deepEqual([done.aq, done.act], ["0.010", "MARKET"]);
    assert.ok(Number(done.tt) > 0);
    assert.ok(stream.frames.slice(from).some((f) => f.e === "TRADE_LITE"), "without a filter every event comes");
  });
});

Deno.test("funding, transfers and a margin type change push ACCOUNT_UPDATE with their reason", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const isolated = await h.account();
  await h.signed("POST", "/fapi/v1/marginType", { symbol: "BTCUSDT", marginType: "ISOLATED" }, isolated);
  for (const k of [keys, isolated]) await order(h, k, { side: "BUY", type: "MARKET", quantity: "0.010" });
  const [crossKey, isolatedKey] = [await listenKeyOf(h, keys), await listenKeyOf(h, isolated)];
  await withStream(
    `${h.streamUrl}/private/stream?listenKey=${crossKey}&events=ACCOUNT_UPDATE&listenKey=${isolatedKey}&events=ACCOUNT_UPDATE`,
    async (stream) => {
      await h.control("POST", "/funding", { symbol: "BTCUSDT", rate: "0.0001" });
      const cross = await stream.next((f) => f.stream === crossKey && isEvent("ACCOUNT_UPDATE")(f));
      const crossUpdate = (eventOf(stream.frames[cross]).a) as { m: string; B: Frame[]; P: Frame[] };
      assert.equal(crossUpdate.m, "FUNDING_FEE");
      assert.deepEqual(crossUpdate.B.map((b) => [b.a, b.bc]), [["USDT", "-0.06500000"]]);
      assert.deepEqual(crossUpdate.P, [], "a cross position's funding names no position");
      const iso = await stream.next((f) => f.stream === isolatedKey && isEvent("ACCOUNT_UPDATE")(f));
      const isoUpdate = eventOf(stream.frames[iso]).a as { m: string; P: Frame[] };
      assert.deepEqual([isoUpdate.m, isoUpdate.P.map((p) => [p.s, p.mt])], ["FUNDING_FEE", [["BTCUSDT", "isolated"]]]);

      await h.control("POST", `/accounts/${keys.apiKey}/transfers`, { asset: "USDT", amount: "250" });
      await h.control("POST", `/accounts/${keys.apiKey}/transfers`, { asset: "USDT", amount: "-50" });
      await stream.next((f) => f.stream === crossKey && isEvent("ACCOUNT_UPDATE", (a) => a.m === "DEPOSIT")(f));
      const out = await stream.next((f) => isEvent("ACCOUNT_UPDATE", (a) => a.m === "WITHDRAW")(f));
      assert.deepEqual((eventOf(stream.frames[out]).a as { B: Frame[] }).B.map((b) => [b.a, b.bc]), [[
        "USDT",
        "-50.00000000",
      ]]);

      await h.signed("POST", "/fapi/v1/marginType", { symbol: "ETHUSDT", marginType: "ISOLATED" }, keys);
      await stream.next((f) => isEvent("ACCOUNT_UPDATE", (a) => a.m === "MARGIN_TYPE_CHANGE")(f));
    },
  );
});

Deno.test("stream mode carries several keys on one connection, each event wrapped with its key", async () => {
  await using h = await startVenueA();
  const a = await h.account();
  const b = await h.account();
  const [keyA, keyB] = [await listenKeyOf(h, a), await listenKeyOf(h, b)];
  await withStream(`${h.streamUrl}/private/stream?listenKey=${keyA}&events=${EVENTS}&listenKey=${keyB}`, async (s) => {
    const streams = await h.control<{ connections: { path: string; streams: number }[] }>("GET", "/streams");
    assert.deepEqual(streams.connections.map((c) => [c.path, c.streams]), [["/private/stream", 2]]);
    await order(h, a, { side: "BUY", type: "MARKET", quantity: "0.010", newClientOrderId: "from-a" });
    await order(h, b, { side: "BUY", type: "MARKET", quantity: "0.010", newClientOrderId: "from-b" });
    const first = await s.next(isEvent("ORDER_TRADE_UPDATE", (o) => o.c === "from-a"));
    const second = await s.next(isEvent("ORDER_TRADE_UPDATE", (o) => o.c === "from-b"));
    assert.deepEqual(Object.keys(s.frames[first]).sort(), ["data", "stream"]);
    assert.equal(s.frames[first].stream, keyA);
    assert.equal(s.frames[second].stream, keyB);
    assert.ok(!s.frames.some((f) => f.stream === keyA && eventOf(f).e === "TRADE_LITE"), "A's filter holds for A");
    assert.ok(s.frames.some((f) => f.stream === keyB && eventOf(f).e === "TRADE_LITE"), "B asked for every event");
  });
});

Deno.test("a key expires on the venue's clock: listenKeyExpired, then nothing; a connection is cut at 24 hours", async () => {
  let now = Date.UTC(2026, 10, 2, 10);
  await using h = await startVenueA({ now: () => now });
  const keys = await h.account();
  const listenKey = await listenKeyOf(h, keys);
  const stream = await openStream(`${h.streamUrl}/private/ws?listenKey=${listenKey}&events=${EVENTS}`);
  now += 59 * 60_000;
  await listenKeyRequest(h, "PUT", keys.apiKey);
  now += 59 * 60_000;
  await order(h, keys, { side: "BUY", type: "MARKET", quantity: "0.010", newClientOrderId: "kept-alive" });
  await stream.next(isEvent("ORDER_TRADE_UPDATE", (o) => o.c === "kept-alive"));

  now += 61 * 60_000;
  await fetch(`${h.baseUrl}/fapi/v1/time`).then((r) => r.body?.cancel());
  const expired = await stream.next(isEvent("listenKeyExpired"));
  assert.deepEqual(stream.frames[expired], { e: "listenKeyExpired", E: now, listenKey });
  const from = stream.frames.length;
  await order(h, keys, { side: "SELL", type: "MARKET", quantity: "0.010", newClientOrderId: "after" });
  await settle();
  assert.equal(stream.frames.length, from, "nothing is pushed for a dead key");
  const renewed = await listenKeyOf(h, keys);
  assert.notEqual(renewed, listenKey);

  const fresh = await openStream(`${h.streamUrl}/private/ws?listenKey=${renewed}`);
  now += 24 * 60 * 60_000;
  await fetch(`${h.baseUrl}/fapi/v1/time`).then((r) => r.body?.cancel());
  assert.equal((await fresh.closed).code, 1001);
  assert.equal((await stream.closed).code, 1001);
});

Deno.test("unrouted legacy paths and unknown keys open but push nothing", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const listenKey = await listenKeyOf(h, keys);
  const legacy = await openStream(`${h.streamUrl}/ws/${listenKey}`);
  const legacyCombined = await openStream(`${h.streamUrl}/stream?streams=${listenKey}`);
  const unknown = await openStream(`${h.streamUrl}/private/ws?listenKey=${"x".repeat(64)}`);
  const routed = await openStream(`${h.streamUrl}/private/ws?listenKey=${listenKey}`);
  await order(h, keys, { side: "BUY", type: "MARKET", quantity: "0.010", newClientOrderId: "seen" });
  await routed.next(isEvent("ORDER_TRADE_UPDATE", (o) => o.c === "seen"));
  await settle();
  assert.deepEqual([legacy.frames, legacyCombined.frames, unknown.frames], [[], [], []]);
  for (const s of [legacy, legacyCombined, unknown, routed]) await s.close();
});

Deno.test("client messages: LIST_SUBSCRIPTIONS and errors answered, more than 10 a second cut the connection", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const listenKey = await listenKeyOf(h, keys);
  const stream = await openStream(`${h.streamUrl}/private/stream?listenKey=${listenKey}`);
  stream.send({ method: "LIST_SUBSCRIPTIONS", id: 1 });
  await stream.next((f) => f.id === 1);
  assert.deepEqual(stream.frames.at(-1), { result: [listenKey], id: 1 });
  stream.send({ method: "PING", id: 2 });
  await stream.next((f) => f.code === 2);
  stream.send("not json");
  await stream.next((f) => f.code === 3);
  for (let i = 0; i < 12; i++) stream.send({ method: "LIST_SUBSCRIPTIONS", id: 10 + i });
  // The venue documents the cut, not its close code (and frames still in flight make the close unclean anyway).
  await stream.closed;
  assert.deepEqual((await h.control<{ connections: unknown[] }>("GET", "/streams")).connections, []);
});

Deno.test("limits and control: streams per connection, connection attempts, drops, DOWN refuses the handshake", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const listenKey = await listenKeyOf(h, keys);
  await h.control("PUT", "/limits", { streamsPerConnection: 1, streamConnectionsPer5Minutes: 3 });
  const tooMany = await fetch(`${h.baseUrl}/private/stream?listenKey=${listenKey}&listenKey=${listenKey}`, {
    headers: { upgrade: "websocket" },
  });
  assert.equal(tooMany.status, 400);
  await tooMany.body?.cancel();
  const one = await openStream(`${h.streamUrl}/private/ws?listenKey=${listenKey}`);
  const two = await openStream(`${h.streamUrl}/private/ws?listenKey=${listenKey}`);
  await assert.rejects(openStream(`${h.streamUrl}/private/ws?listenKey=${listenKey}`), "the 4th attempt in 5 minutes");
  assert.deepEqual(await h.control("POST", "/streams/drop", { apiKey: keys.apiKey }), { dropped: 2 });
  assert.deepEqual([(await one.closed).code, (await two.closed).code], [1001, 1001]);

  await h.control("PUT", "/limits", { streamConnectionsPer5Minutes: 300 });
  await h.control("PUT", "/faults", { mode: "DOWN" });
  await assert.rejects(openStream(`${h.streamUrl}/private/ws?listenKey=${listenKey}`));
  await h.control("PUT", "/faults", { mode: "NONE" });
  assert.deepEqual(await h.control("POST", "/streams/expire", { apiKey: keys.apiKey }), { expired: true });
  assert.deepEqual((await h.control<{ listenKeys: unknown[] }>("GET", "/streams")).listenKeys, []);
});

Deno.test("ccxt's binanceusdm stream parser reads the simulator's events as orders, trades and balances", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const listenKey = await listenKeyOf(h, keys);
  const stream = await openStream(`${h.streamUrl}/private/ws?listenKey=${listenKey}`);
  await order(h, keys, { side: "BUY", type: "MARKET", quantity: "0.010", newClientOrderId: "ccxt-fill" });
  await h.signed("POST", "/fapi/v1/algoOrder", {
    algoType: "CONDITIONAL",
    symbol: "BTCUSDT",
    side: "SELL",
    type: "STOP_MARKET",
    triggerPrice: "64000",
    quantity: "0.010",
    reduceOnly: "true",
    clientAlgoId: "ccxt-stop",
  }, keys);
  await stream.next(isEvent("ALGO_UPDATE", (o) => o.caid === "ccxt-stop"));
  await stream.close();

  const exchange = new ccxt.pro.binanceusdm({ apiKey: keys.apiKey, secret: keys.apiSecret });
  // Markets from the simulator's own exchangeInfo, so ccxt maps BTCUSDT as it would at the venue.
  const info = await fetch(`${h.baseUrl}/fapi/v1/exchangeInfo`).then((r) => r.json());
  exchange.setMarkets(exchange.parseMarkets(info.symbols.map((s: Frame) => ({ ...s, contractType: "PERPETUAL" }))));
  const resolved: Record<string, unknown> = {};
  const client = {
    url: "wss://fstream.binance.com/private/ws",
    subscriptions: { future: true },
    futures: {},
    resolve: (value: unknown, hash: string) => resolved[hash] = value,
  };
  // A stand-in for ccxt's socket client: handleMessage only reads `subscriptions` and calls `resolve`.
  for (const frame of stream.frames) {
    exchange.handleMessage(client as unknown as Parameters<typeof exchange.handleMessage>[0], frame);
  }

  const orders = resolved["orders"] as { clientOrderId: string; status: string; filled: number; symbol: string }[];
  const fill = orders.filter((o) => o.clientOrderId === "ccxt-fill").at(-1)!;
  assert.deepEqual([fill.symbol, fill.status, fill.filled], ["BTC/USDT:USDT", "closed", 0.01]);
  const stop = orders.find((o) => o.clientOrderId === "ccxt-stop") as unknown as Frame;
  assert.deepEqual([stop.status, stop.triggerPrice, stop.reduceOnly], ["open", 64000, true]);
  const trades = resolved["myTrades"] as { order: string; price: number; amount: number; fee: { currency: string } }[];
  assert.deepEqual([trades.length, trades[0].price, trades[0].amount, trades[0].fee.currency], [
    1,
    65000.1,
    0.01,
    "USDT",
  ]);
  const balance = resolved["future:balance"] as Record<string, { total: number }>;
  assert.ok(balance.USDT.total > 9990 && balance.USDT.total < 10000, "the wallet balance after the fee");
});
