/**
 * The VENUE_A simulator on the wire: signature verification as the venue
 * does it, exact error codes / messages / statuses, the matching model, the
 * accounting, and the `/_control` contract.
 */
import assert from "node:assert/strict";
import { encodeParams, signPayload } from "../../venues/venue_a/auth.ts";
import { startVenueA } from "./venue_a_harness.ts";

const T0 = Date.UTC(2026, 0, 5, 12, 0, 10);

Deno.test("simulator verifies HMAC over query + body exactly as received", async () => {
  await using h = await startVenueA({ now: () => T0 });
  const keys = await h.account();
  const ok = await h.signed("GET", "/fapi/v3/account", {}, keys, { timestamp: T0 });
  assert.equal(ok.status, 200);
  const inBody = await h.signed("POST", "/fapi/v1/leverage", { symbol: "BTCUSDT", leverage: 5 }, keys, {
    timestamp: T0,
  });
  assert.deepEqual(inBody.body, { leverage: 5, maxNotionalValue: "12000000", symbol: "BTCUSDT" });
  // Mixed: part in the query, part in the body; the signature covers query followed directly by body.
  const query = "symbol=BTCUSDT&side=BUY&type=LIMIT&timeInForce=GTC";
  const body = `quantity=0.010&price=64000&recvWindow=5000&timestamp=${T0}`;
  const signature = signPayload(keys.apiSecret, `${query}${body}`).toUpperCase();
  const mixed = await fetch(`${h.baseUrl}/fapi/v1/order?${query}`, {
    method: "POST",
    headers: { "X-MBX-APIKEY": keys.apiKey, "Content-Type": "application/x-www-form-urlencoded" },
    body: `${body}&signature=${signature}`,
  });
  assert.equal(mixed.status, 200, "uppercase hex is accepted");
  assert.equal((await mixed.json()).status, "NEW");
  // Percent-encoded values are signed as sent, not decoded first.
  const encoded = await h.signed("GET", "/fapi/v1/order", { symbol: "BTCUSDT", origClientOrderId: "a:b/c" }, keys, {
    timestamp: T0,
  });
  assert.deepEqual(encoded.body, { code: -2013, msg: "Order does not exist." });
});

Deno.test("simulator answers the venue's authentication errors in the venue's order", async () => {
  let t = T0;
  await using h = await startVenueA({ now: () => t });
  const keys = await h.account();
  const expect = async (
    response: Promise<{ status: number; body: Record<string, unknown> }>,
    status: number,
    code: number,
    msg: string,
  ) => {
    const { status: actual, body } = await response;
    assert.deepEqual([actual, body], [status, { code, msg }]);
  };
  await expect(
    h.signed("GET", "/fapi/v3/account", {}, { ...keys, apiKey: "short" }),
    401,
    -2014,
    "API-key format invalid.",
  );
  await expect(
    h.signed("GET", "/fapi/v3/account", {}, { ...keys, apiKey: "A".repeat(64) }),
    401,
    -2015,
    "Invalid API-key, IP, or permissions for action.",
  );
  await expect(
    h.signed("GET", "/fapi/v3/account", {}, keys, { secret: "wrong" }),
    400,
    -1022,
    "Signature for this request is not valid.",
  );
  await expect(
    h.signed("GET", "/fapi/v3/account", {}, keys, { timestamp: T0 - 5001 }),
    400,
    -1021,
    "Timestamp for this request is outside of the recvWindow.",
  );
  assert.equal(
    (await h.signed("GET", "/fapi/v3/account", {}, keys, { timestamp: T0 - 9000, recvWindow: 10000 })).status,
    200,
  );
  await expect(
    h.signed("GET", "/fapi/v3/account", {}, keys, { timestamp: T0 + 1000 }),
    400,
    -1021,
    "Timestamp for this request was 1000ms ahead of the server's time.",
  );
  await expect(
    h.signed("GET", "/fapi/v3/account", {}, keys, { recvWindow: 60001 }),
    400,
    -1130,
    "Data sent for parameter 'recvWindow' is not valid.",
  );
  const unsigned = await fetch(`${h.baseUrl}/fapi/v3/account?${encodeParams({ timestamp: t })}`, {
    headers: { "X-MBX-APIKEY": keys.apiKey },
  });
  assert.deepEqual([unsigned.status, await unsigned.json()], [400, {
    code: -1102,
    msg: "Mandatory parameter 'signature' was not sent, was empty/null, or malformed.",
  }]);
  // The signature must be the last parameter of the part that carries it.
  const payload = encodeParams({ timestamp: t });
  const notLast = await fetch(
    `${h.baseUrl}/fapi/v3/account?signature=${signPayload(keys.apiSecret, payload)}&${payload}`,
    { headers: { "X-MBX-APIKEY": keys.apiKey } },
  );
  assert.deepEqual(await notLast.json(), { code: -1022, msg: "Signature for this request is not valid." });
  t += 1;
  // A key without futures permission may read its own restrictions on the spot host, nothing on fapi.
  const spotOnly = await h.account({ enableFutures: false });
  assert.equal((await h.signed("GET", "/sapi/v1/account/apiRestrictions", {}, spotOnly)).status, 200);
  assert.equal((await h.signed("GET", "/fapi/v3/account", {}, spotOnly)).body.code, -2015);
  await h.control("DELETE", `/accounts/${keys.apiKey}`);
  assert.equal((await h.signed("GET", "/fapi/v3/account", {}, keys)).body.code, -2015);
});

