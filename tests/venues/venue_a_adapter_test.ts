/**
 * The VENUE_A adapter against the simulator over real loopback HTTP: every
 * adapter method, every error kind, rounding, idempotency and the signed wire.
 */
import assert from "node:assert/strict";
import { type PlaceOrderRequest, type ProtectionRequest, VenueError, type VenueErrorKind } from "../../venues/types.ts";
import { encodeParams, signPayload, signRequest } from "../../venues/venue_a/auth.ts";
import { classifyFailure } from "../../venues/venue_a/errors.ts";
import { startVenueA, TEST_BINDING } from "./venue_a_harness.ts";

const T0 = Date.UTC(2026, 0, 5, 12, 0, 10);

interface Sent {
  method: string;
  url: string;
  body: string;
  headers: Headers;
}

/** A fetch that records what the adapter put on the wire before sending it. */
function recording(log: Sent[], inner: typeof fetch = fetch): typeof fetch {
  return (input, init) => {
    log.push({
      method: init?.method ?? "GET",
      url: String(input),
      body: typeof init?.body === "string" ? init.body : "",
      headers: new Headers(init?.headers),
    });
    return inner(input, init);
  };
}

const orderPosts = (log: Sent[]) =>
  log.filter((s) => s.method === "POST" && new URL(s.url).pathname === "/fapi/v1/order");

/** Awaits a rejection, checks its kind and that no secret leaked into anything the error carries. */
async function rejects(promise: Promise<unknown>, kind: VenueErrorKind, secrets: string[] = []): Promise<VenueError> {
  const error = await promise.then(() => undefined, (e) => e);
  assert.ok(error instanceof VenueError, `expected a VenueError, got ${error}`);
  assert.equal(error.kind, kind, error.message);
  assert.equal(error.detail.providerId, "VENUE_A");
  const visible = [error.message, error.stack ?? "", String(error), JSON.stringify(error.detail)].join("\n");
  for (const secret of secrets) assert.ok(!visible.includes(secret), "a secret leaked into the error");
  return error;
}

function limit(clientOrderId: string, side: "BUY" | "SELL", quantity: string, price: string): PlaceOrderRequest {
  return { symbol: "BTCUSDT", side, type: "LIMIT", quantity, price, reduceOnly: false, clientOrderId };
}

function market(clientOrderId: string, side: "BUY" | "SELL", quantity: string, reduceOnly = false): PlaceOrderRequest {
  return { symbol: "BTCUSDT", side, type: "MARKET", quantity, reduceOnly, clientOrderId };
}

/** The stop of a long position, triggering at 60,000. */
function longStop(clientOrderId: string, quantity: string): ProtectionRequest {
  return { symbol: "BTCUSDT", kind: "STOP_LOSS", side: "SELL", triggerPrice: "60000", quantity, clientOrderId };
}

Deno.test("VENUE_A signer reproduces the documented HMAC example", () => {
  const secret = "2b5eb11e18796d12d88f13dc27dbbd02c2cc51ff7059765ed9821957d82bb4d9";
  const message =
    "symbol=BTCUSDT&side=BUY&type=LIMIT&quantity=1&price=9000&timeInForce=GTC&recvWindow=5000&timestamp=1591702613943";
  assert.equal(signPayload(secret, message), "3c661234138461fcc7a7d8746c6558c9842d4e10870d2ecbedf7777cad694af9");
  const signed = signRequest({
    method: "POST",
    params: { symbol: "BTCUSDT", side: "BUY", type: "LIMIT", quantity: "1", price: "9000", timeInForce: "GTC" },
    secret,
    timestamp: 1591702613943,
    recvWindow: 5000,
  });
  assert.equal(signed.query, "");
  assert.equal(signed.body, `${message}&signature=3c661234138461fcc7a7d8746c6558c9842d4e10870d2ecbedf7777cad694af9`);
  assert.equal(encodeParams({ id: "a:b/c d", skipped: undefined }), "id=a%3Ab%2Fc%20d");
});

Deno.test("VENUE_A adapter signs the exact percent-encoded bytes it sends", async () => {
  await using h = await startVenueA({ now: () => T0 });
  const keys = await h.account();
  const log: Sent[] = [];
  const adapter = h.adapter({ fetch: recording(log), now: () => T0 });
  const order = await adapter.placeOrder(keys.credentials, limit("a:b/c.d_e-f", "BUY", "0.01", "64000"));
  assert.equal(order.clientOrderId, "a:b/c.d_e-f");
  const [post] = orderPosts(log);
  assert.equal(post.headers.get("X-MBX-APIKEY"), keys.apiKey);
  assert.equal(post.headers.get("Content-Type"), "application/x-www-form-urlencoded");
  assert.equal(new URL(post.url).search, "");
  const [payload, signature] = post.body.split("&signature=");
  assert.equal(signature, signPayload(keys.apiSecret, payload));
  assert.ok(payload.includes("newClientOrderId=a%3Ab%2Fc.d_e-f"));
  assert.ok(payload.endsWith(`&recvWindow=5000&timestamp=${T0}`));
  await adapter.getOrder(keys.credentials, "BTCUSDT", "a:b/c.d_e-f");
  const get = log.find((s) => s.method === "GET" && s.url.includes("/fapi/v1/order?"))!;
  const query = new URL(get.url).search.slice(1);
  assert.equal(get.body, "");
  assert.equal(query.split("&signature=")[1], signPayload(keys.apiSecret, query.split("&signature=")[0]));
  for (const sent of log) assert.ok(!sent.url.includes(keys.apiSecret) && !sent.body.includes(keys.apiSecret));
});

Deno.test("VENUE_A adapter lists markets from the exchangeInfo filters and reads the book", async () => {
  await using h = await startVenueA();
  const adapter = h.adapter();
  const markets = await adapter.listMarkets();
  const btc = markets.find((m) => m.symbol === "BTCUSDT")!;
  assert.deepEqual(btc, {
    symbol: "BTCUSDT",
    providerSymbol: "BTCUSDT",
    kind: "PERPETUAL",
    base: "BTC",
    quote: "USDT",
    active: true,
    tickSize: "0.10",
    stepSize: "0.001",
    minQty: "0.001",
    minNotionalUsd: "100",
    quantityPrecision: 3,
    pricePrecision: 1,
    // exchangeInfo's requiredMarginPercent "5.0000", as the venue publishes it; leverageBracket allows 125.
    maxLeverage: 20,
  });
  for (const symbol of ["ETHUSDT", "SOLUSDT"]) assert.ok(markets.some((m) => m.symbol === symbol));
  const book = await adapter.getOrderBook("ETHUSDT", 3);
  assert.equal(book.symbol, "ETHUSDT");
  assert.equal(book.bids.length, 3);
  assert.equal(book.asks.length, 3);
  assert.equal(book.bids[0].price, "3199.99");
  assert.equal(book.asks[0].price, "3200.01");
  await rejects(adapter.getOrderBook("DOGEUSDT"), "INVALID_ORDER");
});

