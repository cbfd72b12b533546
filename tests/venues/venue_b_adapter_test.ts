import assert from "node:assert/strict";
import type { UserNonFundingLedgerUpdatesResponse } from "@nktkas/hyperliquid/api/info";
import { VenueError, type VenueErrorKind } from "../../venues/types.ts";
import { createVenueBAdapter } from "../../venues/venue_b/adapter.ts";
import { kindOfVenueMessage } from "../../venues/venue_b/errors.ts";
import { cloidFromClientOrderId, formatPrice, formatSize, toLedgerEntry } from "../../venues/venue_b/mappers.ts";
import {
  approveAgentAction,
  generateAgentKey,
  sendUsdcAction,
  signUserSignedAction,
  usdSendAction,
} from "../../venues/venue_b/signing.ts";
import type { WireLedgerUpdate } from "../../venues/venue_b/wire.ts";
import {
  AGENT_KEY_BINDING,
  approveBuilder,
  BUILDER,
  connectClient,
  fundedWallet,
  recordingFetch,
  startSim,
  testNonce,
} from "./venue_b_fixture.ts";

async function assertVenueError(promise: Promise<unknown>, kind: VenueErrorKind, venueCode?: RegExp) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof VenueError, `expected a VenueError, got ${error}`);
    assert.equal(error.kind, kind, `kind of "${error.message}"`);
    assert.equal(error.detail.providerId, "VENUE_B");
    if (venueCode) assert.match(String(error.detail.venueCode), venueCode);
    return true;
  });
}

Deno.test("VENUE_B adapter describes itself as an agent-wallet perp DEX with builder fees and a ledger", async () => {
  await using sim = startSim();
  const { adapter } = await connectClient(sim, { approveAgent: false });
  assert.equal(adapter.providerId, "VENUE_B");
  assert.equal(adapter.kind, "PERP_DEX");
  assert.equal(adapter.scheme, "AGENT_WALLET");
  assert.deepEqual(adapter.capabilities, {
    builderFee: true,
    agentWallet: true,
    feeInOtherAsset: false,
    paymentLedger: true,
  });
});

Deno.test("VENUE_B listMarkets reports BTC, ETH and SOL with the venue's lot and price rules", async () => {
  await using sim = startSim();
  const { adapter } = await connectClient(sim, { approveAgent: false });
  const markets = await adapter.listMarkets();
  const btc = markets.find((market) => market.symbol === "BTCUSDC")!;
  assert.deepEqual(btc, {
    symbol: "BTCUSDC",
    providerSymbol: "BTC",
    kind: "PERPETUAL",
    base: "BTC",
    quote: "USDC",
    active: true,
    tickSize: "1",
    stepSize: "0.00001",
    minQty: "0.00001",
    minNotionalUsd: "10",
    quantityPrecision: 5,
    pricePrecision: 1,
    maxLeverage: 40,
  });
  assert.deepEqual(markets.map((market) => market.providerSymbol), ["BTC", "ETH", "SOL"]);
  assert.equal(markets.find((market) => market.base === "ETH")!.tickSize, "0.1");
  assert.equal(markets.find((market) => market.base === "SOL")!.tickSize, "0.01");
});

Deno.test("VENUE_B getOrderBook accepts our symbol or the coin and honours depth", async () => {
  await using sim = startSim();
  const { adapter } = await connectClient(sim, { approveAgent: false });
  await sim.control("PUT", "/markets/ETH", { markPrice: "3000", bid: "2999.5", ask: "3000.5", depth: "12" });
  const book = await adapter.getOrderBook("ETHUSDC", 3);
  assert.equal(book.symbol, "ETHUSDC");
  assert.deepEqual(book.bids, [
    { price: "2999.5", quantity: "12" },
    { price: "2999.4", quantity: "12" },
    { price: "2999.3", quantity: "12" },
  ]);
  assert.deepEqual(book.asks[0], { price: "3000.5", quantity: "12" });
  assert.equal((await adapter.getOrderBook("ETH")).bids.length, 20);
  await assertVenueError(adapter.getOrderBook("DOGEUSDC"), "INVALID_ORDER");
});

Deno.test("VENUE_B rounds prices to five significant figures and the coin's decimals, towards the passive side", () => {
  assert.equal(formatPrice("65000.7", 5, "DOWN"), "65000");
  assert.equal(formatPrice("65000.7", 5, "UP"), "65001");
  assert.equal(formatPrice("3000.123", 4, "DOWN"), "3000.1");
  assert.equal(formatPrice("3000.123", 4, "UP"), "3000.2");
  assert.equal(formatPrice("150.12345", 2, "DOWN"), "150.12");
  assert.equal(formatPrice("150.12345", 2, "UP"), "150.13");
  assert.equal(formatPrice("1.234567", 2, "DOWN"), "1.2345");
  assert.equal(formatPrice("123456.7", 0, "DOWN"), "123456", "integers are valid at any number of digits");
  assert.equal(formatPrice("123456.7", 0, "UP"), "123457");
  assert.equal(formatPrice("99999.95", 5, "UP"), "100000");
  assert.equal(formatPrice("0.0012345", 0, "DOWN"), "0.001234");
  assert.equal(formatPrice("0.0012345", 0, "UP"), "0.001235");
  assert.equal(formatPrice("0.012345", 1, "DOWN"), "0.01234");
  assert.equal(formatPrice("65000.0", 5, "DOWN"), "65000", "no trailing zeros on the wire");
  assert.equal(formatSize("0.123456789", 5), "0.12345", "sizes are truncated, never rounded up");
  assert.equal(formatSize("1.0000", 4), "1");
  assert.equal(formatSize("0.009", 2), "0");
});

Deno.test("VENUE_B derives a stable 16-byte cloid from the client order id", () => {
  const cloid = cloidFromClientOrderId("order-1");
  assert.match(cloid, /^0x[0-9a-f]{32}$/);
  assert.equal(cloidFromClientOrderId("order-1"), cloid);
  assert.notEqual(cloidFromClientOrderId("order-2"), cloid);
});