Deno.test("simulator reads a name sent in both query and body from the query", async () => {
  await using h = await startVenueA({ now: () => T0 });
  const keys = await h.account();
  const query = encodeParams({ symbol: "BTCUSDT", timestamp: T0 });
  const body = encodeParams({ symbol: "ETHUSDT", leverage: 7 });
  const response = await fetch(`${h.baseUrl}/fapi/v1/leverage?${query}`, {
    method: "POST",
    headers: { "X-MBX-APIKEY": keys.apiKey, "Content-Type": "application/x-www-form-urlencoded" },
    body: `${body}&signature=${signPayload(keys.apiSecret, `${query}${body}`)}`,
  });
  assert.deepEqual(await response.json(), { leverage: 7, maxNotionalValue: "12000000", symbol: "BTCUSDT" });
});

Deno.test("simulator publishes market data in the venue's shapes with weight headers", async () => {
  await using h = await startVenueA();
  const get = async (path: string) => {
    const response = await fetch(`${h.baseUrl}${path}`);
    return { headers: response.headers, body: await response.json() };
  };
  const info = await get("/fapi/v1/exchangeInfo");
  const btc = info.body.symbols.find((s: { symbol: string }) => s.symbol === "BTCUSDT");
  assert.deepEqual(btc.filters.find((f: { filterType: string }) => f.filterType === "MIN_NOTIONAL"), {
    filterType: "MIN_NOTIONAL",
    notional: "100",
  });
  // The legacy margin fields as the venue publishes them (20x), not the brackets' 125x.
  assert.deepEqual([btc.maintMarginPercent, btc.requiredMarginPercent], ["2.5000", "5.0000"]);
  assert.equal(info.body.rateLimits[0].limit, 2400);
  assert.equal(info.headers.get("X-MBX-USED-WEIGHT-1M"), "1");
  const depth = await get("/fapi/v1/depth?symbol=SOLUSDT&limit=5");
  assert.equal(depth.body.bids.length, 5);
  assert.deepEqual(depth.body.asks[0], ["150.0100", "500"]);
  assert.equal(depth.headers.get("X-MBX-USED-WEIGHT-1M"), "3");
  assert.deepEqual((await get("/fapi/v1/depth?symbol=SOLUSDT&limit=7")).body, {
    code: -4021,
    msg: "'7' is not valid depth limit.",
  });
  const ticker = await get("/fapi/v1/ticker/bookTicker?symbol=ETHUSDT");
  assert.deepEqual([ticker.body.bidPrice, ticker.body.askPrice], ["3199.99", "3200.01"]);
  const marks = await get("/fapi/v1/premiumIndex");
  assert.ok(Array.isArray(marks.body) && marks.body.length >= 3);
  assert.deepEqual((await get("/fapi/v1/premiumIndex?symbol=NOPE")).body, { code: -1121, msg: "Invalid symbol." });
  await h.control("PUT", "/markets/BTCUSDT", { markPrice: "70000.05", bid: "69990.0", ask: "70010.0", depth: "3.5" });
  const moved = await get("/fapi/v1/depth?symbol=BTCUSDT&limit=5");
  assert.deepEqual([moved.body.bids[0], moved.body.asks[1]], [["69990.00", "3.5"], ["70010.10", "3.5"]]);
});

Deno.test("simulator enforces the weight limit with 429, -1003 and Retry-After", async () => {
  let t = T0;
  await using h = await startVenueA({ now: () => t });
  await h.control("PUT", "/limits", { requestWeightPerMinute: 3 });
  for (let i = 0; i < 3; i++) await (await fetch(`${h.baseUrl}/fapi/v1/time`)).body?.cancel();
  const limited = await fetch(`${h.baseUrl}/fapi/v1/time`);
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get("Retry-After"), "50");
  assert.deepEqual(await limited.json(), {
    code: -1003,
    msg:
      "Too many requests; current limit is 3 requests per minute. Please use the websocket for live updates to avoid polling the API.",
  });
  // Sending on after the 429 bans the IP: 418 on both hosts for 2 minutes, then twice as long the next time.
  const banned = await fetch(`${h.baseUrl}/fapi/v1/time`);
  assert.deepEqual([banned.status, banned.headers.get("Retry-After")], [418, "120"]);
  assert.deepEqual(await banned.json(), {
    code: -1003,
    msg: `Way too many requests; IP banned until ${
      T0 + 120_000
    }. Please use the websocket for live updates to avoid bans.`,
  });
  const keys = await h.account();
  assert.equal((await h.signed("GET", "/sapi/v1/account/apiRestrictions", {}, keys)).status, 418);
  t += 60_000;
  const stillBanned = await fetch(`${h.baseUrl}/fapi/v1/time`);
  assert.deepEqual([stillBanned.status, stillBanned.headers.get("Retry-After")], [418, "60"]);
  await stillBanned.body?.cancel();
  t += 60_000;
  assert.equal((await fetch(`${h.baseUrl}/fapi/v1/time`).then(async (r) => (await r.body?.cancel(), r))).status, 200);
  for (let i = 0; i < 2; i++) await (await fetch(`${h.baseUrl}/fapi/v1/time`)).body?.cancel();
  assert.equal((await fetch(`${h.baseUrl}/fapi/v1/time`).then(async (r) => (await r.body?.cancel(), r))).status, 429);
  const again = await fetch(`${h.baseUrl}/fapi/v1/time`);
  assert.deepEqual([again.status, again.headers.get("Retry-After")], [418, "240"]);
  await again.body?.cancel();
  await h.control("PUT", "/limits", {});
  // The spot host reports its own endpoint's pool, with what other processes spent in it this minute.
  const spot = await h.signed("GET", "/sapi/v1/account/apiRestrictions", {}, keys);
  assert.deepEqual([spot.status, spot.headers.get("X-SAPI-USED-IP-WEIGHT-1M")], [200, "1"]);
  await h.control("PUT", "/weight-used", { pool: "GET /sapi/v1/account/apiRestrictions", used: 11_000 });
  const spent = await h.signed("GET", "/sapi/v1/account/apiRestrictions", {}, keys);
  assert.equal(spent.headers.get("X-SAPI-USED-IP-WEIGHT-1M"), "11001");
});