Deno.test("VENUE_A testCredentials reports key restrictions and account modes, read-only", async () => {
  await using h = await startVenueA();
  const log: Sent[] = [];
  const adapter = h.adapter({ fetch: recording(log) });
  const ready = await h.account();
  const check = await adapter.testCredentials(ready.credentials);
  assert.deepEqual(check.problems, []);
  assert.deepEqual(check.permissions, { canRead: true, canFutures: true, canWithdraw: false });
  assert.equal(check.accountHint, `…${ready.apiKey.slice(-4)}`);
  const risky = await h.account({
    canWithdraw: true,
    ipRestrict: false,
    dualSidePosition: true,
    multiAssetsMargin: true,
  });
  assert.deepEqual((await adapter.testCredentials(risky.credentials)).problems, [
    "WITHDRAWALS_ENABLED",
    "IP_UNRESTRICTED",
    "HEDGE_MODE_ENABLED",
    "MULTI_ASSETS_MARGIN_ENABLED",
  ]);
  const noFutures = await h.account({ enableFutures: false });
  const limited = await adapter.testCredentials(noFutures.credentials);
  assert.deepEqual(limited.problems, ["FUTURES_DISABLED"]);
  assert.equal(limited.permissions.canFutures, false);
  assert.ok(log.every((s) => s.method === "GET"), "testCredentials must only read");
  await rejects(adapter.getAccount(noFutures.credentials), "CREDENTIAL_REJECTED");
  // The key-permission check goes to the spot host, everything else to the futures host.
  for (const sent of log) {
    const host = new URL(sent.url).pathname.startsWith("/sapi/") ? h.spotBaseUrl : h.baseUrl;
    assert.ok(sent.url.startsWith(host), sent.url);
  }
  assert.ok(log.some((sent) => sent.url.startsWith(`${h.spotBaseUrl}/sapi/v1/account/apiRestrictions`)));
});

Deno.test("VENUE_A simulator serves each path on its own host only, each host with its own weight pools", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  // The harness sends /sapi to the spot host, which reports the endpoint's own pool in its own header.
  for (const used of ["1", "2"]) {
    const restrictions = await h.signed("GET", "/sapi/v1/account/apiRestrictions", {}, keys);
    assert.equal(restrictions.status, 200);
    assert.equal(restrictions.headers.get("X-SAPI-USED-IP-WEIGHT-1M"), used);
    assert.equal(restrictions.headers.get("X-MBX-USED-WEIGHT-1M"), null);
  }
  const time = await fetch(`${h.baseUrl}/fapi/v1/time`);
  assert.equal(time.headers.get("X-MBX-USED-WEIGHT-1M"), "1", "spot calls do not count on the futures host");
  await time.body?.cancel();
  for (const [base, path] of [[h.baseUrl, "/sapi/v1/account/apiRestrictions"], [h.spotBaseUrl, "/fapi/v1/time"]]) {
    const response = await fetch(`${base}${path}`);
    assert.equal(response.status, 404, `${base}${path}`);
    await response.body?.cancel();
  }
});

Deno.test("VENUE_A getAccount returns balances with USD value, non-zero positions and open orders", async () => {
  await using h = await startVenueA();
  const keys = await h.account({ balances: { USDT: "10000", BNB: "2" } });
  const adapter = h.adapter();
  await adapter.placeOrder(keys.credentials, market("open-1", "BUY", "0.010"));
  await adapter.placeOrder(keys.credentials, limit("rest-1", "BUY", "0.010", "60000"));
  const snapshot = await adapter.getAccount(keys.credentials);
  const usdt = snapshot.balances.find((b) => b.asset === "USDT")!;
  assert.equal(usdt.usdValue, usdt.total);
  assert.ok(Number(usdt.free) < Number(usdt.total), "margin in use lowers the free balance");
  assert.equal(snapshot.balances.find((b) => b.asset === "BNB")?.usdValue, "1200");
  assert.equal(snapshot.positions.length, 1);
  assert.deepEqual(
    { ...snapshot.positions[0], unrealizedPnlUsd: undefined, liquidationPrice: undefined },
    {
      symbol: "BTCUSDT",
      side: "LONG",
      quantity: "0.010",
      entryPrice: "65000.1",
      markPrice: "65000.00",
      unrealizedPnlUsd: undefined,
      leverage: 20,
      marginMode: "CROSSED",
      liquidationPrice: undefined,
    },
  );
  assert.deepEqual(snapshot.openOrders.map((o) => [o.clientOrderId, o.status, o.price]), [[
    "rest-1",
    "NEW",
    "60000.00",
  ]]);
});

Deno.test("VENUE_A placeOrder rounds prices towards the passive side and quantities down", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const adapter = h.adapter();
  const buy = await adapter.placeOrder(keys.credentials, limit("buy-round", "BUY", "0.0109", "64000.07"));
  assert.deepEqual([buy.price, buy.quantity, buy.status, buy.timeInForce], ["64000.00", "0.010", "NEW", "GTC"]);
  const sell = await adapter.placeOrder(keys.credentials, limit("sell-round", "SELL", "0.0101", "65100.01"));
  assert.deepEqual([sell.price, sell.quantity], ["65100.10", "0.010"]);
  const exact = await adapter.placeOrder(keys.credentials, limit("on-tick", "BUY", "0.010", "64000.10"));
  assert.equal(exact.price, "64000.10");
  const sol = await adapter.placeOrder(keys.credentials, {
    symbol: "SOLUSDT",
    side: "BUY",
    type: "LIMIT",
    quantity: "1.9",
    price: "149.999",
    timeInForce: "POST_ONLY",
    reduceOnly: false,
    clientOrderId: "sol-step",
  });
  assert.deepEqual([sol.quantity, sol.price, sol.timeInForce], ["1", "149.9900", "POST_ONLY"]);
});

Deno.test("VENUE_A placeOrder refuses orders below minQty or min notional before sending them (MARKET: the venue)", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const log: Sent[] = [];
  const adapter = h.adapter({ fetch: recording(log) });
  const tooSmall = await rejects(
    adapter.placeOrder(keys.credentials, limit("q", "BUY", "0.0009", "64000")),
    "INVALID_ORDER",
  );
  assert.match(tooSmall.message, /below the minimum "0.001"/);
  await rejects(adapter.placeOrder(keys.credentials, limit("n1", "BUY", "0.001", "64000")), "INVALID_ORDER");
  // 0.0019 rounds down to 0.001: the notional after rounding is what counts.
  await rejects(adapter.placeOrder(keys.credentials, limit("n2", "BUY", "0.0019", "65000")), "INVALID_ORDER");
  await rejects(adapter.placeOrder(keys.credentials, limit("bad id!", "BUY", "0.01", "64000")), "INVALID_ORDER");
  await rejects(adapter.placeOrder(keys.credentials, limit("no-px", "BUY", "0.01", "-1")), "INVALID_ORDER");
  assert.equal(orderPosts(log).length, 0, "nothing below the filters reaches the venue");
  // A MARKET order is valued at the mark price, which the venue checks itself: no mark-price read before sending.
  const marketBelow = await rejects(
    adapter.placeOrder(keys.credentials, market("n3", "BUY", "0.001")),
    "INVALID_ORDER",
  );
  assert.equal(marketBelow.detail.venueCode, -4164);
  assert.ok(!log.some((s) => s.url.includes("/fapi/v1/premiumIndex")));
  const boundary = await adapter.placeOrder(keys.credentials, limit("n4", "BUY", "0.002", "50000"));
  assert.equal(boundary.status, "NEW", "a notional exactly at the minimum is accepted");
  await adapter.placeOrder(keys.credentials, market("open", "BUY", "0.002"));
  const reduce = await adapter.placeOrder(keys.credentials, market("reduce", "SELL", "0.001", true));
  assert.equal(reduce.status, "FILLED", "reduce-only orders are exempt from min notional");
});