Deno.test("VENUE_B testCredentials confirms an approved agent and flags one that is not", async () => {
  await using sim = startSim();
  const client = await connectClient(sim);
  const check = await client.adapter.testCredentials(client.credentials);
  assert.deepEqual(check.permissions, { canRead: true, canFutures: true, canWithdraw: false });
  assert.deepEqual(check.problems, []);
  assert.equal(check.accountHint, `${client.principal.address.slice(0, 4)}…${client.principal.address.slice(-4)}`);

  const unapproved = await connectClient(sim, { approveAgent: false });
  const refused = await unapproved.adapter.testCredentials(unapproved.credentials);
  assert.deepEqual(refused.problems, ["AGENT_NOT_APPROVED"]);
  assert.equal(refused.permissions.canFutures, false);

  const stranger = generateAgentKey();
  const wrongKey = {
    ...client.credentials,
    sealedAgentPrivateKey: await client.box.seal(stranger.privateKey, AGENT_KEY_BINDING),
  };
  await assertVenueError(client.adapter.testCredentials(wrongKey), "CREDENTIAL_REJECTED");
  const unopenable = {
    ...client.credentials,
    sealedAgentPrivateKey: { sealed: "v2.AAAA.AAAA.AAAA", binding: AGENT_KEY_BINDING },
  };
  await assert.rejects(client.adapter.testCredentials(unopenable), (error: VenueError) => {
    assert.equal(error.kind, "CREDENTIAL_REJECTED");
    assert.doesNotMatch(error.message, new RegExp(client.agent.privateKey.slice(2)));
    return true;
  });
});

Deno.test("VENUE_B places, finds and cancels a resting limit order by client order id", async () => {
  await using sim = startSim();
  const { adapter, credentials } = await connectClient(sim);
  const placed = await adapter.placeOrder(credentials, {
    symbol: "BTCUSDC",
    side: "BUY",
    type: "LIMIT",
    quantity: "0.0100009",
    price: "60000.7",
    reduceOnly: false,
    clientOrderId: "entry-1",
  });
  assert.equal(placed.status, "NEW");
  assert.equal(placed.price, "60000", "a buy rounds down");
  assert.equal(placed.quantity, "0.01", "sizes are truncated to the lot");
  assert.equal(placed.clientOrderId, "entry-1");
  assert.equal(placed.timeInForce, "GTC");

  const found = await adapter.getOrder(credentials, "BTC", "entry-1");
  assert.equal(found?.orderId, placed.orderId);
  assert.equal(found?.status, "NEW");
  assert.equal(found?.clientOrderId, "entry-1");
  const account = await adapter.getAccount(credentials);
  assert.deepEqual(account.openOrders.map((order) => order.clientOrderId), [cloidFromClientOrderId("entry-1")]);

  const canceled = await adapter.cancelOrder(credentials, "BTCUSDC", "entry-1");
  assert.equal(canceled.status, "CANCELED");
  assert.equal((await adapter.getOrder(credentials, "BTCUSDC", "entry-1"))?.status, "CANCELED");
  assert.equal(
    (await adapter.cancelOrder(credentials, "BTCUSDC", "entry-1")).status,
    "CANCELED",
    "cancelling twice is harmless",
  );
  assert.equal(await adapter.getOrder(credentials, "BTCUSDC", "never-sent"), null);
  await assertVenueError(adapter.cancelOrder(credentials, "BTCUSDC", "never-sent"), "INVALID_ORDER");
});

Deno.test("VENUE_B market orders fill at the book, pay taker and builder fees, and close with realised PnL", async () => {
  await using sim = startSim();
  const { adapter, credentials } = await connectClient(sim, { builderFee: 10 });
  await sim.control("PUT", "/markets/BTC", { markPrice: "65000", bid: "64999", ask: "65001" });
  const builder = { address: BUILDER, feeTenthsBps: 10 };
  const since = Date.now() - 1;
  const bought = await adapter.placeOrder(credentials, {
    symbol: "BTCUSDC",
    side: "BUY",
    type: "MARKET",
    quantity: "0.1",
    reduceOnly: false,
    clientOrderId: "open-1",
    builder,
  });
  assert.equal(bought.status, "FILLED");
  assert.equal(bought.filledQuantity, "0.1");
  assert.equal(bought.averagePrice, "65001");

  const afterOpen = await adapter.getAccount(credentials);
  assert.deepEqual(
    afterOpen.positions.map((p) => [p.symbol, p.side, p.quantity, p.entryPrice, p.marginMode, p.leverage]),
    [
      ["BTCUSDC", "LONG", "0.1", "65001", "CROSSED", 20],
    ],
  );
  assert.equal(afterOpen.positions[0].markPrice, "65000");
  assert.equal(afterOpen.positions[0].unrealizedPnlUsd, "-0.1");

  await sim.control("PUT", "/markets/BTC", { markPrice: "66000", bid: "65999", ask: "66001" });
  const sold = await adapter.placeOrder(credentials, {
    symbol: "BTCUSDC",
    side: "SELL",
    type: "MARKET",
    quantity: "0.1",
    reduceOnly: true,
    clientOrderId: "close-1",
    builder,
  });
  assert.equal(sold.averagePrice, "65999");
  const fills = await adapter.getFills(credentials, { symbol: "BTCUSDC", since });
  assert.equal(fills.length, 2);
  const [open, close] = fills;
  // Taker 0.045% of 6500.1 = 2.925045, builder 0.01% = 0.65001.
  assert.deepEqual([open.side, open.price, open.quantity, open.realizedPnl, open.fee, open.builderFee, open.feeAsset], [
    "BUY",
    "65001",
    "0.1",
    "0",
    "3.575055",
    "0.65001",
    "USDC",
  ]);
  assert.equal(open.clientOrderId, cloidFromClientOrderId("open-1"));
  assert.equal(close.realizedPnl, "99.8");
  assert.equal(close.builderFee, "0", "reduce-only orders carry no builder fee");
  assert.equal(close.fee, "2.969955");
  assert.deepEqual((await adapter.getAccount(credentials)).positions, []);
  assert.equal((await adapter.getFills(credentials, { symbol: "ETHUSDC", since })).length, 0);
});