Deno.test("simulator validates orders against the filters with the venue's codes", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const order = (params: Record<string, string>) =>
    h.signed("POST", "/fapi/v1/order", { symbol: "BTCUSDT", side: "BUY", ...params }, keys).then((r) => r.body);
  const lim = { type: "LIMIT", timeInForce: "GTC" };
  assert.deepEqual(await order({ ...lim, quantity: "0.010", price: "64000.05" }), {
    code: -4014,
    msg: "Price not increased by tick size.",
  });
  assert.equal((await order({ ...lim, quantity: "0.0105", price: "64000" })).code, -1111);
  assert.equal((await order({ ...lim, quantity: "0.0000", price: "64000" })).code, -4003);
  assert.equal((await order({ ...lim, quantity: "1001", price: "64000" })).code, -4005);
  assert.equal((await order({ ...lim, quantity: "0.010", price: "70000" })).code, -4016);
  assert.deepEqual(await order({ ...lim, quantity: "0.001", price: "64000" }), {
    code: -4164,
    msg: "Order's notional must be no smaller than 100 (unless you choose reduce only)",
  });
  assert.equal((await order({ type: "MARKET", quantity: "121" })).code, -4005);
  assert.equal((await order({ type: "LIMIT", quantity: "0.010", price: "64000" })).code, -1102);
  assert.deepEqual(await order({ type: "STOP_MARKET", quantity: "0.010", stopPrice: "60000" }), {
    code: -4120,
    msg: "Order type not supported for this endpoint. Please use the Algo Order API endpoints instead.",
  });
  assert.equal((await order({ type: "MARKET", quantity: "0.010", reduceOnly: "true" })).code, -2022);
  assert.equal((await order({ type: "MARKET", quantity: "0.010", positionSide: "LONG" })).code, -4061);
  assert.equal(
    (await order({ ...lim, quantity: "0.010", price: "64000", newClientOrderId: "x".repeat(37) })).code,
    -4015,
  );
  assert.equal((await order({ type: "LIMIT", timeInForce: "GTX", quantity: "0.010", price: "65000.1" })).code, -5022);
  assert.equal((await order({ type: "LIMIT", timeInForce: "FOK", quantity: "0.010", price: "64000" })).code, -5021);
  const ioc = await order({ type: "LIMIT", timeInForce: "IOC", quantity: "0.010", price: "64000" });
  assert.equal(ioc.status, "EXPIRED");
  assert.equal((await order({ symbol: "DOGEUSDT", type: "MARKET", quantity: "1" })).code, -1121);
  const poor = await h.account({ balances: { USDT: "10" } });
  const broke = await h.signed("POST", "/fapi/v1/order", {
    symbol: "BTCUSDT",
    side: "BUY",
    type: "MARKET",
    quantity: "0.010",
  }, poor);
  assert.deepEqual([broke.status, broke.body], [400, { code: -2019, msg: "Margin is insufficient." }]);
});

Deno.test("simulator matching: taker fills at the touch, resting makers fill when the mark moves through", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const send = (params: Record<string, string>) =>
    h.signed("POST", "/fapi/v1/order", { symbol: "BTCUSDT", ...params, newOrderRespType: "RESULT" }, keys).then((r) =>
      r.body as Record<string, string | number>
    );
  const taker = await send({ side: "BUY", type: "LIMIT", timeInForce: "GTC", quantity: "0.010", price: "65100" });
  assert.deepEqual([taker.status, taker.avgPrice, taker.executedQty, taker.cumQty], [
    "FILLED",
    "65000.1",
    "0.010",
    "0.010",
  ]);
  const maker = await send({ side: "SELL", type: "LIMIT", timeInForce: "GTC", quantity: "0.010", price: "66000" });
  assert.equal(maker.status, "NEW");
  const dup = await send({
    side: "SELL",
    type: "LIMIT",
    timeInForce: "GTC",
    quantity: "0.010",
    price: "66000",
    newClientOrderId: String(maker.clientOrderId),
  });
  assert.deepEqual(dup, { code: -4116, msg: "clientOrderId is duplicated" });
  await h.control("PUT", "/markets/BTCUSDT", { markPrice: "66000" });
  const queried = await h.signed("GET", "/fapi/v1/order", { symbol: "BTCUSDT", orderId: maker.orderId }, keys);
  assert.deepEqual([queried.body.status, queried.body.avgPrice, "time" in queried.body, "cumQty" in queried.body], [
    "FILLED",
    "66000",
    true,
    false,
  ]);
  const trades = (await h.signed("GET", "/fapi/v1/userTrades", { symbol: "BTCUSDT" }, keys)).body as unknown as {
    maker: boolean;
    commission: string;
    realizedPnl: string;
    commissionAsset: string;
    marginAsset: string;
  }[];
  assert.deepEqual(trades.map((t) => [t.maker, t.commission, t.realizedPnl, t.commissionAsset]), [
    [false, "0.32500050", "0", "USDT"],
    [true, "0.13200000", "9.99900000", "USDT"],
  ]);
  assert.equal(trades[0].marginAsset, "USDT");
  // The venue only refuses a duplicate while the first order is open; a filled id can be reused.
  const reuse = await send({
    side: "BUY",
    type: "LIMIT",
    timeInForce: "GTC",
    quantity: "0.010",
    price: "60000",
    newClientOrderId: String(maker.clientOrderId),
  });
  assert.equal(reuse.status, "NEW");
  const income = (await h.signed("GET", "/fapi/v1/income", {}, keys)).body as unknown as { incomeType: string }[];
  assert.deepEqual(income.map((r) => r.incomeType), ["TRANSFER", "COMMISSION", "REALIZED_PNL", "COMMISSION"]);
  const cancel = await h.signed("DELETE", "/fapi/v1/order", { symbol: "BTCUSDT", orderId: reuse.orderId }, keys);
  assert.equal(cancel.body.status, "CANCELED");
  const again = await h.signed("DELETE", "/fapi/v1/order", { symbol: "BTCUSDT", orderId: reuse.orderId }, keys);
  assert.deepEqual(again.body, { code: -2011, msg: "Unknown order sent." });
});

