/**
 * ccxt's binanceusdm, an independent real client of the venue, against the
 * VENUE_A simulator: if ccxt's signing and parsing accept it, the simulator
 * speaks the venue's protocol and not just our adapter's reading of it.
 */
import assert from "node:assert/strict";
import ccxt from "ccxt";
import { startVenueA } from "./venue_a_harness.ts";

/** ccxt URL keys include the version prefix; the spot-host ones cover its default currency fetch. */
function simulatorUrls(base: string, spot: string) {
  return {
    fapiPublic: `${base}/fapi/v1`,
    fapiPublicV2: `${base}/fapi/v2`,
    fapiPublicV3: `${base}/fapi/v3`,
    fapiPrivate: `${base}/fapi/v1`,
    fapiPrivateV2: `${base}/fapi/v2`,
    fapiPrivateV3: `${base}/fapi/v3`,
    fapiData: `${base}/futures/data`,
    sapi: `${spot}/sapi/v1`,
  };
}

Deno.test("ccxt binanceusdm loads markets, reads the balance, places and cancels a limit order", async () => {
  await using h = await startVenueA();
  const { apiKey, apiSecret } = await h.account({ balances: { USDT: "5000" } });
  const exchange = new ccxt.binanceusdm({
    apiKey,
    secret: apiSecret,
    urls: { api: simulatorUrls(h.baseUrl, h.spotBaseUrl) },
  });
  // ccxt picks its futures error map by hostname; a loopback URL would otherwise get only the generic one.
  exchange.getExceptionsByUrl = (_url: string, kind: string) => exchange.exceptions.linear?.[kind] ?? {};

  const markets = await exchange.loadMarkets();
  const btc = markets["BTC/USDT:USDT"];
  assert.ok(btc, "the BTC perpetual is listed");
  assert.equal(btc.id, "BTCUSDT");
  assert.equal(btc.precision.price, 0.1);
  assert.equal(btc.limits.amount?.min, 0.001);
  assert.equal(btc.limits.cost?.min, 100);
  for (const symbol of ["ETH/USDT:USDT", "SOL/USDT:USDT"]) assert.ok(markets[symbol]);

  const balance = await exchange.fetchBalance();
  assert.deepEqual(balance.USDT, { free: 5000, used: 0, total: 5000 });

  const order = await exchange.createOrder("BTC/USDT:USDT", "limit", "buy", 0.01, 64000);
  assert.equal(order.status, "open");
  assert.equal(order.price, 64000);
  assert.equal(order.amount, 0.01);
  assert.match(order.clientOrderId ?? "", /^x-cvBPrNm9[0-9a-f]{22}$/);
  const orderId = String(order.id);
  const open = await exchange.fetchOpenOrders("BTC/USDT:USDT");
  assert.deepEqual(open.map((o) => o.id), [orderId]);

  const cancelled = await exchange.cancelOrder(orderId, "BTC/USDT:USDT");
  assert.equal(cancelled.status, "canceled");
  assert.equal((await exchange.fetchOpenOrders("BTC/USDT:USDT")).length, 0);
  await assert.rejects(exchange.cancelOrder(orderId, "BTC/USDT:USDT"), ccxt.OrderNotFound);
  await assert.rejects(exchange.createOrder("BTC/USDT:USDT", "market", "buy", 2), ccxt.InsufficientFunds);
});

Deno.test("ccxt binanceusdm trades, reads positions and routes a stop to the algo endpoint", async () => {
  await using h = await startVenueA();
  const { apiKey, apiSecret } = await h.account();
  const exchange = new ccxt.binanceusdm({
    apiKey,
    secret: apiSecret,
    urls: { api: simulatorUrls(h.baseUrl, h.spotBaseUrl) },
    options: { fetchCurrencies: false },
  });
  const filled = await exchange.createOrder("ETH/USDT:USDT", "market", "buy", 0.5);
  assert.deepEqual([filled.status, filled.average, filled.filled], ["closed", 3200.01, 0.5]);
  const [position] = await exchange.fetchPositions(["ETH/USDT:USDT"]);
  assert.deepEqual([position.side, position.contracts, position.entryPrice], ["long", 0.5, 3200.01]);
  const stop = await exchange.createOrder("ETH/USDT:USDT", "market", "sell", 0.5, undefined, {
    stopLossPrice: 3000,
    reduceOnly: true,
  });
  const triggers = await exchange.fetchOpenOrders("ETH/USDT:USDT", undefined, undefined, { trigger: true });
  assert.deepEqual(triggers.map((o) => o.id), [stop.id]);
  const trades = await exchange.fetchMyTrades("ETH/USDT:USDT");
  assert.equal(trades.length, 1);
  assert.equal(trades[0].fee?.currency, "USDT");
});
