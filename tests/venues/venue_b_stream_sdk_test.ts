/**
 * The simulator's WebSocket read by an independent client, the
 * @nktkas/hyperliquid SDK: its subscriptions are acknowledged as it expects,
 * and every message matches what the SDK's types say the venue sends (field
 * names and the patterns its types document). At compile time, the SDK's
 * event types must read as our wire types (venues/venue_b/stream_wire.ts).
 */
import assert from "node:assert/strict";
import { SubscriptionClient, WebSocketTransport } from "@nktkas/hyperliquid";
import type {
  OrderUpdatesEvent,
  TradesEvent,
  UserEventsEvent,
  UserFillsEvent,
  UserFundingsEvent,
} from "@nktkas/hyperliquid/api/subscription";
import type { WsOrder, WsTrade, WsUserEvent, WsUserFills, WsUserFundings } from "../../venues/venue_b/stream_wire.ts";
import { connectClient, startSim } from "./venue_b_fixture.ts";
import { WAIT_MS, wsUrl } from "./venue_b_stream_fixture.ts";

/** `true` only where every message the SDK types describe is a message our wire types describe. */
type Reads<Theirs, Ours> = [Theirs] extends [Ours] ? true : false;
type Variant<Event, Key extends string> = Extract<Event, Record<Key, unknown>>;
const wireTypesReadTheSdks: [
  Reads<OrderUpdatesEvent, WsOrder[]>,
  Reads<TradesEvent, WsTrade[]>,
  Reads<UserFillsEvent, WsUserFills>,
  Reads<UserFundingsEvent, WsUserFundings>,
  Reads<Variant<UserEventsEvent, "fills">, Variant<WsUserEvent, "fills">>,
  Reads<Variant<UserEventsEvent, "funding">, Variant<WsUserEvent, "funding">>,
  Reads<Variant<UserEventsEvent, "liquidation">, Variant<WsUserEvent, "liquidation">>,
  Reads<Variant<UserEventsEvent, "nonUserCancel">, Variant<WsUserEvent, "nonUserCancel">>,
] = [true, true, true, true, true, true, true, true];

// The patterns the SDK's types document (@pattern).
const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;
const SIGNED = /^-?[0-9]+(\.[0-9]+)?$/;
const ADDRESS = /^0x[a-fA-F0-9]{40}$/;
const CLOID = /^0x[a-fA-F0-9]{32}$/;
const HASH = /^0x[a-fA-F0-9]{64}$/;

function assertOrder(order: OrderUpdatesEvent[number]["order"]) {
  assert.deepEqual(
    Object.keys(order).sort(),
    [
      "cloid",
      "coin",
      "limitPx",
      "oid",
      "origSz",
      "side",
      ...(order.reduceOnly ? ["reduceOnly"] : []),
      "sz",
      "timestamp",
    ]
      .sort(),
  );
  for (const value of [order.limitPx, order.sz, order.origSz]) assert.match(value, DECIMAL);
  assert.match(order.cloid!, CLOID);
  assert.ok(order.side === "B" || order.side === "A");
  assert.ok(Number.isInteger(order.oid) && Number.isInteger(order.timestamp));
}

function assertFill(fill: UserFillsEvent["fills"][number]) {
  for (const value of [fill.px, fill.sz]) assert.match(value, DECIMAL);
  for (const value of [fill.startPosition, fill.closedPnl, fill.fee]) assert.match(value, SIGNED);
  assert.match(fill.hash, HASH);
  assert.equal(typeof fill.crossed, "boolean");
  assert.equal(fill.feeToken, "USDC");
}

function assertFunding(funding: UserFundingsEvent["fundings"][number]) {
  assert.deepEqual(Object.keys(funding).sort(), ["coin", "fundingRate", "nSamples", "szi", "time", "usdc"]);
  for (const value of [funding.usdc, funding.szi, funding.fundingRate]) assert.match(value, SIGNED);
}

/** Collects what one subscription's listener receives; `next` waits for the n-th message. */
function collector<T>() {
  const received: T[] = [];
  const waiting: (() => void)[] = [];
  return {
    received,
    listener: (data: T) => {
      received.push(data);
      for (const wake of waiting.splice(0)) wake();
    },
    async next(count: number): Promise<T> {
      const deadline = Date.now() + WAIT_MS;
      while (received.length < count) {
        assert.ok(Date.now() < deadline, `waited for message ${count}; got ${JSON.stringify(received)}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 50);
          waiting.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return received[count - 1];
    },
  };
}

Deno.test("VENUE_B simulator's WebSocket speaks what the SDK's subscription types describe", async () => {
  assert.ok(wireTypesReadTheSdks.every(Boolean));
  await using sim = startSim();
  const { adapter, credentials, principal } = await connectClient(sim);
  const transport = new WebSocketTransport({ url: wsUrl(sim), reconnect: { maxRetries: 0 } });
  const closed = new Promise((resolve) => transport.socket.addEventListener("close", resolve, { once: true }));
  try {
    const client = new SubscriptionClient({ transport });
    const user = principal.address;
    const orders = collector<OrderUpdatesEvent>();
    const events = collector<UserEventsEvent>();
    const fills = collector<UserFillsEvent>();
    const fundings = collector<UserFundingsEvent>();
    const trades = collector<TradesEvent>();
    await client.orderUpdates({ user }, orders.listener);
    await client.userEvents({ user }, events.listener);
    await client.userFills({ user }, fills.listener);
    const fundingsSubscription = await client.userFundings({ user }, fundings.listener);
    await client.trades({ coin: "SOL" }, trades.listener);
    assert.deepEqual(await fills.next(1), { isSnapshot: true, user, fills: [] });
    assert.deepEqual(await fundings.next(1), { isSnapshot: true, user, fundings: [] });

    await adapter.placeOrder(credentials, {
      symbol: "SOLUSDC",
      side: "BUY",
      type: "MARKET",
      quantity: "2",
      reduceOnly: false,
      clientOrderId: "sdk",
    });
    const [filled] = await orders.next(1);
    assertOrder(filled.order);
    assert.equal(filled.status, "filled");
    assert.ok(Number.isInteger(filled.statusTimestamp));

    const fillEvent = await events.next(1);
    assert.ok("fills" in fillEvent);
    fillEvent.fills.forEach(assertFill);
    const streamedFills = await fills.next(2);
    assert.deepEqual(Object.keys(streamedFills).sort(), ["fills", "user"]);
    streamedFills.fills.forEach(assertFill);

    const [trade] = await trades.next(1);
    assert.deepEqual(Object.keys(trade).sort(), ["coin", "hash", "px", "side", "sz", "tid", "time", "users"]);
    assert.match(trade.px, DECIMAL);
    assert.match(trade.hash, HASH);
    for (const address of trade.users) assert.match(address, ADDRESS);
    assert.equal(trade.users[0], user, "[buyer, seller]");

    await sim.control("POST", "/funding", { coin: "SOL", rate: "0.0001" });
    const fundingEvent = await events.next(2);
    assert.ok("funding" in fundingEvent);
    assertFunding(fundingEvent.funding);
    const streamedFundings = await fundings.next(2);
    assert.equal(streamedFundings.user, user);
    streamedFundings.fundings.forEach(assertFunding);

    // The SDK's unsubscribe waits for the venue's ack too.
    await fundingsSubscription.unsubscribe();
  } finally {
    transport.close();
    await closed;
  }
});