Deno.test("simulator algo orders: trigger rules, closePosition, cancel and the string '200' answer", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  await h.signed(
    "POST",
    "/fapi/v1/order",
    { symbol: "ETHUSDT", side: "SELL", type: "MARKET", quantity: "1.000" },
    keys,
  );
  const algo = (params: Record<string, string>) =>
    h.signed("POST", "/fapi/v1/algoOrder", { algoType: "CONDITIONAL", symbol: "ETHUSDT", ...params }, keys).then((
      r,
    ) => r.body as Record<string, string | number>);
  // A trigger the mark (3,200) has already passed is taken, not refused (-2021 is documented for trailing stops
  // only): the answer is NEW and the order fires on the algo service's first check, closing the short.
  const crossed = await algo({ side: "BUY", type: "STOP_MARKET", triggerPrice: "3100", closePosition: "true" });
  assert.deepEqual([crossed.algoStatus, crossed.triggerPrice], ["NEW", "3100"]);
  const firedAtOnce = await h.signed("GET", "/fapi/v1/algoOrder", { algoId: crossed.algoId }, keys);
  assert.deepEqual([firedAtOnce.body.algoStatus, firedAtOnce.body.actualQty], ["FINISHED", "1.000"]);
  await h.signed(
    "POST",
    "/fapi/v1/order",
    { symbol: "ETHUSDT", side: "SELL", type: "MARKET", quantity: "1.000" },
    keys,
  );
  assert.equal(
    (await algo({ side: "BUY", type: "STOP_MARKET", triggerPrice: "3300", closePosition: "true", quantity: "1" }))
      .code,
    -4137,
  );
  const stop = await algo({ side: "BUY", type: "STOP_MARKET", triggerPrice: "3300", closePosition: "true" });
  assert.deepEqual([stop.algoStatus, stop.orderType, stop.closePosition], ["NEW", "STOP_MARKET", true]);
  const tp = await algo({
    side: "BUY",
    type: "TAKE_PROFIT_MARKET",
    triggerPrice: "3000",
    quantity: "0.500",
    reduceOnly: "true",
    clientAlgoId: "tp-eth",
  });
  assert.deepEqual([tp.clientAlgoId, tp.reduceOnly, tp.quantity], ["tp-eth", true, "0.500"]);
  assert.equal(
    (await algo({
      side: "BUY",
      type: "TAKE_PROFIT_MARKET",
      triggerPrice: "3000",
      quantity: "0.5",
      clientAlgoId: "tp-eth",
    })).code,
    -4116,
  );
  const open = await h.signed("GET", "/fapi/v1/openAlgoOrders", { symbol: "ETHUSDT" }, keys);
  assert.equal((open.body as unknown as unknown[]).length, 2);
  await h.control("PUT", "/markets/ETHUSDT", { markPrice: "2990" });
  const fired = await h.signed("GET", "/fapi/v1/algoOrder", { clientAlgoId: "tp-eth" }, keys);
  assert.deepEqual([fired.body.algoStatus, fired.body.actualQty, fired.body.actualPrice], [
    "FINISHED",
    "0.500",
    "2990.01",
  ]);
  const position = await h.signed("GET", "/fapi/v2/positionRisk", { symbol: "ETHUSDT" }, keys);
  assert.equal((position.body as unknown as { positionAmt: string }[])[0].positionAmt, "-0.500");
  await h.control("PUT", "/markets/ETHUSDT", { markPrice: "3300" });
  const closed = await h.signed("GET", "/fapi/v3/positionRisk", {}, keys);
  assert.deepEqual(closed.body, [], "v3 lists only symbols with a position or open orders");
  assert.deepEqual(await h.signed("DELETE", "/fapi/v1/algoOrder", { algoId: stop.algoId }, keys).then((r) => r.body), {
    code: -2011,
    msg: "Unknown order sent.",
  });
  const last = await algo({ side: "SELL", type: "STOP_MARKET", triggerPrice: "3000", quantity: "0.1" });
  const cancelled = await h.signed("DELETE", "/fapi/v1/algoOrder", { algoId: last.algoId }, keys);
  assert.deepEqual(cancelled.body, {
    algoId: last.algoId,
    clientAlgoId: last.clientAlgoId,
    code: "200",
    msg: "success",
  });
});

