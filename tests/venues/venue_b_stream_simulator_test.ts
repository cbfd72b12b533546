/**
 * The VENUE_B simulator's WebSocket, driven with a raw client over real
 * HTTP/WebSocket: the venue's framing (greeting, acks, pong, refusals), the
 * account channels fed by the engine, snapshots, the per-IP limits with the
 * venue's texts, the idle timeout and the control routes.
 */
import assert from "node:assert/strict";
import { BOOK_ADDRESS } from "../../venues/sim/venue_b/feed.ts";
import { createVenueBSimulator } from "../../venues/sim/venue_b/mod.ts";
import { cloidFromClientOrderId } from "../../venues/venue_b/mappers.ts";
import { generateAgentKey } from "../../venues/venue_b/signing.ts";
import { STREAM_GREETING } from "../../venues/venue_b/stream_wire.ts";
import { createApp } from "../../routes/app.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { connectClient, startSim } from "./venue_b_fixture.ts";
import { WsProbe, wsUrl } from "./venue_b_stream_fixture.ts";

type Frame = Record<string, unknown>;
const data = (frame: Frame) => frame.data as Record<string, unknown>;
const orderUpdates = (frame: Frame) => frame.data as { order: Record<string, unknown>; status: string }[];

/** A fresh address no wallet holds. */
const someone = () => generateAgentKey().address;

Deno.test("VENUE_B /ws greets, answers ping with pong and acks subscriptions as the venue does", async () => {
  await using sim = startSim();
  await using probe = await WsProbe.open(wsUrl(sim));
  probe.send({ method: "ping" });
  assert.deepEqual(await probe.channel("pong"), { channel: "pong" });
  assert.deepEqual(probe.texts, [STREAM_GREETING], "the first frame is the venue's plain-text greeting");

  const user = someone();
  probe.send({
    method: "subscribe",
    subscription: { type: "orderUpdates", user: user.toUpperCase().replace("0X", "0x") },
  });
  assert.deepEqual(await probe.channel("subscriptionResponse"), {
    channel: "subscriptionResponse",
    data: { method: "subscribe", subscription: { type: "orderUpdates", user } },
  });
  probe.send({ method: "subscribe", subscription: { type: "orderUpdates", user } });
  assert.deepEqual(await probe.channel("error"), {
    channel: "error",
    data: `Already subscribed: {"type":"orderUpdates","user":"${user}"}`,
  });
  probe.send({ method: "unsubscribe", subscription: { type: "orderUpdates", user } });
  assert.deepEqual(data(await probe.channel("subscriptionResponse")), {
    method: "unsubscribe",
    subscription: { type: "orderUpdates", user },
  });
  probe.send({ method: "unsubscribe", subscription: { type: "orderUpdates", user } });
  assert.match(String((await probe.channel("error")).data), /^Already unsubscribed: /);

  probe.send({ method: "subscribe", subscription: { type: "trades", coin: "DOGE" } });
  assert.equal((await probe.channel("error")).data, 'Invalid subscription: {"type":"trades","coin":"DOGE"}');
  probe.send('{"method":"subscribe","subscription":{"type":"liquidations","coin":"BTC"}}');
  assert.equal(
    (await probe.channel("error")).data,
    'Error parsing JSON into valid websocket request: {"method":"subscribe","subscription":{"type":"liquidations","coin":"BTC"}}',
  );
});

