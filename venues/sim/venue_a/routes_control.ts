/**
 * `/_control` routes: the test and QA contract for driving the simulator
 * (accounts, prices, faults, funding, algo-order holds). Not part of the
 * venue's protocol, so they answer plain JSON and `{error}` on bad input.
 */
import { Hono } from "hono";
import { z } from "zod";
import { cmp, isDecimal } from "../../decimal.ts";
import { holdAlgoOrders, triggerAlgoOrders } from "./algo.ts";
import { matchRestingOrders } from "./engine.ts";
import { payFunding, transfer } from "./ledger.ts";
import { defaultTouch } from "./markets.ts";
import { algoJson, orderJson, positionRiskJson } from "./serializers.ts";
import { createAccount, SAPI_WEIGHT_LIMIT, type SimAccount, type SimState } from "./state.ts";
import type { UserStreams } from "./user_stream.ts";

const DecimalText = z.string().refine(isDecimal, "must be a decimal string");
const PositiveDecimal = DecimalText.refine((value) => cmp(value, "0") > 0, "must be positive");
const SignedDecimal = z.string().refine((value) => isDecimal(value), "must be a decimal string");

const AccountBody = z.object({
  balances: z.record(z.string().regex(/^[A-Z0-9]{2,10}$/), DecimalText).optional(),
  canWithdraw: z.boolean().optional(),
  enableFutures: z.boolean().optional(),
  ipRestrict: z.boolean().optional(),
  dualSidePosition: z.boolean().optional(),
  multiAssetsMargin: z.boolean().optional(),
  feeBurn: z.boolean().optional(),
});

const MarketBody = z.object({
  markPrice: PositiveDecimal,
  bid: PositiveDecimal.optional(),
  ask: PositiveDecimal.optional(),
  /** Quantity shown at each book level. */
  depth: PositiveDecimal.optional(),
});

const FaultBody = z.object({
  mode: z.enum(["NONE", "DOWN", "SLOW", "LOSE_RESPONSE", "REJECT_KEYS"]),
  ms: z.number().int().min(0).max(120_000).optional(),
});

/** The most accounts one bulk call creates: a benchmark's thousands in a few calls, never an unbounded body. */
export const BULK_ACCOUNTS_MAX = 10_000;
const BulkAccountsBody = z.object({
  count: z.number().int().min(1).max(BULK_ACCOUNTS_MAX),
  balances: AccountBody.shape.balances,
});

/** How long the futures host refuses a valid key with -2015, the venue's temporary block. */
const BlockBody = z.object({ ms: z.number().int().min(0).max(86_400_000) });
/** Weight other processes behind the same IP spent this minute: the futures pool, or a /sapi endpoint's. */
const WeightUsedBody = z.object({
  pool: z.string().regex(/^(futures|GET \/sapi\/\S+)$/),
  used: z.number().int().min(0),
});
const FundingBody = z.object({ symbol: z.string(), rate: SignedDecimal });
const LimitsBody = z.object({
  requestWeightPerMinute: z.number().int().min(1).optional(),
  ordersPer10Seconds: z.number().int().min(1).optional(),
  ordersPerMinute: z.number().int().min(1).optional(),
  /** Open regular orders per symbol (MAX_NUM_ORDERS) and waiting conditional orders across symbols. */
  maxOpenOrdersPerSymbol: z.number().int().min(1).optional(),
  maxConditionalOrders: z.number().int().min(1).optional(),
  /** User data stream: listen keys per connection, client messages per second, connection attempts per 5 minutes. */
  streamsPerConnection: z.number().int().min(1).optional(),
  streamMessagesPerSecond: z.number().int().min(1).optional(),
  streamConnectionsPer5Minutes: z.number().int().min(1).optional(),
});
const TransferBody = z.object({ asset: z.string().regex(/^[A-Z0-9]{2,10}$/), amount: SignedDecimal });
const StreamTargetBody = z.object({ apiKey: z.string().optional() });
const AlgoHoldBody = z.object({
  hold: z.boolean(),
  /** Where fired algo orders stop while held; TRIGGERING unless told. */
  stage: z.enum(["TRIGGERING", "TRIGGERED"]).optional(),
});

async function body<T>(
  request: Request,
  schema: z.ZodType<T>,
): Promise<{ ok: true; data: T } | { ok: false; error: string }> {
  const text = await request.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    return { ok: false, error: "Body is not valid JSON" };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, data: parsed.data };
  return { ok: false, error: parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ") };
}