Deno.test("VENUE_A placeOrder with the id of an open order answers that order (-4116), never a second one", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const log: Sent[] = [];
  const adapter = h.adapter({ fetch: recording(log) });
  const first = await adapter.placeOrder(keys.credentials, limit("same-id", "BUY", "0.01", "64000"));
  const again = await adapter.placeOrder(keys.credentials, limit("same-id", "BUY", "0.01", "64000"));
  assert.equal(again.orderId, first.orderId);
  const [a, b] = await Promise.all([
    adapter.placeOrder(keys.credentials, limit("race-id", "BUY", "0.01", "63000")),
    adapter.placeOrder(keys.credentials, limit("race-id", "BUY", "0.01", "63000")),
  ]);
  assert.equal(a.orderId, b.orderId, "a -4116 race resolves to the one order");
  // The id is looked up only after the venue refused it as a duplicate: once per -4116, never before a POST.
  const lookups = log.filter((s) => s.method === "GET" && new URL(s.url).pathname === "/fapi/v1/order");
  assert.deepEqual([orderPosts(log).length, lookups.length], [4, 2]);
  const view = await h.control<{ orders: unknown[] }>("GET", `/accounts/${keys.apiKey}`);
  assert.equal(view.orders.length, 2);
});

Deno.test("VENUE_A getOrder, cancelOrder and modifyOrder work by client order id", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const adapter = h.adapter();
  assert.equal(await adapter.getOrder(keys.credentials, "BTCUSDT", "never-sent"), null);
  const placed = await adapter.placeOrder(keys.credentials, limit("life", "BUY", "0.01", "64000"));
  assert.deepEqual(await adapter.getOrder(keys.credentials, "BTCUSDT", "life"), placed);
  const modified = await adapter.modifyOrder(keys.credentials, {
    symbol: "BTCUSDT",
    clientOrderId: "life",
    quantity: "0.0209",
    price: "63000.05",
  });
  assert.deepEqual([modified.orderId, modified.quantity, modified.price], [placed.orderId, "0.020", "63000.00"]);
  const unchanged = await adapter.modifyOrder(keys.credentials, {
    symbol: "BTCUSDT",
    clientOrderId: "life",
    quantity: "0.020",
    price: "63000",
  });
  assert.equal(unchanged.price, "63000.00", "asking for the current values is a success");
  await rejects(
    adapter.modifyOrder(keys.credentials, { symbol: "BTCUSDT", clientOrderId: "nope", quantity: "0.01", price: "1" }),
    "INVALID_ORDER",
  );
  const cancelled = await adapter.cancelOrder(keys.credentials, "BTCUSDT", "life");
  assert.equal(cancelled.status, "CANCELED");
  const twice = await adapter.cancelOrder(keys.credentials, "BTCUSDT", "life");
  assert.equal(twice.status, "CANCELED", "cancelling a cancelled order answers its state");
  await rejects(adapter.cancelOrder(keys.credentials, "BTCUSDT", "never-sent"), "INVALID_ORDER");
});

Deno.test("VENUE_A setLeverage and setMarginMode change symbol settings; 'no need to change' is success", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const adapter = h.adapter();
  await adapter.setLeverage(keys.credentials, "BTCUSDT", 10);
  await adapter.setMarginMode(keys.credentials, "BTCUSDT", "ISOLATED");
  await adapter.setMarginMode(keys.credentials, "BTCUSDT", "ISOLATED");
  await adapter.placeOrder(keys.credentials, market("iso", "BUY", "0.01"));
  const [position] = (await adapter.getAccount(keys.credentials)).positions;
  assert.deepEqual([position.leverage, position.marginMode], [10, "ISOLATED"]);
  const change = await rejects(adapter.setMarginMode(keys.credentials, "BTCUSDT", "CROSSED"), "INVALID_ORDER");
  assert.equal(change.detail.venueCode, -4048);
  await rejects(adapter.setLeverage(keys.credentials, "BTCUSDT", 0), "INVALID_ORDER");
  const tooHigh = await rejects(adapter.setLeverage(keys.credentials, "SOLUSDT", 100), "INVALID_ORDER");
  assert.equal(tooHigh.detail.venueCode, -4028);
});

Deno.test("VENUE_A protections go through the algo endpoints and fire on the mark price", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const log: Sent[] = [];
  const adapter = h.adapter({ fetch: recording(log) });
  await adapter.placeOrder(keys.credentials, market("entry", "BUY", "0.010"));
  const stop = {
    symbol: "BTCUSDT",
    kind: "STOP_LOSS",
    side: "SELL",
    triggerPrice: "60000.04",
    quantity: "0.010",
  } as const;
  const sl = await adapter.placeProtection(keys.credentials, { ...stop, clientOrderId: "sl-1" });
  assert.deepEqual([sl.type, sl.status, sl.triggerPrice, sl.reduceOnly], [
    "STOP_MARKET",
    "TRIGGER_PENDING",
    "60000.10",
    true,
  ]);
  const algoPost = log.find((s) => s.method === "POST" && s.url.endsWith("/fapi/v1/algoOrder"))!;
  const sent = new URLSearchParams(algoPost.body);
  assert.deepEqual([sent.get("algoType"), sent.get("reduceOnly"), sent.get("clientAlgoId")], [
    "CONDITIONAL",
    "true",
    "sl-1",
  ]);
  assert.equal(sent.get("closePosition"), null);
  assert.equal(orderPosts(log).filter((s) => s.body.includes("STOP")).length, 0);
  const again = await adapter.placeProtection(keys.credentials, { ...stop, clientOrderId: "sl-1" });
  assert.equal(again.orderId, sl.orderId);
  await adapter.placeProtection(keys.credentials, {
    symbol: "BTCUSDT",
    kind: "TAKE_PROFIT",
    side: "SELL",
    triggerPrice: "70000",
    quantity: "0.010",
    clientOrderId: "tp-1",
  });
  assert.deepEqual((await adapter.listProtections(keys.credentials, "BTCUSDT")).map((o) => o.clientOrderId), [
    "sl-1",
    "tp-1",
  ]);
  await adapter.cancelProtection(keys.credentials, "BTCUSDT", "tp-1");
  assert.equal((await adapter.listProtections(keys.credentials)).length, 1);
  await h.control("PUT", "/markets/BTCUSDT", { markPrice: "59990" });
  const fired = await adapter.getOrder(keys.credentials, "BTCUSDT", "sl-1");
  assert.deepEqual([fired?.status, fired?.filledQuantity], ["FILLED", "0.010"]);
  assert.equal((await adapter.getAccount(keys.credentials)).positions.length, 0);
  await adapter.cancelProtection(keys.credentials, "BTCUSDT", "sl-1");
  await rejects(adapter.cancelProtection(keys.credentials, "BTCUSDT", "nope"), "INVALID_ORDER");
});