Deno.test("VENUE_B orderUpdates and userEvents carry every change the engine makes, naming no user", async () => {
  await using sim = startSim();
  const { adapter, credentials, principal } = await connectClient(sim);
  await using probe = await WsProbe.open(wsUrl(sim));
  await probe.subscribe({ type: "orderUpdates", user: principal.address });
  await probe.subscribe({ type: "userEvents", user: principal.address });
  const order = { symbol: "SOLUSDC", side: "BUY" as const, reduceOnly: false, quantity: "1" };

  // Placed, resting.
  const placed = await adapter.placeOrder(credentials, {
    ...order,
    type: "LIMIT",
    price: "140",
    clientOrderId: "rest",
  });
  const [resting] = orderUpdates(await probe.channel("orderUpdates"));
  assert.equal(resting.status, "open");
  assert.deepEqual(resting.order, {
    coin: "SOL",
    side: "B",
    limitPx: "140.0",
    sz: "1.0",
    oid: Number(placed.orderId),
    timestamp: (resting.order as { timestamp: number }).timestamp,
    origSz: "1.0",
    cloid: cloidFromClientOrderId("rest"),
  });
  assert.deepEqual(Object.keys(resting).sort(), ["order", "status", "statusTimestamp"]);

  // Cancelled.
  await adapter.cancelOrder(credentials, "SOLUSDC", "rest");
  assert.equal(orderUpdates(await probe.channel("orderUpdates"))[0].status, "canceled");

  // Filled at once: the fill comes on "user", the order's end on orderUpdates.
  await adapter.placeOrder(credentials, { ...order, type: "MARKET", clientOrderId: "long" });
  const fill = (data(await probe.channel("user")).fills as Record<string, unknown>[])[0];
  assert.deepEqual([fill.coin, fill.side, fill.sz, fill.dir, fill.cloid], [
    "SOL",
    "B",
    "1.0",
    "Open Long",
    cloidFromClientOrderId("long"),
  ]);
  assert.equal(orderUpdates(await probe.channel("orderUpdates"))[0].status, "filled");

  // Funding booked on the position.
  await sim.control("POST", "/funding", { coin: "SOL", rate: "0.0001" });
  const funding = await probe.channel("user");
  assert.deepEqual(Object.keys(data(funding)), ["funding"]);
  assert.deepEqual(data(funding).funding, {
    time: (data(funding).funding as { time: number }).time,
    coin: "SOL",
    usdc: "-0.015",
    szi: "1.0",
    fundingRate: "0.0001",
    nSamples: null,
  });

  // A stop: resting as a trigger, then fired by the mark: "triggered", then filled.
  await adapter.placeProtection(credentials, {
    symbol: "SOLUSDC",
    kind: "STOP_LOSS",
    side: "SELL",
    triggerPrice: "140",
    quantity: "1",
    clientOrderId: "stop",
  });
  const [stop] = orderUpdates(await probe.channel("orderUpdates"));
  assert.deepEqual([stop.status, stop.order.reduceOnly], ["open", true]);
  await sim.control("PUT", "/markets/SOL", { markPrice: "139.5" });
  const fired = [
    ...orderUpdates(await probe.channel("orderUpdates")),
    ...orderUpdates(await probe.channel("orderUpdates")),
  ];
  assert.deepEqual(fired.map((update) => [update.order.oid, update.status]), [
    [stop.order.oid, "triggered"],
    [stop.order.oid, "filled"],
  ]);
  assert.equal((data(await probe.channel("user")).fills as Record<string, unknown>[])[0].dir, "Close Long");
  for (const frame of [resting, stop]) assert.equal("user" in frame, false);
});

Deno.test("VENUE_B userFills and userFundings start with the user's snapshot, then stream", async () => {
  await using sim = startSim();
  const { adapter, credentials, principal } = await connectClient(sim);
  const buy = { symbol: "ETHUSDC", side: "BUY" as const, type: "MARKET" as const, reduceOnly: false, quantity: "1" };
  await adapter.placeOrder(credentials, { ...buy, clientOrderId: "before" });
  await sim.control("POST", "/funding", { coin: "ETH", rate: "0.0001" });
  await using probe = await WsProbe.open(wsUrl(sim));
  const user = principal.address;
  await probe.subscribe({ type: "userFills", user });
  const snapshot = data(await probe.channel("userFills"));
  assert.deepEqual([snapshot.isSnapshot, snapshot.user, (snapshot.fills as unknown[]).length], [true, user, 1]);
  await probe.subscribe({ type: "userFundings", user });
  const fundings = data(await probe.channel("userFundings"));
  assert.deepEqual([fundings.isSnapshot, (fundings.fundings as { coin: string }[]).map((f) => f.coin)], [true, [
    "ETH",
  ]]);

  await adapter.placeOrder(credentials, { ...buy, clientOrderId: "after" });
  const streamed = data(await probe.channel("userFills"));
  assert.equal("isSnapshot" in streamed, false);
  assert.equal(streamed.user, user);
  await sim.control("POST", "/funding", { coin: "ETH", rate: "0.0002" });
  const paid = data(await probe.channel("userFundings"));
  assert.deepEqual([paid.user, "isSnapshot" in paid, (paid.fundings as { fundingRate: string }[])[0].fundingRate], [
    user,
    false,
    "0.0002",
  ]);
});