/** The control app, mounted at `/_control` by the simulator factory. */
export function controlRoutes(state: SimState, streams: UserStreams): Hono {
  const app = new Hono();
  const accountOf = (apiKey: string | undefined): SimAccount | undefined =>
    apiKey === undefined ? undefined : state.accounts.get(apiKey);

  app.post("/accounts", async (c) => {
    const input = await body(c.req.raw, AccountBody);
    if (!input.ok) return c.json({ error: input.error }, 400);
    const account = createAccount(state, input.data);
    return c.json({ apiKey: account.apiKey, apiSecret: account.apiSecret });
  });

  /**
   * `count` accounts at once, each with the settings `POST /accounts` gives by default and the same balances:
   * what a benchmark of thousands of connected accounts needs without thousands of calls.
   */
  app.post("/accounts/bulk", async (c) => {
    const input = await body(c.req.raw, BulkAccountsBody);
    if (!input.ok) return c.json({ error: input.error }, 400);
    const accounts = Array.from({ length: input.data.count }, () => {
      const account = createAccount(state, { balances: input.data.balances });
      return { apiKey: account.apiKey, apiSecret: account.apiSecret };
    });
    return c.json({ accounts });
  });

  /** A read-only view of an account, for assertions that the venue API cannot make (e.g. every order ever). */
  app.get("/accounts/:apiKey", (c) => {
    const account = state.accounts.get(c.req.param("apiKey"));
    if (!account) return c.json({ error: "Unknown API key" }, 404);
    return c.json({
      revoked: account.revoked,
      balances: Object.fromEntries(account.wallet),
      positions: positionRiskJson(state, account, 2).filter((p) => cmp(p.positionAmt, "0") !== 0),
      orders: account.orders.map((o) => orderJson(state, o, "query")),
      algoOrders: account.algoOrders.map((o) => algoJson(o, "query")),
      trades: account.trades,
      income: account.income,
    });
  });

  app.delete("/accounts/:apiKey", (c) => {
    const account = state.accounts.get(c.req.param("apiKey"));
    if (!account) return c.json({ error: "Unknown API key" }, 404);
    account.revoked = true;
    return c.json({ revoked: true });
  });

  /**
   * Blocks `apiKey` on the futures host for `ms` (0 lifts it): -2015 there, as
   * for a revoked key, while the key stays valid and readable on the spot host.
   */
  app.post("/accounts/:apiKey/block", async (c) => {
    const account = state.accounts.get(c.req.param("apiKey"));
    if (!account) return c.json({ error: "Unknown API key" }, 404);
    const input = await body(c.req.raw, BlockBody);
    if (!input.ok) return c.json({ error: input.error }, 400);
    account.blockedUntil = input.data.ms === 0 ? 0 : state.now() + input.data.ms;
    return c.json({ blockedUntil: account.blockedUntil });
  });

  /** A transfer into (positive) or out of (negative) the futures wallet: ACCOUNT_UPDATE DEPOSIT or WITHDRAW. */
  app.post("/accounts/:apiKey/transfers", async (c) => {
    const account = state.accounts.get(c.req.param("apiKey"));
    if (!account) return c.json({ error: "Unknown API key" }, 404);
    const input = await body(c.req.raw, TransferBody);
    if (!input.ok) return c.json({ error: input.error }, 400);
    transfer(state, account, input.data.asset, input.data.amount);
    return c.json({ asset: input.data.asset, balance: account.wallet.get(input.data.asset) });
  });

  /** The user data stream as the venue holds it: open connections and live listen keys. */
  app.get("/streams", (c) => c.json(streams.view()));

  /** Cuts the connections carrying `apiKey`'s listen key, or every connection without `apiKey`. */
  app.post("/streams/drop", async (c) => {
    const input = await body(c.req.raw, StreamTargetBody);
    if (!input.ok) return c.json({ error: input.error }, 400);
    const account = accountOf(input.data.apiKey);
    if (input.data.apiKey !== undefined && !account) return c.json({ error: "Unknown API key" }, 404);
    return c.json({ dropped: streams.drop(account) });
  });

  /** Expires `apiKey`'s listen key now, as if its hour had run out: listenKeyExpired, then silence. */
  app.post("/streams/expire", async (c) => {
    const input = await body(c.req.raw, StreamTargetBody);
    if (!input.ok) return c.json({ error: input.error }, 400);
    const account = accountOf(input.data.apiKey);
    if (!account) return c.json({ error: "Unknown API key" }, 404);
    return c.json({ expired: streams.expire(account) });
  });

  app.put("/markets/:symbol", async (c) => {
    const market = state.markets.get(c.req.param("symbol"));
    if (!market) return c.json({ error: `Unknown symbol "${c.req.param("symbol")}"` }, 404);
    const input = await body(c.req.raw, MarketBody);
    if (!input.ok) return c.json({ error: input.error }, 400);
    const { markPrice, bid, ask, depth } = input.data;
    const touch = defaultTouch(market.def, markPrice);
    market.markPrice = markPrice;
    market.bid = bid ?? touch.bid;
    market.ask = ask ?? touch.ask;
    if (depth) market.depthQty = depth;
    // Resting orders first: a stop triggered by the same move must see the fills it follows.
    matchRestingOrders(state, market.def.symbol);
    triggerAlgoOrders(state, market.def.symbol);
    return c.json({
      symbol: market.def.symbol,
      markPrice: market.markPrice,
      bid: market.bid,
      ask: market.ask,
      depth: market.depthQty,
    });
  });

  app.put("/faults", async (c) => {
    const input = await body(c.req.raw, FaultBody);
    if (!input.ok) return c.json({ error: input.error }, 400);
    state.fault = { mode: input.data.mode, ms: input.data.ms ?? 0 };
    return c.json(state.fault);
  });

  /**
   * Sets the weight already used in the current minute of one pool ("futures",
   * or "GET /sapi/..." for a spot endpoint), as if other processes sharing the
   * IP had spent it: the next answers report it in their used-weight header.
   */
  app.put("/weight-used", async (c) => {
    const input = await body(c.req.raw, WeightUsedBody);
    if (!input.ok) return c.json({ error: input.error }, 400);
    const { pool: name, used } = input.data;
    const minute = Math.floor(state.now() / 60_000);
    let pool = name === "futures" ? state.weight : state.sapiWeight.get(name);
    if (!pool) state.sapiWeight.set(name, pool = { limit: SAPI_WEIGHT_LIMIT, minute, used: 0, refused: 0 });
    if (pool.minute !== minute) Object.assign(pool, { minute, refused: 0 });
    pool.used = used;
    return c.json({ pool: name, used, limit: pool.limit });
  });

  app.post("/funding", async (c) => {
    const input = await body(c.req.raw, FundingBody);
    if (!input.ok) return c.json({ error: input.error }, 400);
    if (!state.markets.has(input.data.symbol)) return c.json({ error: `Unknown symbol "${input.data.symbol}"` }, 404);
    const payments = payFunding(state, input.data.symbol, input.data.rate);
    return c.json({ symbol: input.data.symbol, rate: input.data.rate, payments });
  });

  /**
   * Sets the IP weight limit and the per-account order limits (each optional), so rate limiting can be
   * exercised without thousands of calls, or lifted for a benchmark; lifts an IP ban (418) too.
   */
  app.put("/limits", async (c) => {
    const input = await body(c.req.raw, LimitsBody);
    if (!input.ok) return c.json({ error: input.error }, 400);
    const { requestWeightPerMinute, ordersPer10Seconds, ordersPerMinute } = input.data;
    state.weight.limit = requestWeightPerMinute ?? state.weight.limit;
    // New limits start over: a ban earned under the old ones is lifted.
    state.ban.until = 0;
    state.orderLimits = {
      per10Seconds: ordersPer10Seconds ?? state.orderLimits.per10Seconds,
      perMinute: ordersPerMinute ?? state.orderLimits.perMinute,
    };
    state.openCaps = {
      ordersPerSymbol: input.data.maxOpenOrdersPerSymbol ?? state.openCaps.ordersPerSymbol,
      conditional: input.data.maxConditionalOrders ?? state.openCaps.conditional,
    };
    const stream = streams.limits;
    stream.streamsPerConnection = input.data.streamsPerConnection ?? stream.streamsPerConnection;
    stream.messagesPerSecond = input.data.streamMessagesPerSecond ?? stream.messagesPerSecond;
    stream.connectionsPer5Minutes = input.data.streamConnectionsPer5Minutes ?? stream.connectionsPer5Minutes;
    return c.json({
      requestWeightPerMinute: state.weight.limit,
      ordersPer10Seconds: state.orderLimits.per10Seconds,
      ordersPerMinute: state.orderLimits.perMinute,
      maxOpenOrdersPerSymbol: state.openCaps.ordersPerSymbol,
      maxConditionalOrders: state.openCaps.conditional,
      streamsPerConnection: stream.streamsPerConnection,
      streamMessagesPerSecond: stream.messagesPerSecond,
      streamConnectionsPer5Minutes: stream.connectionsPer5Minutes,
    });
  });

  /**
   * Holds fired algo orders at TRIGGERING (the default stage) or TRIGGERED, so
   * tests can watch the states the venue passes through; `hold: false` lets the
   * held ones run to FINISHED (or REJECTED) at once. Without a hold a trigger
   * runs through within the market move that fired it.
   */
  app.put("/algo-hold", async (c) => {
    const input = await body(c.req.raw, AlgoHoldBody);
    if (!input.ok) return c.json({ error: input.error }, 400);
    const stage = input.data.hold ? input.data.stage ?? "TRIGGERING" : null;
    const held = holdAlgoOrders(state, stage);
    return c.json({ hold: stage !== null, stage, held });
  });

  return app;
}