Deno.test("VENUE_A a stop or target the mark price has already passed is refused before sending, not fired", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const log: Sent[] = [];
  const adapter = h.adapter({ fetch: recording(log) });
  await adapter.placeOrder(keys.credentials, market("entry", "BUY", "0.010"));
  log.length = 0;
  // The mark is 65,000: a long's stop at 66,000 and its target at 64,000 would both fire at once at the venue.
  const stop = await adapter.placeProtection(keys.credentials, longStop("sl-1", "0.010"));
  assert.equal(stop.status, "TRIGGER_PENDING", "a stop below the mark is not crossed");
  const crossedStop = await rejects(
    adapter.placeProtection(keys.credentials, { ...longStop("sl-2", "0.010"), triggerPrice: "66000" }),
    "TRIGGER_CROSSED",
  );
  assert.equal(crossedStop.detail.venueCode, undefined, "refused here, not by the venue");
  assert.match(crossedStop.message, /already reached by the mark price "65000/);
  await rejects(
    adapter.placeProtection(keys.credentials, {
      symbol: "BTCUSDT",
      kind: "TAKE_PROFIT",
      side: "SELL",
      triggerPrice: "64000",
      quantity: "0.010",
      clientOrderId: "tp-2",
    }),
    "TRIGGER_CROSSED",
  );
  const posts = log.filter((s) => s.method === "POST").map((s) => new URL(s.url).pathname);
  assert.deepEqual(posts, ["/fapi/v1/algoOrder"], "only the uncrossed stop was sent");
  assert.equal((await adapter.getAccount(keys.credentials)).positions.length, 1, "the position is still held");
});

Deno.test("VENUE_A placement reads nothing but a conditional order's mark price; exchangeInfo once a minute, shared", async () => {
  let t = T0;
  await using h = await startVenueA({ now: () => t });
  const keys = await h.account();
  const log: Sent[] = [];
  const adapter = h.adapter({ fetch: recording(log), now: () => t });
  const path = (sent: Sent) => `${sent.method} ${new URL(sent.url).pathname}`;
  // A cold adapter's concurrent first orders share one exchangeInfo read.
  await Promise.all([
    adapter.placeOrder(keys.credentials, limit("p-1", "BUY", "0.010", "64000")),
    adapter.placeOrder(keys.credentials, limit("p-2", "BUY", "0.010", "63000")),
    adapter.placeOrder(keys.credentials, market("p-3", "BUY", "0.010")),
  ]);
  assert.deepEqual(log.filter((s) => s.method === "GET").map(path), ["GET /fapi/v1/exchangeInfo"]);
  log.length = 0;
  await adapter.placeOrder(keys.credentials, market("p-4", "BUY", "0.010"));
  await adapter.placeProtection(keys.credentials, longStop("p-sl", "0.020"));
  await adapter.placeOrder(keys.credentials, {
    symbol: "BTCUSDT",
    side: "BUY",
    type: "STOP_MARKET",
    triggerPrice: "66000",
    quantity: "0.010",
    reduceOnly: false,
    clientOrderId: "p-entry",
  });
  await adapter.listMarkets();
  assert.deepEqual(
    log.map(path),
    [
      "POST /fapi/v1/order",
      "GET /fapi/v1/premiumIndex",
      "POST /fapi/v1/algoOrder",
      "GET /fapi/v1/premiumIndex",
      "POST /fapi/v1/algoOrder",
    ],
    "only a conditional order reads (its trigger against the mark), and listing markets within the minute reads nothing",
  );
  t += 60_000;
  log.length = 0;
  await adapter.placeOrder(keys.credentials, limit("p-5", "BUY", "0.010", "62000"));
  assert.deepEqual(log.map(path), ["GET /fapi/v1/exchangeInfo", "POST /fapi/v1/order"], "refreshed after a minute");
});

Deno.test("VENUE_A stops of two accounts placed while a mark read is in flight share it; a later one reads again", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const other = await h.account();
  const log: Sent[] = [];
  // The mark read answers only when the test lets it: both placements have asked for it by then.
  let release = () => {};
  const held = new Promise<void>((resolve) => release = resolve);
  const holdingMarks: typeof fetch = async (input, init) => {
    if (String(input).includes("/fapi/v1/premiumIndex")) await held;
    return await fetch(input, init);
  };
  const adapter = h.adapter({ fetch: recording(log, holdingMarks) });
  const path = (sent: Sent) => `${sent.method} ${new URL(sent.url).pathname}`;
  await adapter.placeOrder(keys.credentials, market("k-1", "BUY", "0.010"));
  await adapter.placeOrder(other.credentials, market("o-1", "BUY", "0.010"));
  log.length = 0;
  const placed = Promise.all([
    adapter.placeProtection(other.credentials, longStop("o-sl", "0.010")),
    adapter.placeProtection(keys.credentials, longStop("k-sl", "0.010")),
  ]);
  await new Promise((resolve) => setTimeout(resolve, 300));
  release();
  await placed;
  assert.deepEqual(log.map(path), ["GET /fapi/v1/premiumIndex", "POST /fapi/v1/algoOrder", "POST /fapi/v1/algoOrder"]);
  log.length = 0;
  await adapter.placeProtection(other.credentials, longStop("o-sl-2", "0.010"));
  assert.deepEqual(log.map(path), ["GET /fapi/v1/premiumIndex", "POST /fapi/v1/algoOrder"]);
});

Deno.test("VENUE_A a fired protection is working, not FILLED, until the venue finishes it; cancel is refused", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const adapter = h.adapter();
  await adapter.placeOrder(keys.credentials, market("entry", "BUY", "0.010"));
  await adapter.placeProtection(keys.credentials, longStop("sl-hold", "0.010"));
  const algoStatus = async () =>
    (await h.control<{ algoOrders: { clientAlgoId: string; algoStatus: string }[] }>("GET", `/accounts/${keys.apiKey}`))
      .algoOrders.find((o) => o.clientAlgoId === "sl-hold")?.algoStatus;
  await h.control("PUT", "/algo-hold", { hold: true });
  await h.control("PUT", "/markets/BTCUSDT", { markPrice: "59990" });
  assert.equal(await algoStatus(), "TRIGGERING");
  const triggering = await adapter.getOrder(keys.credentials, "BTCUSDT", "sl-hold");
  assert.deepEqual([triggering?.status, triggering?.filledQuantity, triggering?.averagePrice], ["NEW", "0", null]);
  // Too late to cancel: the venue answers -4117 and the adapter does not call it cancelled.
  const refused = await rejects(adapter.cancelProtection(keys.credentials, "BTCUSDT", "sl-hold"), "INVALID_ORDER");
  assert.equal(refused.detail.venueCode, -4117);
  assert.match(refused.message, /can no longer be cancelled/);
  const viaCancelOrder = await adapter.cancelOrder(keys.credentials, "BTCUSDT", "sl-hold");
  assert.equal(viaCancelOrder.status, "NEW", "cancelOrder answers the order as still working");
  assert.equal(await algoStatus(), "TRIGGERING");

  await h.control("PUT", "/algo-hold", { hold: true, stage: "TRIGGERED" });
  assert.equal(await algoStatus(), "TRIGGERED");
  assert.equal((await adapter.getOrder(keys.credentials, "BTCUSDT", "sl-hold"))?.status, "NEW");
  const inEngine = await rejects(adapter.cancelProtection(keys.credentials, "BTCUSDT", "sl-hold"), "INVALID_ORDER");
  assert.equal(inEngine.detail.venueCode, -2011);
  assert.equal((await adapter.getAccount(keys.credentials)).positions.length, 1, "nothing executed yet");

  await h.control("PUT", "/algo-hold", { hold: false });
  assert.equal(await algoStatus(), "FINISHED");
  const finished = await adapter.getOrder(keys.credentials, "BTCUSDT", "sl-hold");
  assert.deepEqual([finished?.status, finished?.filledQuantity, finished?.averagePrice], [
    "FILLED",
    "0.010",
    "59989.9",
  ]);
  assert.equal((await adapter.getAccount(keys.credentials)).positions.length, 0);
  // Cancelling one that is done succeeds and changes nothing.
  await adapter.cancelProtection(keys.credentials, "BTCUSDT", "sl-hold");
  assert.equal((await adapter.getOrder(keys.credentials, "BTCUSDT", "sl-hold"))?.status, "FILLED");
});