Deno.test("VENUE_B trades name both sides, buyer first, and the taker's side", async () => {
  await using sim = startSim();
  const buyer = await connectClient(sim);
  const seller = await connectClient(sim);
  await using probe = await WsProbe.open(wsUrl(sim));
  await probe.subscribe({ type: "trades", coin: "SOL" });
  const order = { symbol: "SOLUSDC", type: "MARKET" as const, reduceOnly: false, quantity: "1" };
  await buyer.adapter.placeOrder(buyer.credentials, { ...order, side: "BUY", clientOrderId: "b" });
  const [bought] = (await probe.channel("trades")).data as Record<string, unknown>[];
  assert.deepEqual(Object.keys(bought).sort(), ["coin", "hash", "px", "side", "sz", "tid", "time", "users"]);
  assert.deepEqual([bought.coin, bought.side, bought.sz, bought.users], [
    "SOL",
    "B",
    "1.0",
    [buyer.principal.address, BOOK_ADDRESS],
  ]);
  await seller.adapter.placeOrder(seller.credentials, { ...order, side: "SELL", clientOrderId: "s" });
  const [sold] = (await probe.channel("trades")).data as Record<string, unknown>[];
  assert.deepEqual([sold.side, sold.users], ["A", [BOOK_ADDRESS, seller.principal.address]]);

  // A resting buy filled when the market comes down to it: the book took, selling.
  await buyer.adapter.placeOrder(buyer.credentials, {
    ...order,
    type: "LIMIT",
    price: "140",
    side: "BUY",
    clientOrderId: "m",
  });
  await sim.control("PUT", "/markets/SOL", { markPrice: "139.9" });
  const [made] = (await probe.channel("trades")).data as Record<string, unknown>[];
  assert.deepEqual([made.side, made.px, made.users], ["A", "140.0", [buyer.principal.address, BOOK_ADDRESS]]);
});

Deno.test("VENUE_B tracks at most 10 users per IP: the 11th is refused in the venue's words", async () => {
  await using sim = startSim();
  await using first = await WsProbe.open(wsUrl(sim));
  await using second = await WsProbe.open(wsUrl(sim));
  const users = Array.from({ length: 11 }, someone);
  for (const [index, user] of users.slice(0, 10).entries()) {
    await (index % 2 ? first : second).subscribe({ type: index % 3 ? "userEvents" : "orderUpdates", user });
  }
  second.send({ method: "subscribe", subscription: { type: "userEvents", user: users[10] } });
  assert.deepEqual(await second.channel("error"), { channel: "error", data: "Cannot track more than 10 total users." });

  // Another channel of a user already tracked, and public channels, still fit.
  await second.subscribe({ type: "userFills", user: users[1] });
  await second.subscribe({ type: "trades", coin: "BTC" });
  // Freeing a user (unsubscribing, or closing its connection) lets the next one in.
  const { usersByIp } = await sim.control<{ usersByIp: Record<string, string[]> }>("GET", "/ws");
  assert.equal(usersByIp["127.0.0.1"].length, 10);
  await first.close();
  await second.subscribe({ type: "userEvents", user: users[10] });
});