Deno.test("simulator algo lifecycle: NEW, TRIGGERING, TRIGGERED, FINISHED under a hold; -4117 while triggering", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  await h.signed("POST", "/fapi/v1/order", { symbol: "ETHUSDT", side: "BUY", type: "MARKET", quantity: "1.000" }, keys);
  const placed = await h.signed("POST", "/fapi/v1/algoOrder", {
    algoType: "CONDITIONAL",
    symbol: "ETHUSDT",
    side: "SELL",
    type: "STOP_MARKET",
    triggerPrice: "3100",
    quantity: "1.000",
    reduceOnly: "true",
    clientAlgoId: "sl-held",
  }, keys);
  assert.equal(placed.body.algoStatus, "NEW");
  const query = () => h.signed("GET", "/fapi/v1/algoOrder", { clientAlgoId: "sl-held" }, keys).then((r) => r.body);
  const cancel = () => h.signed("DELETE", "/fapi/v1/algoOrder", { clientAlgoId: "sl-held" }, keys).then((r) => r.body);

  assert.deepEqual(await h.control("PUT", "/algo-hold", { hold: true }), { hold: true, stage: "TRIGGERING", held: 0 });
  await h.control("PUT", "/markets/ETHUSDT", { markPrice: "3090" });
  const triggering = await query();
  assert.deepEqual([triggering.algoStatus, triggering.actualOrderId, triggering.actualQty], ["TRIGGERING", "", "0"]);
  assert.ok(Number(triggering.triggerTime) > 0);
  assert.deepEqual(await cancel(), { code: -4117, msg: "stop order is triggering" });
  const open = await h.signed("GET", "/fapi/v1/openAlgoOrders", { symbol: "ETHUSDT" }, keys);
  assert.deepEqual(open.body, [], "a fired order is no longer listed as waiting");
  const reused = await h.signed("POST", "/fapi/v1/algoOrder", {
    algoType: "CONDITIONAL",
    symbol: "ETHUSDT",
    side: "SELL",
    type: "STOP_MARKET",
    triggerPrice: "3000",
    quantity: "1.000",
    reduceOnly: "true",
    clientAlgoId: "sl-held",
  }, keys);
  assert.equal(reused.body.code, -4116, "a fired order that is not done still holds its client id");

  assert.equal((await h.control("PUT", "/algo-hold", { hold: true, stage: "TRIGGERED" })).held, 1);
  const triggered = await query();
  assert.deepEqual([triggered.algoStatus, triggered.actualQty], ["TRIGGERED", "0"]);
  assert.notEqual(triggered.actualOrderId, "");
  const child = await h.signed("GET", "/fapi/v1/order", {
    symbol: "ETHUSDT",
    orderId: String(triggered.actualOrderId),
  }, keys);
  assert.deepEqual([child.body.status, child.body.type, child.body.reduceOnly], ["NEW", "MARKET", true]);
  assert.deepEqual(await cancel(), { code: -2011, msg: "Unknown order sent." });

  assert.deepEqual(await h.control("PUT", "/algo-hold", { hold: false }), { hold: false, stage: null, held: 0 });
  const finished = await query();
  assert.deepEqual([finished.algoStatus, finished.actualQty, finished.actualPrice], ["FINISHED", "1.000", "3089.99"]);
  const position = await h.signed("GET", "/fapi/v2/positionRisk", { symbol: "ETHUSDT" }, keys);
  assert.equal((position.body as unknown as { positionAmt: string }[])[0].positionAmt, "0.000");
});

Deno.test("simulator algo outcomes: FINISHED with nothing executed, REJECTED for margin at trigger time", async () => {
  await using h = await startVenueA();
  const keys = await h.account({ balances: { USDT: "100" } });
  const algo = (params: Record<string, string>) =>
    h.signed("POST", "/fapi/v1/algoOrder", { algoType: "CONDITIONAL", symbol: "ETHUSDT", ...params }, keys)
      .then((r) => r.body);
  const query = (clientAlgoId: string) =>
    h.signed("GET", "/fapi/v1/algoOrder", { clientAlgoId }, keys).then((r) => r.body);
  // No margin check at placement: 1 ETH at 3300 and 20x needs 165 USDT, the account has 100.
  const entry = await algo({
    side: "BUY",
    type: "STOP_MARKET",
    triggerPrice: "3300",
    quantity: "1.000",
    clientAlgoId: "entry",
  });
  assert.equal(entry.algoStatus, "NEW");
  await h.control("PUT", "/markets/ETHUSDT", { markPrice: "3300" });
  const rejected = await query("entry");
  assert.deepEqual([rejected.algoStatus, rejected.actualOrderId, rejected.actualQty], ["REJECTED", "", "0"]);

  await algo({ side: "SELL", type: "STOP_MARKET", triggerPrice: "3200", quantity: "0.010", clientAlgoId: "short" });
  await h.control("PUT", "/algo-hold", { hold: true, stage: "TRIGGERED" });
  await h.control("PUT", "/markets/ETHUSDT", { markPrice: "3190" });
  const held = await query("short");
  assert.equal(held.algoStatus, "TRIGGERED");
  // Its order is cancelled in the engine before it runs: the algo order finishes with nothing executed.
  const cancelled = await h.signed("DELETE", "/fapi/v1/order", {
    symbol: "ETHUSDT",
    orderId: String(held.actualOrderId),
  }, keys);
  assert.equal(cancelled.body.status, "CANCELED");
  await h.control("PUT", "/algo-hold", { hold: false });
  const finished = await query("short");
  assert.deepEqual([finished.algoStatus, finished.actualQty, finished.actualPrice], ["FINISHED", "0.000", "0"]);
  const bad = await fetch(`${h.baseUrl}/_control/algo-hold`, {
    method: "PUT",
    body: JSON.stringify({ hold: true, stage: "FINISHED" }),
  });
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error, /stage/);
});