Deno.test("VENUE_A a protection FINISHED with nothing executed is CANCELED; one refused at trigger is REJECTED", async () => {
  await using h = await startVenueA();
  const keys = await h.account({ balances: { USDT: "100" } });
  const adapter = h.adapter();
  await adapter.placeOrder(keys.credentials, market("small", "BUY", "0.002"));
  await adapter.placeProtection(keys.credentials, longStop("sl-empty", "0.002"));
  await h.control("PUT", "/algo-hold", { hold: true, stage: "TRIGGERED" });
  await h.control("PUT", "/markets/BTCUSDT", { markPrice: "59990" });
  // The position is closed by hand while the stop's order waits in the engine, so that order has nothing to reduce.
  await adapter.placeOrder(keys.credentials, market("by-hand", "SELL", "0.002", true));
  await h.control("PUT", "/algo-hold", { hold: false });
  const empty = await adapter.getOrder(keys.credentials, "BTCUSDT", "sl-empty");
  assert.deepEqual([empty?.status, empty?.filledQuantity, empty?.averagePrice], ["CANCELED", "0.000", null]);

  // No margin check until the trigger: 0.1 BTC at 20x needs about 330 USDT, the account has about 100.
  const entry = await adapter.placeOrder(keys.credentials, {
    symbol: "BTCUSDT",
    side: "BUY",
    type: "STOP_MARKET",
    triggerPrice: "66000",
    quantity: "0.100",
    reduceOnly: false,
    clientOrderId: "entry-stop",
  });
  assert.equal(entry.status, "TRIGGER_PENDING");
  await h.control("PUT", "/markets/BTCUSDT", { markPrice: "66000" });
  const rejected = await adapter.getOrder(keys.credentials, "BTCUSDT", "entry-stop");
  assert.deepEqual([rejected?.status, rejected?.filledQuantity], ["REJECTED", "0"]);
  assert.equal((await adapter.getAccount(keys.credentials)).positions.length, 0);
});

Deno.test("VENUE_A a reduce-only stop larger than the position is FILLED with what it closed, not CANCELED", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const adapter = h.adapter();
  await adapter.placeOrder(keys.credentials, market("entry", "BUY", "0.020"));
  await adapter.placeProtection(keys.credentials, longStop("sl-whole", "0.020"));
  // A scale-out closes half; the stop keeps its quantity and the venue cuts it to what is left when it fires.
  await adapter.placeOrder(keys.credentials, market("scale-out", "SELL", "0.010", true));
  await h.control("PUT", "/markets/BTCUSDT", { markPrice: "59990" });
  const fired = await adapter.getOrder(keys.credentials, "BTCUSDT", "sl-whole");
  assert.deepEqual([fired?.status, fired?.quantity, fired?.filledQuantity, fired?.averagePrice], [
    "FILLED",
    "0.020",
    "0.010",
    "59989.9",
  ]);
  assert.equal((await adapter.getAccount(keys.credentials)).positions.length, 0);
});

Deno.test("VENUE_A the venue's caps on open orders (-2025) and waiting conditional orders (-4045) are INVALID_ORDER", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const adapter = h.adapter();
  await h.control("PUT", "/limits", { maxOpenOrdersPerSymbol: 1, maxConditionalOrders: 1 });
  await adapter.placeOrder(keys.credentials, market("entry", "BUY", "0.010"));
  await adapter.placeOrder(keys.credentials, limit("rest-1", "BUY", "0.010", "60000"));
  const orders = await rejects(
    adapter.placeOrder(keys.credentials, limit("rest-2", "BUY", "0.010", "59000")),
    "INVALID_ORDER",
  );
  assert.deepEqual([orders.detail.venueCode, /max open order limit/.test(orders.message)], [-2025, true]);
  await adapter.placeProtection(keys.credentials, longStop("sl-1", "0.010"));
  const stops = await rejects(
    adapter.placeProtection(keys.credentials, { ...longStop("sl-2", "0.010"), triggerPrice: "59000" }),
    "INVALID_ORDER",
  );
  assert.deepEqual([stops.detail.venueCode, /max stop order limit/.test(stops.message)], [-4045, true]);
});

Deno.test("VENUE_A an order past the venue's 90-day query retention is found in the open lists while it works", async () => {
  let t = T0;
  await using h = await startVenueA({ now: () => t });
  const keys = await h.account();
  const adapter = h.adapter({ now: () => t });
  await adapter.placeOrder(keys.credentials, market("entry", "BUY", "0.010"));
  await adapter.placeProtection(keys.credentials, longStop("sl-old", "0.010"));
  await adapter.placeOrder(keys.credentials, limit("bid-old", "BUY", "0.010", "60000"));
  t += 91 * 86_400_000;
  const stop = await adapter.getOrder(keys.credentials, "BTCUSDT", "sl-old");
  assert.deepEqual(
    [stop?.status, Number(stop?.triggerPrice)],
    ["TRIGGER_PENDING", 60000],
    "still working, not unknown",
  );
  assert.equal((await adapter.getOrder(keys.credentials, "BTCUSDT", "bid-old"))?.status, "NEW");
  // Ended and forgotten: the venue knows nothing of it any more.
  assert.equal(await adapter.getOrder(keys.credentials, "BTCUSDT", "entry"), null);
  assert.equal(await adapter.getOrder(keys.credentials, "BTCUSDT", "never-sent"), null);
});

Deno.test("VENUE_A getFills and getFunding report commission, realized PnL and funding", async () => {
  await using h = await startVenueA();
  const keys = await h.account({ balances: { USDT: "10000", BNB: "1" }, feeBurn: true });
  const adapter = h.adapter();
  const since = (await h.control<{ income: { time: number }[] }>("GET", `/accounts/${keys.apiKey}`)).income[0].time;
  await adapter.placeOrder(keys.credentials, market("f-open", "BUY", "0.010"));
  await h.control("POST", "/funding", { symbol: "BTCUSDT", rate: "0.0001" });
  await h.control("PUT", "/markets/BTCUSDT", { markPrice: "66000" });
  await adapter.placeOrder(keys.credentials, market("f-close", "SELL", "0.010", true));
  const fills = await adapter.getFills(keys.credentials, { symbol: "BTCUSDT", since });
  assert.equal(fills.length, 2);
  assert.deepEqual([fills[0].side, fills[0].price, fills[0].realizedPnl, fills[0].feeAsset], [
    "BUY",
    "65000.10",
    "0",
    "BNB",
  ]);
  // 0.01 * 65000.1 * 0.0005 * 0.9 / 600 BNB, rounded up to 8 places.
  assert.equal(fills[0].fee, "0.00048751");
  assert.deepEqual([fills[1].side, fills[1].price, fills[1].realizedPnl], ["SELL", "65999.90", "9.99800000"]);
  assert.equal(fills[1].builderFee, null);
  assert.deepEqual(
    (await adapter.getFills(keys.credentials, { since })).map((f) => f.tradeId),
    fills.map((f) => f.tradeId),
  );
  const funding = await adapter.getFunding(keys.credentials, { since });
  assert.deepEqual(funding.map((f) => [f.symbol, f.amount, f.asset]), [["BTCUSDT", "-0.06500000", "USDT"]]);
});