Deno.test("VENUE_B puts the builder on opening orders only", async () => {
  await using sim = startSim();
  const recorder = recordingFetch();
  const { adapter, credentials } = await connectClient(sim, { builderFee: 10, adapter: { fetch: recorder.fetch } });
  const builder = { address: "0x1111111111111111111111111111111111111111" as const, feeTenthsBps: 10 };
  await adapter.placeOrder(credentials, {
    symbol: "ETHUSDC",
    side: "BUY",
    type: "MARKET",
    quantity: "1",
    reduceOnly: false,
    clientOrderId: "b-open",
    builder,
  });
  await adapter.placeOrder(credentials, {
    symbol: "ETHUSDC",
    side: "SELL",
    type: "MARKET",
    quantity: "1",
    reduceOnly: true,
    clientOrderId: "b-close",
    builder,
  });
  const orders = recorder.bodies.filter((b) =>
    b.url.endsWith("/exchange") && (b.body.action as { type: string }).type === "order"
  );
  assert.equal(orders.length, 2);
  const [opening, closing] = orders.map((b) => b.body.action as Record<string, unknown>);
  assert.deepEqual(opening.builder, { b: BUILDER, f: 10 });
  assert.deepEqual(Object.keys(opening), ["type", "orders", "grouping", "builder"]);
  assert.equal("builder" in closing, false);
  const [wireOrder] = opening.orders as Record<string, unknown>[];
  assert.deepEqual(Object.keys(wireOrder), ["a", "b", "p", "s", "r", "t", "c"]);
  assert.equal(wireOrder.c, cloidFromClientOrderId("b-open"));
  assert.deepEqual(wireOrder.t, { limit: { tif: "Ioc" } });
  // Market = IOC limit 5% through the mid (3000): 3150 for a buy, 2850 for a sell.
  assert.equal(wireOrder.p, "3150");
  assert.equal((closing.orders as Record<string, unknown>[])[0].p, "2850");
});

/** A buy of 1 SOL well below the market: it rests. */
const restingSolBuy = {
  symbol: "SOLUSDC",
  side: "BUY" as const,
  type: "LIMIT" as const,
  quantity: "1",
  price: "140",
  reduceOnly: false,
};

Deno.test("VENUE_B signs an order to expire at its deadline, and keeps one whose deadline is too near", async () => {
  await using sim = startSim();
  const recorder = recordingFetch();
  const { adapter, credentials } = await connectClient(sim, { adapter: { fetch: recorder.fetch } });
  const request = restingSolBuy;
  const deadline = Date.now() + 3_000;
  await adapter.placeOrder(credentials, { ...request, clientOrderId: "with-deadline", deadline });
  const orderActions = () => recorder.bodies.filter(({ body }) => (body.action as { type?: string })?.type === "order");
  assert.equal(orderActions()[0].body.expiresAfter, deadline, "expires at the deadline, before the usual time to live");
  await assertVenueError(
    adapter.placeOrder(credentials, { ...request, clientOrderId: "too-late", deadline: Date.now() + 100 }),
    "UNAVAILABLE",
  );
  assert.equal(orderActions().length, 1, "the late one never left");
  assert.equal(await adapter.getOrder(credentials, "SOLUSDC", "too-late"), null);
});

Deno.test("VENUE_B places with no read first; resubmitting a client order id answers the first order, never a second", async () => {
  await using sim = startSim();
  const recorder = recordingFetch();
  const { adapter, credentials } = await connectClient(sim, { adapter: { fetch: recorder.fetch } });
  const request = { ...restingSolBuy, clientOrderId: "same-id" };
  await adapter.listMarkets();
  recorder.bodies.length = 0;
  const first = await adapter.placeOrder(credentials, request);
  assert.deepEqual(recorder.bodies.map((b) => new URL(b.url).pathname), ["/exchange"], "the placement is one request");
  const second = await adapter.placeOrder(credentials, request);
  assert.equal(second.orderId, first.orderId);
  assert.equal((await adapter.getAccount(credentials)).openOrders.length, 1);
  const sent = recorder.bodies.filter((b) => (b.body.action as { type?: string } | undefined)?.type === "order");
  assert.equal(sent.length, 2, "the venue refused the duplicate cloid; the adapter answered its record");
  // The venue's wording of that refusal is unknown: the adapter looks the cloid up on any refusal.
  await sim.control("PUT", "/refusals", { duplicateCloid: "Cloid already used by another order." });
  assert.equal((await adapter.placeOrder(credentials, request)).orderId, first.orderId);

  // Even a second signed action with the same cloid cannot create a second order at the venue.
  await using direct = startSim();
  const raceClient = await connectClient(direct);
  const raced = await Promise.all([
    raceClient.adapter.placeOrder(raceClient.credentials, request),
    raceClient.adapter.placeOrder(raceClient.credentials, request),
  ]);
  assert.equal(raced[0].orderId, raced[1].orderId);
  assert.equal((await raceClient.adapter.getAccount(raceClient.credentials)).openOrders.length, 1);
});

Deno.test("VENUE_B a placement whose answer is lost is OUTCOME_UNKNOWN and resolves by getOrder without a second order", async () => {
  await using sim = startSim();
  const { adapter, credentials } = await connectClient(sim);
  await sim.control("PUT", "/faults", { mode: "LOSE_RESPONSE" });
  const request = {
    symbol: "ETHUSDC",
    side: "BUY" as const,
    type: "LIMIT" as const,
    quantity: "0.5",
    price: "2900",
    reduceOnly: false,
    clientOrderId: "lost-1",
  };
  await assertVenueError(adapter.placeOrder(credentials, request), "OUTCOME_UNKNOWN", /503/);
  await sim.control("PUT", "/faults", { mode: "NONE" });
  const found = await adapter.getOrder(credentials, "ETHUSDC", "lost-1");
  assert.equal(found?.status, "NEW");
  const retried = await adapter.placeOrder(credentials, request);
  assert.equal(retried.orderId, found?.orderId);
  assert.equal((await adapter.getAccount(credentials)).openOrders.length, 1);
});