Deno.test("simulator a reduce-only stop larger than the position FINISHES with what it closed, its order FILLED", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  await h.signed("POST", "/fapi/v1/order", { symbol: "ETHUSDT", side: "BUY", type: "MARKET", quantity: "1.000" }, keys);
  await h.signed("POST", "/fapi/v1/algoOrder", {
    algoType: "CONDITIONAL",
    symbol: "ETHUSDT",
    side: "SELL",
    type: "STOP_MARKET",
    triggerPrice: "3100",
    quantity: "1.000",
    reduceOnly: "true",
    clientAlgoId: "sl-big",
  }, keys);
  await h.control("PUT", "/algo-hold", { hold: true, stage: "TRIGGERED" });
  await h.control("PUT", "/markets/ETHUSDT", { markPrice: "3090" });
  // Part of the position is closed by hand while the stop's order waits in the engine.
  await h.signed("POST", "/fapi/v1/order", {
    symbol: "ETHUSDT",
    side: "SELL",
    type: "MARKET",
    quantity: "0.400",
    reduceOnly: "true",
  }, keys);
  await h.control("PUT", "/algo-hold", { hold: false });
  const finished = (await h.signed("GET", "/fapi/v1/algoOrder", { clientAlgoId: "sl-big" }, keys)).body;
  assert.deepEqual([finished.algoStatus, finished.quantity, finished.actualQty], ["FINISHED", "1.000", "0.600"]);
  // The engine cut the reduce-only order to what was left to close and filled it: FILLED, not a partial EXPIRED.
  const child = (await h.signed("GET", "/fapi/v1/order", {
    symbol: "ETHUSDT",
    orderId: String(finished.actualOrderId),
  }, keys)).body;
  assert.deepEqual([child.status, child.origQty, child.executedQty], ["FILLED", "0.600", "0.600"]);
  const position = await h.signed("GET", "/fapi/v2/positionRisk", { symbol: "ETHUSDT" }, keys);
  assert.equal((position.body as unknown as { positionAmt: string }[])[0].positionAmt, "0.000");
});

Deno.test("simulator caps open orders per symbol (MAX_NUM_ORDERS, -2025) and waiting conditional orders across symbols (-4045)", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  await h.control("PUT", "/limits", { maxOpenOrdersPerSymbol: 2, maxConditionalOrders: 2 });
  const info = await fetch(`${h.baseUrl}/fapi/v1/exchangeInfo`).then((r) => r.json());
  const btc = info.symbols.find((s: { symbol: string }) => s.symbol === "BTCUSDT");
  assert.deepEqual(btc.filters.find((f: { filterType: string }) => f.filterType === "MAX_NUM_ORDERS"), {
    filterType: "MAX_NUM_ORDERS",
    limit: 2,
  });
  const limit = (symbol: string, price: string) =>
    h.signed("POST", "/fapi/v1/order", {
      symbol,
      side: "BUY",
      type: "LIMIT",
      timeInForce: "GTC",
      quantity: symbol === "BTCUSDT" ? "0.010" : "1.000",
      price,
    }, keys).then((r) => r.body);
  assert.equal((await limit("BTCUSDT", "60000")).status, "NEW");
  assert.equal((await limit("BTCUSDT", "59000")).status, "NEW");
  assert.deepEqual(await limit("BTCUSDT", "58000"), { code: -2025, msg: "Reach max open order limit." });
  assert.equal((await limit("ETHUSDT", "3000")).status, "NEW", "the cap is per symbol");
  const stop = (symbol: string, triggerPrice: string) =>
    h.signed("POST", "/fapi/v1/algoOrder", {
      algoType: "CONDITIONAL",
      symbol,
      side: "BUY",
      type: "STOP_MARKET",
      triggerPrice,
      quantity: symbol === "BTCUSDT" ? "0.010" : "1.000",
    }, keys).then((r) => r.body);
  assert.equal((await stop("BTCUSDT", "70000")).algoStatus, "NEW");
  assert.equal((await stop("ETHUSDT", "3500")).algoStatus, "NEW");
  assert.deepEqual(await stop("SOLUSDT", "200"), { code: -4045, msg: "Reach max stop order limit." });
});

Deno.test("simulator forgets orders as the venue does: unfilled cancelled ones after 3 days, all after 90 for queries", async () => {
  let t = Date.UTC(2026, 0, 5, 12, 0, 0);
  await using h = await startVenueA({ now: () => t });
  const keys = await h.account();
  const order = (id: string, price: string) =>
    h.signed("POST", "/fapi/v1/order", {
      symbol: "BTCUSDT",
      side: "BUY",
      type: "LIMIT",
      timeInForce: "GTC",
      quantity: "0.010",
      price,
      newClientOrderId: id,
    }, keys);
  const query = (id: string) =>
    h.signed("GET", "/fapi/v1/order", { symbol: "BTCUSDT", origClientOrderId: id }, keys).then((r) => r.body);
  await order("resting", "60000");
  await order("dropped", "59000");
  await h.signed("DELETE", "/fapi/v1/order", { symbol: "BTCUSDT", origClientOrderId: "dropped" }, keys);
  await h.signed("POST", "/fapi/v1/algoOrder", {
    algoType: "CONDITIONAL",
    symbol: "BTCUSDT",
    side: "BUY",
    type: "STOP_MARKET",
    triggerPrice: "70000",
    quantity: "0.010",
    clientAlgoId: "waiting",
  }, keys);
  t += 3 * 86_400_000 + 1;
  assert.deepEqual(await query("dropped"), { code: -2013, msg: "Order does not exist." });
  assert.equal((await query("resting")).status, "NEW");
  t += 87 * 86_400_000;
  assert.deepEqual(await query("resting"), { code: -2013, msg: "Order does not exist." }, "90 days, even open");
  const algo = await h.signed("GET", "/fapi/v1/algoOrder", { clientAlgoId: "waiting" }, keys);
  assert.equal(algo.body.code, -2013);
  // The open listings still show them.
  const open = await h.signed("GET", "/fapi/v1/openOrders", { symbol: "BTCUSDT" }, keys);
  assert.deepEqual((open.body as unknown as { clientOrderId: string }[]).map((o) => o.clientOrderId), ["resting"]);
  const algos = await h.signed("GET", "/fapi/v1/openAlgoOrders", { symbol: "BTCUSDT" }, keys);
  assert.deepEqual((algos.body as unknown as { clientAlgoId: string }[]).map((o) => o.clientAlgoId), ["waiting"]);
});