Deno.test("VENUE_A maps venue rejections to error kinds without leaking secrets", async () => {
  await using h = await startVenueA();
  const keys = await h.account({ balances: { USDT: "100" } });
  const adapter = h.adapter();
  const secrets = [keys.apiSecret];
  const margin = await rejects(
    adapter.placeOrder(keys.credentials, market("big", "BUY", "0.1")),
    "INSUFFICIENT_MARGIN",
    secrets,
  );
  assert.equal(margin.detail.venueCode, -2019);
  const percent = await rejects(
    adapter.placeOrder(keys.credentials, limit("far", "BUY", "0.002", "70000")),
    "INVALID_ORDER",
    secrets,
  );
  assert.equal(percent.detail.venueCode, -4016);
  const reduce = await rejects(
    adapter.placeOrder(keys.credentials, market("ro", "SELL", "0.002", true)),
    "INVALID_ORDER",
    secrets,
  );
  assert.equal(reduce.detail.venueCode, -2022);
  const wrongSecret = { ...keys.credentials, sealedApiSecret: await h.secrets.seal("x".repeat(64), TEST_BINDING) };
  const signature = await rejects(adapter.getAccount(wrongSecret), "CREDENTIAL_REJECTED", [...secrets, "x".repeat(64)]);
  assert.equal(signature.detail.venueCode, -1022);
  await rejects(
    adapter.getAccount({ ...keys.credentials, sealedApiSecret: { sealed: "v2.broken.seal", binding: TEST_BINDING } }),
    "CREDENTIAL_REJECTED",
  );
  await rejects(
    adapter.getAccount({
      scheme: "AGENT_WALLET",
      accountAddress: "0x1",
      agentAddress: "0x2",
      sealedAgentPrivateKey: { sealed: "", binding: TEST_BINDING },
    }),
    "CREDENTIAL_REJECTED",
  );
  await h.control("PUT", "/faults", { mode: "REJECT_KEYS" });
  assert.equal(
    (await rejects(adapter.getAccount(keys.credentials), "CREDENTIAL_REJECTED", secrets)).detail.venueCode,
    -2015,
  );
  await h.control("PUT", "/faults", { mode: "NONE" });
  await h.control("DELETE", `/accounts/${keys.apiKey}`);
  const revoked = await rejects(
    adapter.placeOrder(keys.credentials, limit("r", "BUY", "0.01", "64000")),
    "CREDENTIAL_REJECTED",
    secrets,
  );
  assert.equal(revoked.detail.venueCode, -2015);
});

Deno.test("VENUE_A a -2015 counts as a refused key only once the spot host confirms it", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const log: Sent[] = [];
  const adapter = h.adapter({ fetch: recording(log) });
  await adapter.getAccount(keys.credentials);
  // The venue's temporary block: the futures host refuses a key that is still valid.
  await h.control("POST", `/accounts/${keys.apiKey}/block`, { ms: 600_000 });
  log.length = 0;
  const blocked = await rejects(adapter.getAccount(keys.credentials), "RATE_LIMITED", [keys.apiSecret]);
  assert.deepEqual([blocked.detail.venueCode, blocked.detail.retryAfterMs], [-2015, 60_000]);
  assert.match(blocked.message, /blocked it for a while/);
  assert.ok(log.some((s) => new URL(s.url).pathname === "/sapi/v1/account/apiRestrictions"), "confirmed on spot");
  const order = await rejects(adapter.placeOrder(keys.credentials, limit("b", "BUY", "0.01", "64000")), "RATE_LIMITED");
  assert.equal(order.detail.venueCode, -2015, "an order refused so is definitely not placed, not OUTCOME_UNKNOWN");
  await h.control("POST", `/accounts/${keys.apiKey}/block`, { ms: 0 });
  assert.equal((await adapter.getAccount(keys.credentials)).positions.length, 0, "the same key works again");

  // Refused on the spot host too (revoked): confirmed.
  await h.control("DELETE", `/accounts/${keys.apiKey}`);
  const revoked = await rejects(adapter.getAccount(keys.credentials), "CREDENTIAL_REJECTED", [keys.apiSecret]);
  assert.equal(revoked.detail.venueCode, -2015);
  // A key the spot host accepts without the futures permission: confirmed as well.
  const noFutures = await h.account({ enableFutures: false });
  const withdrawn = await rejects(adapter.getAccount(noFutures.credentials), "CREDENTIAL_REJECTED");
  assert.match(withdrawn.message, /no longer has the futures permission/);
  // The spot host cannot be read: the refusal stays unconfirmed.
  const other = await h.account();
  await h.control("POST", `/accounts/${other.apiKey}/block`, { ms: 600_000 });
  const spotDown = h.adapter({
    fetch: (input, init) =>
      String(input).includes("/sapi/") ? Promise.reject(new TypeError("connection refused")) : fetch(input, init),
  });
  assert.equal((await rejects(spotDown.getAccount(other.credentials), "UNAVAILABLE")).detail.venueCode, -2015);
});

Deno.test("VENUE_A resynchronises its clock with /fapi/v1/time after a -1021", async () => {
  for (const skew of [-120_000, 5_000]) {
    const t = T0;
    await using h = await startVenueA({ now: () => t });
    const keys = await h.account();
    const log: Sent[] = [];
    const adapter = h.adapter({ fetch: recording(log), now: () => t + skew });
    await adapter.getAccount(keys.credentials);
    await adapter.placeOrder(keys.credentials, limit(`skew${skew}`, "BUY", "0.01", "64000"));
    assert.equal(log.filter((s) => s.url.endsWith("/fapi/v1/time")).length, 1, "one resync serves later calls");
  }
  assert.equal(classifyFailure({ status: 400, code: -1021 }, true), "UNAVAILABLE");
});