Deno.test("VENUE_B a sent action that times out is OUTCOME_UNKNOWN, a read that times out is UNAVAILABLE", async () => {
  await using sim = startSim();
  // Lets every request through but withholds the /exchange answer until the adapter gives up.
  const slowExchange: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (!String(input).endsWith("/exchange")) return response;
    await response.body?.cancel();
    return await new Promise((_, reject) =>
      init!.signal!.addEventListener("abort", () => reject(init!.signal!.reason))
    );
  };
  const { box, credentials } = await connectClient(sim);
  const impatient = createVenueBAdapter({ baseUrl: sim.baseUrl, secrets: box, fetch: slowExchange, timeoutMs: 200 });
  await assertVenueError(
    impatient.placeOrder(credentials, {
      symbol: "BTCUSDC",
      side: "SELL",
      type: "LIMIT",
      quantity: "0.001",
      price: "70000",
      reduceOnly: false,
      clientOrderId: "slow-1",
    }),
    "OUTCOME_UNKNOWN",
  );
  const adapter = createVenueBAdapter({ baseUrl: sim.baseUrl, secrets: box });
  assert.equal((await adapter.getOrder(credentials, "BTCUSDC", "slow-1"))?.status, "NEW");

  await sim.control("PUT", "/faults", { mode: "SLOW", ms: 500 });
  const hurried = createVenueBAdapter({ baseUrl: sim.baseUrl, secrets: box, timeoutMs: 100 });
  await assertVenueError(hurried.getAccount(credentials), "UNAVAILABLE");
  await sim.control("PUT", "/faults", { mode: "NONE" });
  assert.ok(await adapter.getAccount(credentials));
});

Deno.test("VENUE_B a venue that is down is UNAVAILABLE, for reads and before an order is sent", async () => {
  await using sim = startSim();
  const recorder = recordingFetch();
  const { adapter, credentials } = await connectClient(sim, { adapter: { fetch: recorder.fetch } });
  await adapter.listMarkets();
  await sim.control("PUT", "/faults", { mode: "DOWN" });
  await assertVenueError(adapter.listMarkets(), "UNAVAILABLE", /503/);
  await assertVenueError(adapter.getAccount(credentials), "UNAVAILABLE");
  await assertVenueError(adapter.getOrderBook("BTCUSDC"), "UNAVAILABLE");
  const sentBefore = recorder.bodies.filter((b) => b.url.endsWith("/exchange")).length;
  await assertVenueError(
    adapter.placeOrder(credentials, {
      symbol: "BTCUSDC",
      side: "BUY",
      type: "MARKET",
      quantity: "0.001",
      reduceOnly: false,
      clientOrderId: "down-1",
    }),
    "UNAVAILABLE",
  );
  assert.equal(
    recorder.bodies.filter((b) => b.url.endsWith("/exchange")).length,
    sentBefore,
    "nothing was sent while down",
  );
  await sim.control("PUT", "/faults", { mode: "NONE" });
  assert.equal(await adapter.getOrder(credentials, "BTCUSDC", "down-1"), null);

  const nowhere = createVenueBAdapter({ baseUrl: "http://127.0.0.1:9", secrets: { open: () => Promise.resolve("") } });
  await assertVenueError(nowhere.listMarkets(), "UNAVAILABLE");
});

const smallBuy = (clientOrderId: string) => ({
  symbol: "ETHUSDC",
  side: "BUY" as const,
  type: "LIMIT" as const,
  quantity: "0.01",
  price: "2900",
  reduceOnly: false,
  clientOrderId,
});

Deno.test("VENUE_B refuses wrong keys, unapproved, revoked and rejected agents as CREDENTIAL_REJECTED", async () => {
  await using sim = startSim();
  const client = await connectClient(sim);
  const notTheAgent = {
    ...client.credentials,
    sealedAgentPrivateKey: await client.box.seal(generateAgentKey().privateKey, AGENT_KEY_BINDING),
  };
  await assertVenueError(
    client.adapter.placeOrder(notTheAgent, smallBuy("bad-sig")),
    "CREDENTIAL_REJECTED",
    /^User or API Wallet 0x[0-9a-f]{40} does not exist\.$/,
  );

  const unapproved = await connectClient(sim, { approveAgent: false });
  await assertVenueError(
    unapproved.adapter.placeOrder(unapproved.credentials, smallBuy("unapproved")),
    "CREDENTIAL_REJECTED",
    new RegExp(unapproved.agent.address),
  );

  const testnetSigner = createVenueBAdapter({ baseUrl: sim.baseUrl, secrets: client.box, isMainnet: false });
  await assertVenueError(testnetSigner.placeOrder(client.credentials, smallBuy("testnet")), "CREDENTIAL_REJECTED");

  await sim.control("PUT", "/faults", { mode: "REJECT_KEYS" });
  await assertVenueError(client.adapter.placeOrder(client.credentials, smallBuy("rejected")), "CREDENTIAL_REJECTED");
  await sim.control("PUT", "/faults", { mode: "NONE" });
  assert.equal((await client.adapter.placeOrder(client.credentials, smallBuy("accepted"))).status, "NEW");

  await sim.control("DELETE", `/agents/${client.agent.address}`);
  await assertVenueError(client.adapter.placeOrder(client.credentials, smallBuy("revoked")), "CREDENTIAL_REJECTED");
  assert.deepEqual((await client.adapter.testCredentials(client.credentials)).problems, ["AGENT_NOT_APPROVED"]);
  await assertVenueError(
    client.adapter.placeOrder({
      scheme: "API_KEY",
      apiKey: "k",
      sealedApiSecret: { sealed: "s", binding: AGENT_KEY_BINDING },
    }, smallBuy("wrong-scheme")),
    "CREDENTIAL_REJECTED",
  );
});

Deno.test("VENUE_B refuses an order the account cannot margin as INSUFFICIENT_MARGIN", async () => {
  await using sim = startSim();
  const { adapter, credentials } = await connectClient(sim, { usdc: "100" });
  await assertVenueError(
    adapter.placeOrder(credentials, { ...smallBuy("too-big"), symbol: "BTCUSDC", quantity: "1", price: "60000" }),
    "INSUFFICIENT_MARGIN",
    /^Insufficient margin to place order\.$/,
  );
  assert.equal(await adapter.getOrder(credentials, "BTCUSDC", "too-big"), null);
});