Deno.test("simulator account settings, margin modes and v2/v3 differences", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  const post = (path: string, params: Record<string, string>) =>
    h.signed("POST", path, params, keys).then((r) => r.body);
  assert.deepEqual(await post("/fapi/v1/marginType", { symbol: "BTCUSDT", marginType: "ISOLATED" }), {
    code: 200,
    msg: "success",
  });
  assert.deepEqual(await post("/fapi/v1/marginType", { symbol: "BTCUSDT", marginType: "ISOLATED" }), {
    code: -4046,
    msg: "No need to change margin type.",
  });
  assert.deepEqual(await post("/fapi/v1/positionSide/dual", { dualSidePosition: "false" }), {
    code: -4059,
    msg: "No need to change position side.",
  });
  assert.equal((await post("/fapi/v1/multiAssetsMargin", { multiAssetsMargin: "true" })).code, -4167);
  assert.equal((await post("/fapi/v1/multiAssetsMargin", { multiAssetsMargin: "false" })).code, -4171);
  assert.deepEqual(await post("/fapi/v1/leverage", { symbol: "BTCUSDT", leverage: "126" }), {
    code: -4028,
    msg: "Leverage 126 is not valid",
  });
  await post("/fapi/v1/leverage", { symbol: "BTCUSDT", leverage: "10" });
  await post("/fapi/v1/order", { symbol: "BTCUSDT", side: "BUY", type: "MARKET", quantity: "0.100" });
  assert.equal((await post("/fapi/v1/leverage", { symbol: "BTCUSDT", leverage: "5" })).code, -4161);
  assert.equal((await post("/fapi/v1/marginType", { symbol: "BTCUSDT", marginType: "CROSSED" })).code, -4048);
  const v2 = (await h.signed("GET", "/fapi/v2/positionRisk", { symbol: "BTCUSDT" }, keys)).body as unknown as Record<
    string,
    string
  >[];
  assert.deepEqual([v2[0].marginType, v2[0].leverage, v2[0].isolatedWallet], ["isolated", "10", "650.00100000"]);
  const v3 = (await h.signed("GET", "/fapi/v3/positionRisk", {}, keys)).body as unknown as Record<string, string>[];
  assert.ok(!("leverage" in v3[0]) && !("marginType" in v3[0]));
  const config = await h.signed("GET", "/fapi/v1/symbolConfig", { symbol: "BTCUSDT" }, keys);
  assert.deepEqual(config.body, [{
    symbol: "BTCUSDT",
    marginType: "ISOLATED",
    isAutoAddMargin: false,
    leverage: 10,
    maxNotionalValue: "12000000",
  }]);
  const bracket = await h.signed("GET", "/fapi/v1/leverageBracket", { symbol: "BTCUSDT" }, keys);
  assert.equal((bracket.body.brackets as { initialLeverage: number }[])[0].initialLeverage, 125);
  assert.ok(Array.isArray((await h.signed("GET", "/fapi/v1/leverageBracket", {}, keys)).body));
  const v3Account = (await h.signed("GET", "/fapi/v3/account", {}, keys)).body;
  assert.ok(!("feeTier" in v3Account) && !("canTrade" in v3Account));
  const v2Account = (await h.signed("GET", "/fapi/v2/account", {}, keys)).body;
  assert.equal((v2Account.positions as unknown[]).length, 4, "v2 lists every symbol");
  const accountConfig = (await h.signed("GET", "/fapi/v1/accountConfig", {}, keys)).body;
  assert.deepEqual([accountConfig.dualSidePosition, accountConfig.multiAssetsMargin], [false, false]);
});

Deno.test("simulator accounting: realized PnL, BNB fee burn with USDT fallback, funding and income", async () => {
  await using h = await startVenueA();
  const keys = await h.account({ balances: { USDT: "1000", BNB: "0.001" }, feeBurn: true });
  const post = (params: Record<string, string>) =>
    h.signed("POST", "/fapi/v1/order", { symbol: "ETHUSDT", type: "MARKET", ...params }, keys).then((r) => r.body);
  await post({ side: "BUY", quantity: "1.000" });
  await h.control("POST", "/funding", { symbol: "ETHUSDT", rate: "-0.0005" });
  await h.control("PUT", "/markets/ETHUSDT", { markPrice: "3100" });
  await post({ side: "SELL", quantity: "1.000", reduceOnly: "true" });
  const trades = (await h.signed("GET", "/fapi/v1/userTrades", { symbol: "ETHUSDT" }, keys)).body as unknown as Record<
    string,
    string
  >[];
  // In BNB the fees would be about 0.0024 and 0.0023, more than the 0.001 held: both fall back to USDT, undiscounted.
  assert.deepEqual(trades.map((t) => [t.commissionAsset, t.commission, t.realizedPnl]), [
    ["USDT", "1.60000500", "0"],
    ["USDT", "1.54999500", "-100.02000000"],
  ]);
  const funding = (await h.signed("GET", "/fapi/v1/income", { incomeType: "FUNDING_FEE" }, keys))
    .body as unknown as Record<
      string,
      string
    >[];
  assert.deepEqual(funding.map((f) => [f.symbol, f.income, f.asset, f.tradeId]), [[
    "ETHUSDT",
    "1.60000000",
    "USDT",
    "",
  ]]);
  const balance = (await h.signed("GET", "/fapi/v3/balance", {}, keys)).body as unknown as Record<string, string>[];
  // 1000 - 1.600005 + 1.6 - 100.02 - 1.549995
  assert.equal(balance.find((b) => b.asset === "USDT")?.balance, "898.43000000");
  const rich = await h.account({ balances: { USDT: "1000", BNB: "1" }, feeBurn: true });
  const bnbFill = await h.signed("POST", "/fapi/v1/order", {
    symbol: "ETHUSDT",
    side: "BUY",
    type: "MARKET",
    quantity: "1.000",
  }, rich);
  assert.equal(bnbFill.body.status, "FILLED");
  const [bnbTrade] = (await h.signed("GET", "/fapi/v1/userTrades", { symbol: "ETHUSDT" }, rich))
    .body as unknown as Record<
      string,
      string
    >[];
  // 3100.01 * 0.0005 * 0.9 / 600, rounded up to 8 places.
  assert.deepEqual([bnbTrade.commissionAsset, bnbTrade.commission], ["BNB", "0.00232501"]);
  const tooLong = await h.signed("GET", "/fapi/v1/userTrades", {
    symbol: "ETHUSDT",
    startTime: "0",
    endTime: String(8 * 86_400_000),
  }, rich);
  assert.deepEqual(tooLong.body, { code: -1127, msg: "More than 168 hours between startTime and endTime." });
});