Deno.test("VENUE_A rate limits: the venue's 429 with Retry-After, then local back-off before the limit", async () => {
  let t = T0;
  await using h = await startVenueA({ now: () => t });
  const log: Sent[] = [];
  const unaware = h.adapter({ fetch: recording(log), now: () => t });
  await h.control("PUT", "/limits", { requestWeightPerMinute: 12 });
  for (let i = 0; i < 6; i++) await unaware.getOrderBook("BTCUSDT", 5);
  const limited = await rejects(unaware.getOrderBook("BTCUSDT", 5), "RATE_LIMITED");
  assert.equal(limited.detail.venueCode, -1003);
  assert.equal(limited.detail.retryAfterMs, 50_000);
  const sent = log.length;
  const held = await rejects(unaware.getOrderBook("BTCUSDT", 5), "RATE_LIMITED");
  assert.equal(held.detail.venueCode, undefined);
  assert.equal(log.length, sent, "no request is sent while the venue asked us to wait");
  t += 60_000;
  const aware = h.adapter({ fetch: recording(log), now: () => t });
  await h.control("PUT", "/limits", { requestWeightPerMinute: 20 });
  await aware.listMarkets();
  let refused: VenueError | undefined;
  for (let i = 0; i < 20 && !refused; i++) {
    refused = await aware.getOrderBook("BTCUSDT", 5).then(() => undefined, (e) => e);
  }
  assert.ok(refused instanceof VenueError && refused.kind === "RATE_LIMITED");
  assert.equal(refused.detail.venueCode, undefined, "refused on our side, before the venue's 429");
  assert.ok(refused.detail.retryAfterMs! > 0 && refused.detail.retryAfterMs! <= 60_000);
});

Deno.test("VENUE_A an IP ban (418) holds every request back for the ban's Retry-After, not the minute's", async () => {
  let t = T0;
  await using h = await startVenueA({ now: () => t });
  await h.control("PUT", "/limits", { requestWeightPerMinute: 12 });
  // Two processes behind one IP, neither knowing of the other's answers: one meets the 429, the other sends on.
  const first = h.adapter({ now: () => t });
  for (let i = 0; i < 6; i++) await first.getOrderBook("BTCUSDT", 5);
  assert.equal((await rejects(first.getOrderBook("BTCUSDT", 5), "RATE_LIMITED")).detail.retryAfterMs, 50_000);
  const log: Sent[] = [];
  const second = h.adapter({ fetch: recording(log), now: () => t });
  const ban = await rejects(second.getOrderBook("BTCUSDT", 5), "RATE_LIMITED");
  assert.deepEqual([ban.detail.venueCode, ban.detail.retryAfterMs], [-1003, 120_000]);
  assert.match(ban.message, /IP banned until/);
  const sent = log.length;
  t += 60_000;
  // The minute turned, the ban did not: nothing is sent until it ends.
  const held = await rejects(second.getOrderBook("BTCUSDT", 5), "RATE_LIMITED");
  assert.deepEqual([held.detail.venueCode, held.detail.retryAfterMs], [undefined, 60_000]);
  assert.equal(log.length, sent, "no request is sent during the ban");
  t += 60_000;
  assert.equal((await second.getOrderBook("BTCUSDT", 5)).bids.length, 5);
});

Deno.test("VENUE_A the spot host's X-SAPI-USED-IP-WEIGHT-1M feeds its weight budget", async () => {
  const t = T0;
  await using h = await startVenueA({ now: () => t });
  const keys = await h.account();
  const log: Sent[] = [];
  const adapter = h.adapter({ fetch: recording(log), now: () => t });
  // Other processes behind the IP spent most of the endpoint's 12,000 this minute; we keep to 90 % (10,800).
  await h.control("PUT", "/weight-used", { pool: "GET /sapi/v1/account/apiRestrictions", used: 10_799 });
  await adapter.testCredentials(keys.credentials);
  const spotCalls = () => log.filter((s) => new URL(s.url).pathname.startsWith("/sapi/")).length;
  assert.equal(spotCalls(), 1);
  const refused = await rejects(adapter.testCredentials(keys.credentials), "RATE_LIMITED");
  assert.equal(refused.detail.venueCode, undefined, "refused on our side, from the header's 10,800");
  assert.equal(spotCalls(), 1, "nothing more was sent to the spot host");
  // The futures host's budget is its own: its reads go on.
  assert.equal((await adapter.getOrderBook("BTCUSDT", 5)).bids.length, 5);
});

Deno.test("VENUE_A order limits are per account: kept below the announced share, and a -1015 holds back that account only", async () => {
  let t = T0;
  await using h = await startVenueA({ now: () => t });
  const [first, second] = [await h.account(), await h.account()];
  const log: Sent[] = [];
  // Announced before the adapter reads exchangeInfo: 5 orders per 10 s, of which it allows itself 90 % (4).
  await h.control("PUT", "/limits", { ordersPer10Seconds: 5 });
  const aware = h.adapter({ fetch: recording(log), now: () => t });
  for (let i = 0; i < 4; i++) await aware.placeOrder(first.credentials, limit(`aw${i}`, "BUY", "0.01", "60000"));
  const sent = orderPosts(log).length;
  const spent = await rejects(
    aware.placeOrder(first.credentials, limit("aw4", "BUY", "0.01", "60000")),
    "RATE_LIMITED",
  );
  assert.equal(spent.detail.venueCode, undefined, "refused on our side, before the venue's -1015");
  assert.ok(spent.detail.retryAfterMs! > 0 && spent.detail.retryAfterMs! <= 10_000);
  assert.equal(orderPosts(log).length, sent, "nothing was sent");
  await aware.placeOrder(second.credentials, limit("aw-other", "BUY", "0.01", "60000"));
  // The next 10-second window takes orders again.
  t += 10_000;
  await aware.placeOrder(first.credentials, limit("aw5", "BUY", "0.01", "60000"));

  // An adapter that read the limits before they were lowered meets the venue's -1015 ...
  t += 60_000;
  const stale = h.adapter({ fetch: recording(log), now: () => t });
  await stale.listMarkets();
  await h.control("PUT", "/limits", { ordersPer10Seconds: 2 });
  for (let i = 0; i < 2; i++) await stale.placeOrder(first.credentials, limit(`st${i}`, "BUY", "0.01", "60000"));
  const refused = await rejects(
    stale.placeOrder(first.credentials, limit("st2", "BUY", "0.01", "60000")),
    "RATE_LIMITED",
  );
  assert.equal(refused.detail.venueCode, -1015);
  // ... after which that account waits without sending, while another account and reads go on.
  const before = log.length;
  const held = await rejects(stale.placeOrder(first.credentials, limit("st3", "BUY", "0.01", "60000")), "RATE_LIMITED");
  assert.equal(held.detail.venueCode, undefined);
  assert.equal(log.length, before, "the held account's order was not sent");
  await stale.placeOrder(second.credentials, limit("st-other", "BUY", "0.01", "60000"));
  await stale.getOrderBook("BTCUSDT", 5);
});

Deno.test("VENUE_A answers UNAVAILABLE when the venue is down, for reads and for a refused placement", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const adapter = h.adapter();
  await adapter.listMarkets();
  await h.control("PUT", "/faults", { mode: "DOWN" });
  await rejects(adapter.getOrderBook("BTCUSDT"), "UNAVAILABLE");
  await rejects(adapter.getAccount(keys.credentials), "UNAVAILABLE");
  await h.control("PUT", "/faults", { mode: "NONE" });
  const log: Sent[] = [];
  const downOnPost: typeof fetch = (input, init) =>
    init?.method === "POST"
      ? Promise.resolve(new Response(JSON.stringify({ msg: "Service Unavailable." }), { status: 503 }))
      : fetch(input, init);
  const down = h.adapter({ fetch: recording(log, downOnPost) });
  await rejects(down.placeOrder(keys.credentials, limit("down", "BUY", "0.01", "64000")), "UNAVAILABLE");
  const unreachable = h.adapter({ baseUrl: "http://127.0.0.1:9" });
  await rejects(unreachable.getOrderBook("BTCUSDT"), "UNAVAILABLE");
});