Deno.test("VENUE_B refuses orders below the minimum value, of zero size or growing a reduce-only as INVALID_ORDER", async () => {
  await using sim = startSim();
  const recorder = recordingFetch();
  const { adapter, credentials } = await connectClient(sim, { adapter: { fetch: recorder.fetch } });
  await assertVenueError(
    adapter.placeOrder(credentials, { ...smallBuy("tiny"), quantity: "0.003" }),
    "INVALID_ORDER",
    /minimum value of \$10/,
  );
  await assertVenueError(
    adapter.placeOrder(credentials, { ...smallBuy("zero"), quantity: "0.00001" }),
    "INVALID_ORDER",
  );
  await assertVenueError(adapter.placeOrder(credentials, { ...smallBuy("fok"), timeInForce: "FOK" }), "INVALID_ORDER");
  await assertVenueError(
    adapter.placeOrder(credentials, { ...smallBuy("no-price"), price: undefined }),
    "INVALID_ORDER",
  );
  assert.equal(
    recorder.bodies.filter((b) => (b.body.action as { type?: string })?.type === "order").length,
    0,
    "refused before sending",
  );
  await assertVenueError(
    adapter.placeOrder(credentials, { ...smallBuy("reduce"), reduceOnly: true }),
    "INVALID_ORDER",
    /^Reduce only order would increase position\.$/,
  );
  await assertVenueError(
    adapter.placeOrder(credentials, { ...smallBuy("post"), price: "3100", timeInForce: "POST_ONLY" }),
    "INVALID_ORDER",
    /^Post only order would have immediately matched/,
  );
  await assertVenueError(
    adapter.placeOrder(credentials, { ...smallBuy("ioc"), timeInForce: "IOC" }),
    "INVALID_ORDER",
    /could not immediately match/,
  );
  await assertVenueError(
    adapter.placeOrder(credentials, { ...smallBuy("far"), quantity: "1", price: "500" }),
    "INVALID_ORDER",
    /80% away/,
  );
  await assertVenueError(
    adapter.placeOrder(credentials, { ...smallBuy("unknown"), symbol: "DOGEUSDC" }),
    "INVALID_ORDER",
  );
});

Deno.test("VENUE_B says whether the venue holds an agent approved for a user, from the user's extraAgents", async () => {
  let now = Date.now();
  await using sim = startSim({ now: () => now });
  const recorder = recordingFetch();
  const spent: number[] = [];
  const budget = { spend: (weight: number) => Promise.resolve(void spent.push(weight)) };
  const { adapter, principal, agent } = await connectClient(sim, {
    adapter: { fetch: recorder.fetch, now: () => now, budget },
  });
  spent.length = 0;
  assert.equal(await adapter.isAgentApproved!(principal.address, agent.address), true);
  // One info request of the venue's default weight (20): not the 60 of userRole.
  assert.deepEqual(recorder.bodies.at(-1), {
    url: `${sim.baseUrl}/info`,
    body: { type: "extraAgents", user: principal.address },
  });
  assert.deepEqual(spent, [20]);
  const stranger = generateAgentKey();
  assert.equal(await adapter.isAgentApproved!(principal.address, stranger.address), false);
  assert.equal(await adapter.isAgentApproved!((await fundedWallet(sim)).address, agent.address), false);

  // Approving another agent under the same name replaces ours; one approved for a minute expires.
  const approve = (agentAddress: `0x${string}`, validUntil?: number) =>
    adapter.submitUserSignedAction!(
      signUserSignedAction(
        principal.privateKey,
        approveAgentAction({ isMainnet: true, agentAddress, agentName: "svc", validUntil, nonce: testNonce() }),
      ),
    );
  await approve(stranger.address, now + 60_000);
  assert.equal(await adapter.isAgentApproved!(principal.address, agent.address), false);
  assert.equal(
    await adapter.isAgentApproved!(principal.address, stranger.address.toUpperCase() as `0x${string}`),
    true,
  );
  now += 60_001;
  assert.equal(await adapter.isAgentApproved!(principal.address, stranger.address), false);
});

Deno.test("VENUE_B builder fees need the user's approval of at least the fee charged", async () => {
  await using sim = startSim();
  const client = await connectClient(sim);
  const { adapter, credentials, principal } = client;
  const order = (clientOrderId: string, feeTenthsBps: number) => ({
    ...smallBuy(clientOrderId),
    builder: { address: BUILDER, feeTenthsBps },
  });
  assert.equal(await adapter.getMaxBuilderFee!(principal.address, BUILDER), 0);
  await assertVenueError(
    adapter.placeOrder(credentials, order("unapproved", 0)),
    "CREDENTIAL_REJECTED",
    /^Builder fee has not been approved\.$/,
  );
  await approveBuilder(sim, adapter, principal, 10);
  assert.equal(await adapter.getMaxBuilderFee!(principal.address, BUILDER), 10);
  assert.equal((await adapter.placeOrder(credentials, order("approved", 10))).status, "NEW");
  await assertVenueError(
    adapter.placeOrder(credentials, order("above", 20)),
    "CREDENTIAL_REJECTED",
    /not been approved/,
  );
  await assertVenueError(adapter.placeOrder(credentials, order("cap", 101)), "INVALID_ORDER");
});

Deno.test("VENUE_B fills a resting limit when the mark moves through it, as a maker", async () => {
  await using sim = startSim();
  const { adapter, credentials } = await connectClient(sim);
  const since = Date.now() - 1;
  await adapter.placeOrder(credentials, { ...smallBuy("maker"), quantity: "1", price: "2950" });
  await sim.control("PUT", "/markets/ETH", { markPrice: "2960" });
  assert.equal((await adapter.getOrder(credentials, "ETHUSDC", "maker"))?.status, "NEW");
  await sim.control("PUT", "/markets/ETH", { markPrice: "2949.5" });
  const filled = await adapter.getOrder(credentials, "ETHUSDC", "maker");
  assert.equal(filled?.status, "FILLED");
  assert.equal(filled?.filledQuantity, "1");
  assert.equal(filled?.averagePrice, "2950");
  const [fill] = await adapter.getFills(credentials, { since });
  assert.equal(fill.fee, "0.4425", "maker fee 0.015%");
});

Deno.test("VENUE_B modifies an open limit order in place of its client order id", async () => {
  await using sim = startSim();
  const { adapter, credentials } = await connectClient(sim);
  await adapter.placeOrder(credentials, { ...smallBuy("mod-1"), quantity: "0.5" });
  const modified = await adapter.modifyOrder(credentials, {
    symbol: "ETHUSDC",
    clientOrderId: "mod-1",
    quantity: "0.75",
    price: "2910.04",
  });
  assert.equal(modified.clientOrderId, "mod-1");
  assert.equal(modified.price, "2910");
  assert.equal(modified.quantity, "0.75");
  assert.equal(modified.status, "NEW");
  assert.equal(modified.timeInForce, "POST_ONLY", "a GTC modified without `a` is an ALO at the venue");
  assert.equal((await adapter.getAccount(credentials)).openOrders.length, 1);
  await adapter.cancelOrder(credentials, "ETHUSDC", "mod-1");
  await assertVenueError(
    adapter.modifyOrder(credentials, { symbol: "ETHUSDC", clientOrderId: "mod-1", quantity: "1", price: "2900" }),
    "INVALID_ORDER",
  );
  await assertVenueError(
    adapter.modifyOrder(credentials, { symbol: "ETHUSDC", clientOrderId: "none", quantity: "1", price: "2900" }),
    "INVALID_ORDER",
  );
});