Deno.test("simulator faults: DOWN, SLOW, LOSE_RESPONSE keeps the order, REJECT_KEYS", async () => {
  await using h = await startVenueA();
  const keys = await h.account();
  await h.control("PUT", "/faults", { mode: "DOWN" });
  const down = await fetch(`${h.baseUrl}/fapi/v1/time`);
  assert.deepEqual([down.status, await down.json()], [503, { msg: "Service Unavailable." }]);
  await h.control("PUT", "/faults", { mode: "SLOW", ms: 120 });
  const started = performance.now();
  await (await fetch(`${h.baseUrl}/fapi/v1/time`)).body?.cancel();
  assert.ok(performance.now() - started >= 110);
  await h.control("PUT", "/faults", { mode: "LOSE_RESPONSE" });
  const lost = await h.signed("POST", "/fapi/v1/order", {
    symbol: "BTCUSDT",
    side: "BUY",
    type: "LIMIT",
    timeInForce: "GTC",
    quantity: "0.010",
    price: "64000",
    newClientOrderId: "kept",
  }, keys);
  assert.equal(lost.status, 503);
  assert.equal(lost.body.msg, "Unknown error, please check your request or try again later.");
  const read = await h.signed("GET", "/fapi/v1/order", { symbol: "BTCUSDT", origClientOrderId: "kept" }, keys);
  assert.deepEqual([read.status, read.body.status], [200, "NEW"], "reads still answer; the order exists");
  await h.control("PUT", "/faults", { mode: "REJECT_KEYS" });
  assert.equal((await h.signed("GET", "/fapi/v3/account", {}, keys)).body.code, -2015);
  assert.equal((await (await fetch(`${h.baseUrl}/fapi/v1/time`)).json()).serverTime > 0, true);
  await h.control("PUT", "/faults", { mode: "NONE" });
  assert.equal((await h.signed("GET", "/fapi/v3/account", {}, keys)).status, 200);
});

Deno.test("simulator a temporary block answers -2015 on the futures host only, until it lifts", async () => {
  let t = Date.UTC(2026, 0, 5, 12, 0, 0);
  await using h = await startVenueA({ now: () => t });
  const keys = await h.account();
  assert.equal((await h.signed("GET", "/fapi/v3/account", {}, keys)).status, 200);
  await h.control("POST", `/accounts/${keys.apiKey}/block`, { ms: 120_000 });
  const blocked = await h.signed("GET", "/fapi/v3/account", {}, keys);
  assert.deepEqual([blocked.status, blocked.body.code], [401, -2015]);
  const spot = await h.signed("GET", "/sapi/v1/account/apiRestrictions", {}, keys);
  assert.deepEqual([spot.status, spot.body.enableFutures], [200, true], "the key itself is still valid");
  t += 120_000;
  assert.equal((await h.signed("GET", "/fapi/v3/account", {}, keys)).status, 200, "the block lifted");
  const unknown = await fetch(`${h.baseUrl}/_control/accounts/${"x".repeat(64)}/block`, {
    method: "POST",
    body: JSON.stringify({ ms: 1000 }),
  });
  assert.equal(unknown.status, 404);
  await unknown.body?.cancel();
});

Deno.test("simulator control routes validate their input and keep per-instance state", async () => {
  await using h = await startVenueA();
  await using other = await startVenueA();
  const { apiKey, apiSecret } = await h.account();
  assert.match(apiKey, /^[A-Za-z0-9]{64}$/);
  assert.match(apiSecret, /^[A-Za-z0-9]{64}$/);
  assert.notEqual(apiKey, apiSecret);
  const bad = await fetch(`${h.baseUrl}/_control/accounts`, {
    method: "POST",
    body: JSON.stringify({ balances: { USDT: "ten" } }),
  });
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error, /balances/);
  const badMode = await fetch(`${h.baseUrl}/_control/faults`, {
    method: "PUT",
    body: JSON.stringify({ mode: "MAYBE" }),
  });
  assert.equal(badMode.status, 400);
  await badMode.body?.cancel();
  const unknown = await fetch(`${h.baseUrl}/_control/markets/DOGEUSDT`, {
    method: "PUT",
    body: JSON.stringify({ markPrice: "1" }),
  });
  assert.equal(unknown.status, 404);
  await unknown.body?.cancel();
  const elsewhere = await other.signed("GET", "/fapi/v3/account", {}, { apiKey, apiSecret });
  assert.equal(elsewhere.body.code, -2015, "accounts live in one simulator instance only");
  const funding = await h.control("POST", "/funding", { symbol: "SOLUSDT", rate: "0.0001" });
  assert.deepEqual(funding, { symbol: "SOLUSDT", rate: "0.0001", payments: 0 });
});