Deno.test("VENUE_A LOSE_RESPONSE on placement is OUTCOME_UNKNOWN, resolved by getOrder, never placed twice", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const adapter = h.adapter();
  await adapter.listMarkets();
  await h.control("PUT", "/faults", { mode: "LOSE_RESPONSE" });
  const lost = await rejects(
    adapter.placeOrder(keys.credentials, market("lost-1", "BUY", "0.010")),
    "OUTCOME_UNKNOWN",
    [
      keys.apiSecret,
    ],
  );
  assert.match(lost.message, /client order id/);
  await rejects(adapter.placeOrder(keys.credentials, limit("lost-2", "BUY", "0.01", "64000")), "OUTCOME_UNKNOWN");
  await rejects(adapter.cancelOrder(keys.credentials, "BTCUSDT", "lost-2"), "OUTCOME_UNKNOWN");
  await h.control("PUT", "/faults", { mode: "NONE" });
  // The caller settles the unknown outcome by querying the id, never by sending it again.
  const found = await adapter.getOrder(keys.credentials, "BTCUSDT", "lost-1");
  assert.equal(found?.status, "FILLED");
  assert.equal((await adapter.getOrder(keys.credentials, "BTCUSDT", "lost-2"))?.status, "CANCELED");
  const view = await h.control<{ orders: unknown[]; positions: { positionAmt: string }[] }>(
    "GET",
    `/accounts/${keys.apiKey}`,
  );
  assert.equal(view.orders.length, 2);
  assert.equal(view.positions[0].positionAmt, "0.010", "the market order executed exactly once");
});

Deno.test("VENUE_A timeouts: a read is UNAVAILABLE, a placement that timed out is OUTCOME_UNKNOWN", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const stallAfterPost: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (init?.method !== "POST") return response;
    // The venue has applied the order; only its answer never arrives before our timer.
    await response.body?.cancel();
    return await new Promise<Response>((_, reject) => {
      init.signal?.addEventListener("abort", () => reject(new DOMException("Aborted", "AbortError")));
    });
  };
  const adapter = h.adapter({ fetch: stallAfterPost, timeoutMs: 150 });
  const timedOut = await rejects(
    adapter.placeOrder(keys.credentials, limit("slow-1", "BUY", "0.01", "64000")),
    "OUTCOME_UNKNOWN",
  );
  assert.match(timedOut.message, /timed out after 150 ms/);
  assert.equal((await adapter.getOrder(keys.credentials, "BTCUSDT", "slow-1"))?.status, "NEW");
  const reset: typeof fetch = (input, init) =>
    init?.method === "POST" ? Promise.reject(new TypeError("Connection reset by peer")) : fetch(input, init);
  await rejects(
    h.adapter({ fetch: reset }).placeOrder(keys.credentials, limit("reset-1", "BUY", "0.01", "64000")),
    "OUTCOME_UNKNOWN",
  );
  await h.control("PUT", "/faults", { mode: "SLOW", ms: 400 });
  await rejects(h.adapter({ timeoutMs: 100 }).getOrderBook("BTCUSDT"), "UNAVAILABLE");
  await h.control("PUT", "/faults", { mode: "NONE" });
});

Deno.test("VENUE_A classifies every code of the facts file's error table", () => {
  const expected: [number, VenueErrorKind, VenueErrorKind][] = [
    [-1000, "UNAVAILABLE", "OUTCOME_UNKNOWN"],
    [-1001, "UNAVAILABLE", "UNAVAILABLE"],
    [-1003, "RATE_LIMITED", "RATE_LIMITED"],
    [-1006, "UNAVAILABLE", "OUTCOME_UNKNOWN"],
    [-1007, "UNAVAILABLE", "OUTCOME_UNKNOWN"],
    [-1008, "RATE_LIMITED", "RATE_LIMITED"],
    [-1015, "RATE_LIMITED", "RATE_LIMITED"],
    [-1021, "UNAVAILABLE", "UNAVAILABLE"],
    [-1022, "CREDENTIAL_REJECTED", "CREDENTIAL_REJECTED"],
    [-1102, "INVALID_ORDER", "INVALID_ORDER"],
    [-1106, "INVALID_ORDER", "INVALID_ORDER"],
    [-1111, "INVALID_ORDER", "INVALID_ORDER"],
    [-1121, "INVALID_ORDER", "INVALID_ORDER"],
    [-2010, "INVALID_ORDER", "INVALID_ORDER"],
    [-2011, "INVALID_ORDER", "INVALID_ORDER"],
    [-2013, "INVALID_ORDER", "INVALID_ORDER"],
    [-2014, "CREDENTIAL_REJECTED", "CREDENTIAL_REJECTED"],
    [-2015, "CREDENTIAL_REJECTED", "CREDENTIAL_REJECTED"],
    [-2018, "INSUFFICIENT_MARGIN", "INSUFFICIENT_MARGIN"],
    [-2019, "INSUFFICIENT_MARGIN", "INSUFFICIENT_MARGIN"],
    [-2021, "TRIGGER_CROSSED", "TRIGGER_CROSSED"],
    [-2022, "INVALID_ORDER", "INVALID_ORDER"],
    [-4003, "INVALID_ORDER", "INVALID_ORDER"],
    [-4014, "INVALID_ORDER", "INVALID_ORDER"],
    [-4015, "INVALID_ORDER", "INVALID_ORDER"],
    [-4023, "INVALID_ORDER", "INVALID_ORDER"],
    [-4061, "INVALID_ORDER", "INVALID_ORDER"],
    [-4116, "INVALID_ORDER", "INVALID_ORDER"],
    [-4120, "INVALID_ORDER", "INVALID_ORDER"],
    [-4131, "INVALID_ORDER", "INVALID_ORDER"],
    [-4164, "INVALID_ORDER", "INVALID_ORDER"],
    [-5021, "INVALID_ORDER", "INVALID_ORDER"],
    [-5022, "INVALID_ORDER", "INVALID_ORDER"],
    [-5028, "UNAVAILABLE", "UNAVAILABLE"],
  ];
  for (const [code, read, mutation] of expected) {
    assert.equal(classifyFailure({ status: 400, code }, false), read, `read ${code}`);
    assert.equal(classifyFailure({ status: 400, code }, true), mutation, `mutation ${code}`);
  }
  const unknown = { status: 503, msg: "Unknown error, please check your request or try again later." };
  assert.equal(classifyFailure(unknown, true), "OUTCOME_UNKNOWN");
  assert.equal(classifyFailure(unknown, false), "UNAVAILABLE");
  assert.equal(classifyFailure({ status: 503, msg: "Service Unavailable." }, true), "UNAVAILABLE");
  assert.equal(classifyFailure({ status: 502 }, true), "OUTCOME_UNKNOWN");
  assert.equal(classifyFailure({ status: 418 }, false), "RATE_LIMITED");
  assert.equal(classifyFailure({ status: 401 }, false), "CREDENTIAL_REJECTED");
  assert.equal(classifyFailure({ status: 400, code: -4999 }, true), "INVALID_ORDER");
});