Deno.test("VENUE_B refuses subscriptions, messages and connections over the IP's limits", async () => {
  await using sim = startSim({
    stream: { limits: { subscriptions: 2, messagesPerMinute: 6, connections: 2, newConnectionsPerMinute: 3 } },
  });
  await using probe = await WsProbe.open(wsUrl(sim));
  await probe.subscribe({ type: "trades", coin: "BTC" });
  await probe.subscribe({ type: "trades", coin: "ETH" });
  probe.send({ method: "subscribe", subscription: { type: "trades", coin: "SOL" } });
  assert.equal((await probe.channel("error")).data, "Cannot subscribe to more than 2 channels.");
  for (let message = 0; message < 3; message++) probe.send({ method: "ping" });
  for (let message = 0; message < 3; message++) await probe.channel("pong");
  probe.send({ method: "ping" });
  assert.equal((await probe.channel("error")).data, "Cannot send more than 6 messages per minute.");

  await using second = await WsProbe.open(wsUrl(sim));
  await assert.rejects(WsProbe.open(wsUrl(sim)), /refused/, "a third connection open at once");
  await second.close();
  await (await WsProbe.open(wsUrl(sim))).close();
  await assert.rejects(WsProbe.open(wsUrl(sim)), /refused/, "a fourth new connection within the minute");
  const refusal = await upgradeAnswer(sim.baseUrl);
  assert.deepEqual(refusal, { status: 429, body: "Cannot open more than 3 websocket connections per minute." });
});

Deno.test("VENUE_B closes a connection that sent nothing for the idle timeout; pings keep it open", async () => {
  await using sim = startSim({ stream: { idleTimeoutMs: 400 } });
  await using quiet = await WsProbe.open(wsUrl(sim));
  await using pinging = await WsProbe.open(wsUrl(sim));
  const pinger = setInterval(() => pinging.send({ method: "ping" }), 100);
  try {
    await quiet.closed;
    assert.equal(pinging.socket.readyState, WebSocket.OPEN);
  } finally {
    clearInterval(pinger);
  }
});

Deno.test("VENUE_B control routes list the connections and drop those of a user", async () => {
  await using sim = startSim();
  const [alice, bob] = [someone(), someone()];
  await using aliceProbe = await WsProbe.open(wsUrl(sim));
  await using bobProbe = await WsProbe.open(wsUrl(sim));
  await aliceProbe.subscribe({ type: "orderUpdates", user: alice });
  await bobProbe.subscribe({ type: "userEvents", user: bob });
  const listed = await sim.control<{ connections: { ip: string; subscriptions: unknown[] }[] }>("GET", "/ws");
  assert.deepEqual(listed.connections.map((c) => [c.ip, c.subscriptions]), [
    ["127.0.0.1", [{ type: "orderUpdates", user: alice }]],
    ["127.0.0.1", [{ type: "userEvents", user: bob }]],
  ]);
  assert.deepEqual(await sim.control("POST", "/ws/drop", { user: alice }), { dropped: 1 });
  await aliceProbe.closed;
  assert.equal(bobProbe.socket.readyState, WebSocket.OPEN);
  assert.deepEqual(await sim.control("POST", "/ws/drop", {}), { dropped: 1 });
  await bobProbe.closed;
});

Deno.test("VENUE_B /ws works where the QA service mounts the simulator, behind the app's middleware", async () => {
  const env = await startTestEnv();
  const app = createApp(env.deps, { simulators: { "venue-b": createVenueBSimulator() } });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request, info) => app.fetch(request, info),
  );
  try {
    await using probe = await WsProbe.open(`ws://127.0.0.1:${server.addr.port}/sim/venue-b/ws`);
    await probe.subscribe({ type: "trades", coin: "BTC" });
    probe.send({ method: "ping" });
    await probe.channel("pong");
  } finally {
    await server.shutdown();
    await env.close();
  }
});

/** Sends a WebSocket upgrade by hand and reads the status and body of a refusal. */
async function upgradeAnswer(baseUrl: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(baseUrl);
  const connection = await Deno.connect({ hostname, port: Number(port) });
  try {
    const request = [
      "GET /ws HTTP/1.1",
      `Host: ${hostname}:${port}`,
      "Upgrade: websocket",
      "Connection: Upgrade",
      "Sec-WebSocket-Version: 13",
      `Sec-WebSocket-Key: ${btoa("0123456789abcdef")}`,
      "",
      "",
    ].join("\r\n");
    await connection.write(new TextEncoder().encode(request));
    let text = "";
    const buffer = new Uint8Array(4096);
    while (!/\r\n\r\n[\s\S]*\S/.test(text)) {
      const read = await connection.read(buffer);
      if (read === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, read));
    }
    const [head, body] = text.split("\r\n\r\n");
    return { status: Number(head.split(" ")[1]), body };
  } finally {
    connection.close();
  }
}