Deno.test("VENUE_B sets leverage and margin mode, keeping the other setting", async () => {
  await using sim = startSim();
  const { adapter, credentials } = await connectClient(sim);
  await adapter.setLeverage(credentials, "BTCUSDC", 5);
  await adapter.setMarginMode(credentials, "BTC", "ISOLATED");
  await adapter.placeOrder(credentials, {
    symbol: "BTCUSDC",
    side: "SELL",
    type: "MARKET",
    quantity: "0.01",
    reduceOnly: false,
    clientOrderId: "short",
  });
  const [position] = (await adapter.getAccount(credentials)).positions;
  assert.deepEqual([position.side, position.leverage, position.marginMode], ["SHORT", 5, "ISOLATED"]);
  assert.ok(position.liquidationPrice && Number(position.liquidationPrice) > 65000);
  await adapter.setLeverage(credentials, "BTCUSDC", 3);
  assert.equal((await adapter.getAccount(credentials)).positions[0].marginMode, "ISOLATED");
  await assertVenueError(adapter.setMarginMode(credentials, "BTCUSDC", "CROSSED"), "INVALID_ORDER", /open position/);
  await assertVenueError(adapter.setLeverage(credentials, "BTCUSDC", 41), "INVALID_ORDER");
  await assertVenueError(adapter.setLeverage(credentials, "BTCUSDC", 2.5), "INVALID_ORDER");
});

Deno.test("VENUE_B protections are reduce-only trigger orders that fire on the mark", async () => {
  await using sim = startSim();
  const recorder = recordingFetch();
  const { adapter, credentials } = await connectClient(sim, { builderFee: 10, adapter: { fetch: recorder.fetch } });
  const since = Date.now() - 1;
  await adapter.placeOrder(credentials, {
    symbol: "SOLUSDC",
    side: "BUY",
    type: "MARKET",
    quantity: "10",
    reduceOnly: false,
    clientOrderId: "long",
  });
  const stop = await adapter.placeProtection(credentials, {
    symbol: "SOLUSDC",
    kind: "STOP_LOSS",
    side: "SELL",
    triggerPrice: "140.004",
    quantity: "10",
    clientOrderId: "sl",
  });
  const take = await adapter.placeProtection(credentials, {
    symbol: "SOLUSDC",
    kind: "TAKE_PROFIT",
    side: "SELL",
    triggerPrice: "170",
    quantity: "10",
    clientOrderId: "tp",
  });
  assert.deepEqual([stop.status, stop.type, stop.triggerPrice, stop.reduceOnly], [
    "TRIGGER_PENDING",
    "STOP_MARKET",
    "140",
    true,
  ]);
  assert.equal(take.type, "TAKE_PROFIT_MARKET");
  const sentStop = recorder.bodies.map((b) => b.body.action as Record<string, unknown>).find((a) =>
    a?.type === "order" && JSON.stringify(a).includes('"tpsl":"sl"')
  )!;
  assert.deepEqual((sentStop.orders as Record<string, unknown>[])[0].t, {
    trigger: { isMarket: true, triggerPx: "140", tpsl: "sl" },
  });
  assert.equal((sentStop.orders as Record<string, unknown>[])[0].r, true);
  assert.equal("builder" in sentStop, false);

  const listed = await adapter.listProtections(credentials, "SOLUSDC");
  assert.deepEqual(
    listed.map((o) => o.clientOrderId).sort(),
    [cloidFromClientOrderId("sl"), cloidFromClientOrderId("tp")].sort(),
  );
  assert.equal((await adapter.getAccount(credentials)).openOrders.length, 0, "protections are not regular open orders");
  await adapter.cancelProtection(credentials, "SOLUSDC", "tp");
  assert.equal((await adapter.listProtections(credentials)).length, 1);

  await sim.control("PUT", "/markets/SOL", { markPrice: "139.5" });
  assert.equal((await adapter.getOrder(credentials, "SOLUSDC", "sl"))?.status, "FILLED");
  assert.deepEqual((await adapter.getAccount(credentials)).positions, []);
  const closing = (await adapter.getFills(credentials, { since })).at(-1)!;
  assert.equal(closing.side, "SELL");
  assert.equal(closing.realizedPnl, "-105.2", "10 bought at 150.01, stopped out at the 139.49 bid");
  assert.deepEqual(await adapter.listProtections(credentials), []);
});

Deno.test("VENUE_B reports funding payments on open positions", async () => {
  await using sim = startSim();
  const { adapter, credentials } = await connectClient(sim);
  const since = Date.now() - 1;
  await adapter.placeOrder(credentials, {
    symbol: "ETHUSDC",
    side: "BUY",
    type: "MARKET",
    quantity: "2",
    reduceOnly: false,
    clientOrderId: "funded",
  });
  await sim.control("POST", "/funding", { coin: "ETH", rate: "0.0001" });
  const payments = await adapter.getFunding(credentials, { since });
  assert.deepEqual(payments.map((p) => [p.symbol, p.amount, p.asset]), [["ETHUSDC", "-0.6", "USDC"]]);
  assert.deepEqual(await adapter.getFunding(credentials, { since: Date.now() + 60_000 }), []);
});

Deno.test("VENUE_B relays user-signed transfers: a sendAsset is in the ledger with its nonce, a usdSend without", async () => {
  await using sim = startSim();
  const { adapter, principal } = await connectClient(sim);
  const platform = await fundedWallet(sim, "0");
  const since = Date.now() - 1;
  const nonce = testNonce();
  const action = sendUsdcAction({ isMainnet: true, destination: platform.address, amount: "25.50", nonce });
  await adapter.submitUserSignedAction!(signUserSignedAction(principal.privateKey, action));
  const ledger = await adapter.getLedger!(principal.address, since);
  const send = ledger.find((entry) => entry.type === "send")!;
  assert.deepEqual(
    { user: send.user, destination: send.destination, amount: send.amount, token: send.token, nonce: send.nonce },
    { user: principal.address, destination: platform.address, amount: "25.5", token: "USDC", nonce },
  );
  assert.match(send.hash, /^0x[0-9a-f]{64}$/);
  const received = await adapter.getLedger!(platform.address, since);
  assert.equal(received.find((entry) => entry.type === "send")?.nonce, nonce);
  const control = await sim.control<{ sends: { nonce: number; amount: string }[] }>(
    "GET",
    `/ledger?user=${platform.address}`,
  );
  assert.deepEqual(control.sends.map((s) => [s.nonce, s.amount]), [[nonce, "25.5"]]);

  // The venue logs a usdSend as an internalTransfer that names no nonce: it cannot bind a payment.
  const usdSendNonce = testNonce();
  await adapter.submitUserSignedAction!(
    signUserSignedAction(
      principal.privateKey,
      usdSendAction({ isMainnet: true, destination: platform.address, amount: "3", time: usdSendNonce }),
    ),
  );
  const internal = (await adapter.getLedger!(principal.address, since)).find((e) => e.type === "internalTransfer")!;
  assert.deepEqual([internal.amount, internal.destination, internal.nonce], ["3", platform.address, null]);

  const replay = signUserSignedAction(principal.privateKey, action);
  // The user signed the nonce into the action: a relay the venue already took is NONCE_SPENT, never UNAVAILABLE.
  await assertVenueError(
    adapter.submitUserSignedAction!(replay),
    "NONCE_SPENT",
    new RegExp(`^Invalid nonce: duplicate nonce ${nonce}$`),
  );
  const agentSigned = signUserSignedAction(
    generateAgentKey().privateKey,
    usdSendAction({ isMainnet: true, destination: platform.address, amount: "1", time: testNonce() }),
  );
  await assertVenueError(adapter.submitUserSignedAction!(agentSigned), "INSUFFICIENT_MARGIN", /Must deposit/);
  const tooMuch = signUserSignedAction(
    principal.privateKey,
    usdSendAction({ isMainnet: true, destination: platform.address, amount: "1000000", time: testNonce() }),
  );
  await assertVenueError(adapter.submitUserSignedAction!(tooMuch), "INSUFFICIENT_MARGIN");
});

Deno.test("VENUE_B maps a ledger send's token and dexes as the venue reports them", () => {
  const user = generateAgentKey().address;
  const destination = generateAgentKey().address;
  const hash = `0x${"ab".repeat(32)}` as const;
  // Typed by the SDK's description of the wire: a field the venue names otherwise fails to compile here.
  const updates: UserNonFundingLedgerUpdatesResponse = [
    {
      time: 1_700_000_000_000,
      hash,
      delta: {
        type: "send",
        user,
        destination,
        sourceDex: "spot",
        destinationDex: "xyz",
        token: "PURR",
        amount: "49.9",
        usdcValue: "7.32",
        fee: "0.0",
        nativeTokenFee: "0.0",
        nonce: 1_700_000_000_001,
        feeToken: "USDC",
      },
    },
    {
      time: 1_700_000_000_002,
      hash,
      delta: { type: "internalTransfer", usdc: "49.9", user, destination, fee: "0.0" },
    },
  ];
  const [send, internal] = updates.map((update) => toLedgerEntry(update as WireLedgerUpdate, user));
  assert.deepEqual(
    [send.type, send.token, send.amount, send.sourceDex, send.destinationDex, send.nonce],
    ["send", "PURR", "49.9", "spot", "xyz", 1_700_000_000_001],
  );
  // A usdSend moves USDC and names neither a nonce nor a dex.
  assert.deepEqual(
    [internal.token, internal.amount, internal.sourceDex, internal.destinationDex, internal.nonce],
    ["USDC", "49.9", null, null, null],
  );
});

Deno.test("VENUE_B maps every refusal text of the venue to our error kinds", () => {
  const cases: [string, VenueErrorKind][] = [
    ["User or API Wallet 0x2cb5f6358e530a68801fc11cbe17698ab9d43d47 does not exist.", "CREDENTIAL_REJECTED"],
    ["L1 error: User or API Wallet 0x2cb5f6358e530a68801fc11cbe17698ab9d43d47 does not exist.", "CREDENTIAL_REJECTED"],
    ["Builder fee has not been approved.", "CREDENTIAL_REJECTED"],
    ["Vault may not perform this action", "CREDENTIAL_REJECTED"],
    ["Must deposit before performing actions. User: 0x2cb5f6358e530a68801fc11cbe17698ab9d43d47", "INSUFFICIENT_MARGIN"],
    ["Insufficient margin to place order.", "INSUFFICIENT_MARGIN"],
    ["Insufficient balance for withdrawal.", "INSUFFICIENT_MARGIN"],
    ["Price must be divisible by tick size.", "INVALID_ORDER"],
    ["Price must be divisible by tick size. asset=0", "INVALID_ORDER"],
    ["Order must have minimum value of $10.", "INVALID_ORDER"],
    ["Reduce only order would increase position.", "INVALID_ORDER"],
    ["Post only order would have immediately matched, bbo was 64999.0@65001.0", "INVALID_ORDER"],
    ["Order could not immediately match against any resting orders.", "INVALID_ORDER"],
    ["Invalid TP/SL price.", "INVALID_ORDER"],
    ["No liquidity available for market order.", "INVALID_ORDER"],
    ["Order price too far from oracle", "INVALID_ORDER"],
    ["Order would cause position to exceed margin tier limit at current leverage", "INVALID_ORDER"],
    ["Order has invalid size.", "INVALID_ORDER"],
    ["Order has zero size.", "INVALID_ORDER"],
    ["Order has invalid price.", "INVALID_ORDER"],
    ["Order price cannot be more than 80% away from the reference price", "INVALID_ORDER"],
    ["Order was never placed, already canceled, or filled.", "INVALID_ORDER"],
    ["Builder has insufficient balance to be approved.", "INVALID_ORDER"],
    ["Cannot self-transfer.", "INVALID_ORDER"],
    ["Builder fee is too high.", "INVALID_ORDER"],
    ["Invalid nonce: duplicate nonce 1741107452532", "UNAVAILABLE"],
    ["Invalid nonce: nonce too low 1791140676851 < 1791227196699", "UNAVAILABLE"],
    ["Too many cumulative requests sent (10001 > 10000) for cumulative volume traded $0.", "RATE_LIMITED"],
    ["Something the venue has never said before", "INVALID_ORDER"],
  ];
  for (const [text, kind] of cases) assert.equal(kindOfVenueMessage(text), kind, text);
});

Deno.test("VENUE_B places a position's legs in one action, answering each leg on its own", async () => {
  await using sim = startSim();
  const recorder = recordingFetch();
  const { adapter, credentials } = await connectClient(sim, { adapter: { fetch: recorder.fetch } });
  await adapter.placeOrder(credentials, {
    symbol: "SOLUSDC",
    side: "BUY",
    type: "MARKET",
    quantity: "10",
    reduceOnly: false,
    clientOrderId: "long-legs",
  });
  recorder.bodies.length = 0;
  const leg = (kind: "STOP_LOSS" | "TAKE_PROFIT", triggerPrice: string, quantity: string, clientOrderId: string) => ({
    symbol: "SOLUSDC",
    kind,
    side: "SELL" as const,
    triggerPrice,
    quantity,
    clientOrderId,
  });
  const answers = await adapter.placeProtections!(credentials, [
    leg("STOP_LOSS", "140", "10", "legs-sl"),
    leg("TAKE_PROFIT", "160", "5", "legs-tp1"),
    // More than 80 % away from the mark: refused on its own.
    leg("TAKE_PROFIT", "20", "5", "legs-tp2"),
  ]);
  const actions = recorder.bodies.filter((b) => (b.body.action as { type?: string } | undefined)?.type === "order");
  assert.equal(actions.length, 1, "one action for the three legs");
  const lookups = recorder.bodies.filter((b) => b.body.type === "orderStatus").map((b) => b.body.oid);
  assert.deepEqual(lookups, [cloidFromClientOrderId("legs-tp2")], "the refused leg is looked up by its cloid");
  assert.equal((actions[0].body.action as { orders: unknown[] }).orders.length, 3);
  const [stop, target, refused] = answers;
  assert.ok(!(stop instanceof VenueError) && stop.status === "TRIGGER_PENDING" && stop.type === "STOP_MARKET");
  assert.ok(!(target instanceof VenueError) && target.type === "TAKE_PROFIT_MARKET");
  assert.ok(refused instanceof VenueError && refused.kind === "INVALID_ORDER", String(refused));
  assert.equal((await adapter.listProtections(credentials, "SOLUSDC")).length, 2);
});

Deno.test("VENUE_B follows a triggered stop to its fill: not pending, not modifiable, FILLED under its cloid", async () => {
  await using sim = startSim();
  const recorder = recordingFetch();
  const { adapter, credentials } = await connectClient(sim, { adapter: { fetch: recorder.fetch } });
  await adapter.placeOrder(credentials, {
    symbol: "SOLUSDC",
    side: "BUY",
    type: "MARKET",
    quantity: "10",
    reduceOnly: false,
    clientOrderId: "long",
  });
  await adapter.placeProtection(credentials, {
    symbol: "SOLUSDC",
    kind: "STOP_LOSS",
    side: "SELL",
    triggerPrice: "140",
    quantity: "10",
    clientOrderId: "sl",
  });
  await sim.control("PUT", "/trigger-hold", { hold: true });
  await sim.control("PUT", "/markets/SOL", { markPrice: "139.5" });
  const fired = (await adapter.getOrder(credentials, "SOLUSDC", "sl"))!;
  // Fired: working towards its fill, no longer waiting for its trigger (so not TRIGGER_PENDING).
  assert.deepEqual([fired.status, fired.type, fired.triggerPrice, fired.filledQuantity], [
    "NEW",
    "STOP_MARKET",
    "140",
    "0",
  ]);
  assert.deepEqual(await adapter.listProtections(credentials, "SOLUSDC"), []);
  await assertVenueError(
    adapter.modifyOrder(credentials, { symbol: "SOLUSDC", clientOrderId: "sl", quantity: "10", price: "139" }),
    "INVALID_ORDER",
  );
  const sent = recorder.bodies.map((b) => (b.body.action as { type?: string } | undefined)?.type);
  assert.equal(sent.includes("modify"), false, "a triggered order is never sent a modify");
  assert.equal((await adapter.cancelOrder(credentials, "SOLUSDC", "sl")).status, "NEW", "cancel leaves it to fill");
  await sim.control("PUT", "/trigger-hold", { hold: false });
  const filled = (await adapter.getOrder(credentials, "SOLUSDC", "sl"))!;
  assert.deepEqual([filled.status, filled.orderId, filled.filledQuantity], ["FILLED", fired.orderId, "10"]);
  assert.deepEqual((await adapter.getAccount(credentials)).positions, []);
});

Deno.test("VENUE_B never modifies a GTC order into taking liquidity: held to ALO, refused, left as it was", async () => {
  await using sim = startSim();
  const recorder = recordingFetch();
  const { adapter, credentials } = await connectClient(sim, { adapter: { fetch: recorder.fetch } });
  await adapter.placeOrder(credentials, { ...smallBuy("mod-cross"), quantity: "0.5" });
  const before = (await adapter.getOrder(credentials, "ETHUSDC", "mod-cross"))!;
  await assertVenueError(
    adapter.modifyOrder(credentials, { symbol: "ETHUSDC", clientOrderId: "mod-cross", quantity: "0.5", price: "3100" }),
    "INVALID_ORDER",
    /^Post only order would have immediately matched/,
  );
  const refusal = await adapter.modifyOrder(credentials, {
    symbol: "ETHUSDC",
    clientOrderId: "mod-cross",
    quantity: "0.5",
    price: "3100",
  }).catch((error: Error) => error);
  assert.match((refusal as Error).message, /would take liquidity \(cancel and place instead\)/);
  const modify = recorder.bodies.map((b) => b.body.action as Record<string, unknown> | undefined)
    .find((action) => action?.type === "modify")!;
  assert.equal("a" in modify, false, "never `a`: the new order would be placed even after the old one filled");
  const after = (await adapter.getOrder(credentials, "ETHUSDC", "mod-cross"))!;
  assert.deepEqual([after.status, after.price, after.orderId], ["NEW", before.price, before.orderId]);
  assert.deepEqual((await adapter.getAccount(credentials)).positions, []);
});
