/**
 * VENUE_A JSON (see wire.ts) -> our normalised types, with every decimal kept
 * a string end to end.
 */
import type { OrderLimits } from "./order_count.ts";
import { cmp, decimalPlaces, div, isZero, mul } from "../decimal.ts";
import type {
  AccountPush,
  Balance,
  CredentialCheck,
  CredentialProblem,
  Fill,
  FundingPayment,
  MarginMode,
  Market,
  Order,
  OrderBook,
  OrderStatus,
  OrderType,
  Position,
  TimeInForce,
} from "../types.ts";
import { USD_STABLE_ASSETS } from "./constants.ts";
import type {
  WireAccountAsset,
  WireAccountConfig,
  WireAlgoOrder,
  WireApiRestrictions,
  WireDepth,
  WireExchangeInfo,
  WireIncome,
  WireOrder,
  WirePositionRisk,
  WireSymbol,
  WireSymbolConfig,
  WireUserEvent,
  WireUserTrade,
} from "./wire.ts";

// ---------------------------------------------------------------- markets

/** A market plus the filters the adapter checks orders against before sending. */
export interface MarketRules extends Market {
  minPrice: string;
  maxPrice: string;
  maxQty: string;
  marketStepSize: string;
  marketMinQty: string;
  marketMaxQty: string;
}

function filter(symbol: WireSymbol, type: string): Record<string, string> {
  const found = symbol.filters.find((f) => f.filterType === type) ?? {};
  return Object.fromEntries(Object.entries(found).map(([key, value]) => [key, String(value)]));
}

/**
 * Perpetual contracts only. `maxLeverage` comes from requiredMarginPercent
 * because the exact figure (leverageBracket) needs credentials that a market
 * listing does not have; it is the conservative reading. The venue publishes
 * that field as "5.0000" for every symbol (ccxt 4.5.84 binance.js, the
 * fetchMarkets sample), so a listing says 20x where the brackets allow more.
 */
export function toMarketRules(info: WireExchangeInfo): MarketRules[] {
  return info.symbols.filter((s) => s.contractType === "PERPETUAL").map((s) => {
    const price = filter(s, "PRICE_FILTER");
    const lot = filter(s, "LOT_SIZE");
    const marketLot = filter(s, "MARKET_LOT_SIZE");
    const requiredMargin = s.requiredMarginPercent ?? "0";
    return {
      symbol: s.symbol,
      providerSymbol: s.symbol,
      kind: "PERPETUAL",
      base: s.baseAsset,
      quote: s.quoteAsset,
      active: s.status === "TRADING",
      tickSize: price.tickSize,
      stepSize: lot.stepSize,
      minQty: lot.minQty,
      minNotionalUsd: filter(s, "MIN_NOTIONAL").notional ?? "0",
      quantityPrecision: decimalPlaces(lot.stepSize),
      pricePrecision: decimalPlaces(price.tickSize),
      maxLeverage: cmp(requiredMargin, "0") > 0 ? Math.max(1, Number(div("100", requiredMargin, 0, "DOWN"))) : 1,
      minPrice: price.minPrice ?? "0",
      maxPrice: price.maxPrice ?? "0",
      maxQty: lot.maxQty ?? "0",
      marketStepSize: marketLot.stepSize ?? lot.stepSize,
      marketMinQty: marketLot.minQty ?? lot.minQty,
      marketMaxQty: marketLot.maxQty ?? lot.maxQty ?? "0",
    };
  });
}

/** The plain `Market` view of rules, without the adapter-only fields. */
export function toMarket(rules: MarketRules): Market {
  const { minPrice: _a, maxPrice: _b, maxQty: _c, marketStepSize: _d, marketMinQty: _e, marketMaxQty: _f, ...market } =
    rules;
  return market;
}

/** REQUEST_WEIGHT per minute announced by exchangeInfo. */
export function weightLimitOf(info: WireExchangeInfo): number | undefined {
  return info.rateLimits?.find((r) => r.rateLimitType === "REQUEST_WEIGHT" && r.interval === "MINUTE")?.limit;
}

/** The per-account ORDERS limits of exchangeInfo (10 seconds and 1 minute); a missing one keeps its default. */
export function orderLimitsOf(info: WireExchangeInfo): Partial<OrderLimits> {
  const orders = (interval: string, intervalNum: number) =>
    info.rateLimits?.find((r) =>
      r.rateLimitType === "ORDERS" && r.interval === interval && (r.intervalNum ?? 1) === intervalNum
    )?.limit;
  return { per10Seconds: orders("SECOND", 10), perMinute: orders("MINUTE", 1) };
}

export function toOrderBook(symbol: string, depth: WireDepth, levels: number, fallbackTime: number): OrderBook {
  const side = (rows: [string, string][]) => rows.slice(0, levels).map(([price, quantity]) => ({ price, quantity }));
  return { symbol, bids: side(depth.bids), asks: side(depth.asks), time: depth.T ?? depth.E ?? fallbackTime };
}

// ---------------------------------------------------------------- orders

const STATUS: Record<string, OrderStatus> = {
  NEW: "NEW",
  PARTIALLY_FILLED: "PARTIALLY_FILLED",
  FILLED: "FILLED",
  CANCELED: "CANCELED",
  REJECTED: "REJECTED",
  EXPIRED: "EXPIRED",
  EXPIRED_IN_MATCH: "EXPIRED",
};

const TIME_IN_FORCE: Record<string, TimeInForce> = { GTC: "GTC", IOC: "IOC", FOK: "FOK", GTX: "POST_ONLY" };

function orderType(type: string): OrderType {
  if (type === "LIMIT") return "LIMIT";
  if (type.startsWith("TAKE_PROFIT")) return "TAKE_PROFIT_MARKET";
  if (type.startsWith("STOP") || type.startsWith("TRAILING")) return "STOP_MARKET";
  return "MARKET";
}

function priceOrNull(value: string | undefined): string | null {
  return value === undefined || value === "" || isZero(value) ? null : value;
}

export function toOrder(wire: WireOrder): Order {
  const type = orderType(wire.type);
  return {
    orderId: String(wire.orderId),
    clientOrderId: wire.clientOrderId || null,
    symbol: wire.symbol,
    side: wire.side,
    type,
    status: STATUS[wire.status] ?? "NEW",
    quantity: wire.origQty,
    filledQuantity: wire.executedQty,
    price: type === "LIMIT" ? priceOrNull(wire.price) : null,
    averagePrice: isZero(wire.executedQty) ? null : priceOrNull(wire.avgPrice),
    triggerPrice: priceOrNull(wire.stopPrice),
    reduceOnly: wire.reduceOnly || wire.closePosition === true,
    timeInForce: type === "LIMIT" ? TIME_IN_FORCE[wire.timeInForce] ?? null : null,
    createdAt: wire.time ?? wire.updateTime,
  };
}

/**
 * The venue's algo lifecycle (ALGO_UPDATE) read as the venue means it:
 * - NEW waits for its trigger: TRIGGER_PENDING.
 * - TRIGGERING (fired, being handed to the matching engine) and TRIGGERED (its
 *   order is in the engine) are working, not filled: NEW, or PARTIALLY_FILLED
 *   once the engine reports an execution. Not TRIGGER_PENDING, which would say
 *   the order can still be cancelled before it fires; it no longer can.
 * - FINISHED means the engine's order is done, filled or cancelled (docs,
 *   "Event: Algo Order Update"; ccxt 4.5.84 binance.js parseOrderStatus reads
 *   FINISHED as closed): FILLED as soon as it executed anything, with what it
 *   executed as the filled quantity; CANCELED when it executed nothing. A
 *   reduce-only stop larger than what was left of the position is cut to it by
 *   the engine and FINISHES with `actualQty` below its `quantity`: it closed
 *   the position, a fill, not a cancellation.
 * - REJECTED is the engine refusing the order at trigger time (e.g. margin);
 *   EXPIRED the system cancelling it.
 * `actualQty` / `actualPrice` are the engine order's executed quantity and
 * average price, present on queries once the order reached the engine.
 */
function algoStatus(status: string, executed: string): OrderStatus {
  switch (status) {
    case "NEW":
      return "TRIGGER_PENDING";
    case "TRIGGERING":
    case "TRIGGERED":
      return isZero(executed) ? "NEW" : "PARTIALLY_FILLED";
    case "FINISHED":
      return isZero(executed) ? "CANCELED" : "FILLED";
    case "CANCELED":
    case "REJECTED":
    case "EXPIRED":
      return status;
    default:
      return "TRIGGER_PENDING";
  }
}

/** A quantity field that may be absent or empty (before the trigger, or with closePosition) read as zero. */
function amount(value: string | undefined): string {
  return value === undefined || value === "" ? "0" : value;
}

export function toProtectionOrder(wire: WireAlgoOrder): Order {
  const executed = amount(wire.actualQty);
  const status = algoStatus(wire.algoStatus, executed);
  return {
    orderId: String(wire.algoId),
    clientOrderId: wire.clientAlgoId || null,
    symbol: wire.symbol,
    side: wire.side,
    type: orderType(wire.orderType),
    status,
    quantity: wire.quantity,
    filledQuantity: executed,
    price: null,
    averagePrice: isZero(executed) ? null : priceOrNull(wire.actualPrice),
    triggerPrice: priceOrNull(wire.triggerPrice),
    reduceOnly: wire.reduceOnly || wire.closePosition === true,
    timeInForce: null,
    createdAt: wire.createTime,
    executionOrderId: wire.actualOrderId ? String(wire.actualOrderId) : null,
  };
}

// ---------------------------------------------------------------- pushes

/**
 * What a user data stream event tells a watcher, or null when it tells
 * nothing the other pushes do not:
 * - ORDER_TRADE_UPDATE: the order named by its client order id, with its status
 *   (a fill too: its ACCOUNT_UPDATE reason ORDER is covered by this push).
 * - ALGO_UPDATE: the stop or target named by its client algo id, its algo
 *   status read as for queries (the regular order a trigger places follows
 *   with its own ORDER_TRADE_UPDATE).
 * - ACCOUNT_UPDATE: FUNDING for reason FUNDING_FEE; ACCOUNT for every other
 *   reason but ORDER (deposits, withdrawals, insurance clear, margin transfers
 *   and type changes, adjustments...).
 * `at` is the venue's event time `E`.
 */
export function toAccountPush(event: WireUserEvent): AccountPush | null {
  if (typeof event.E !== "number") return null;
  switch (event.e) {
    case "ORDER_TRADE_UPDATE": {
      const { o } = event as Extract<WireUserEvent, { e: "ORDER_TRADE_UPDATE" }>;
      if (!o?.s) return null;
      return { kind: "ORDER", symbol: o.s, clientOrderId: o.c || null, status: STATUS[o.X] ?? "NEW", at: event.E };
    }
    case "ALGO_UPDATE": {
      const { o } = event as Extract<WireUserEvent, { e: "ALGO_UPDATE" }>;
      if (!o?.s) return null;
      const status = algoStatus(o.X, amount(o.aq));
      return { kind: "ORDER", symbol: o.s, clientOrderId: o.caid || null, status, at: event.E };
    }
    case "ACCOUNT_UPDATE": {
      const reason = (event as Extract<WireUserEvent, { e: "ACCOUNT_UPDATE" }>).a?.m;
      if (reason === "FUNDING_FEE") return { kind: "FUNDING", at: event.E };
      return reason === "ORDER" ? null : { kind: "ACCOUNT", at: event.E };
    }
    default:
      return null;
  }
}

// ---------------------------------------------------------------- account

/** Non-zero wallet balances; a non-stable asset is valued at its USDT mark price when the venue lists one. */
export function toBalances(assets: WireAccountAsset[], markPrices: ReadonlyMap<string, string>): Balance[] {
  return assets.filter((a) => !isZero(a.walletBalance)).map((a) => {
    const mark = markPrices.get(`${a.asset}USDT`);
    const usdValue = USD_STABLE_ASSETS.has(a.asset) ? a.walletBalance : mark ? mul(a.walletBalance, mark) : null;
    return { asset: a.asset, free: a.availableBalance, total: a.walletBalance, usdValue };
  });
}

export function toPositions(risks: WirePositionRisk[], configs: WireSymbolConfig[]): Position[] {
  const bySymbol = new Map(configs.map((c) => [c.symbol, c]));
  return risks.filter((r) => !isZero(r.positionAmt)).map((r) => {
    const config = bySymbol.get(r.symbol);
    const long = !r.positionAmt.startsWith("-");
    return {
      symbol: r.symbol,
      side: long ? "LONG" : "SHORT",
      quantity: long ? r.positionAmt : r.positionAmt.slice(1),
      entryPrice: r.entryPrice,
      markPrice: r.markPrice,
      unrealizedPnlUsd: r.unRealizedProfit,
      leverage: config?.leverage ?? 0,
      marginMode: (config?.marginType === "ISOLATED" ? "ISOLATED" : "CROSSED") satisfies MarginMode,
      liquidationPrice: priceOrNull(r.liquidationPrice),
    };
  });
}

export function toFill(trade: WireUserTrade): Fill {
  return {
    tradeId: String(trade.id),
    orderId: String(trade.orderId),
    clientOrderId: null,
    symbol: trade.symbol,
    side: trade.side,
    price: trade.price,
    quantity: trade.qty,
    realizedPnl: trade.realizedPnl,
    fee: trade.commission,
    feeAsset: trade.commissionAsset,
    builderFee: null,
    time: trade.time,
  };
}

export function toFunding(income: WireIncome): FundingPayment {
  return { symbol: income.symbol, amount: income.income, asset: income.asset, time: income.time };
}

/**
 * Internal transfers move funds to another account just like a withdrawal,
 * so they count as WITHDRAWALS_ENABLED. `config` is null when futures access
 * is off and the account modes could not be read.
 */
export function toCredentialCheck(
  restrictions: WireApiRestrictions,
  config: WireAccountConfig | null,
  apiKey: string,
): CredentialCheck {
  const problems: CredentialProblem[] = [];
  if (!restrictions.enableFutures) problems.push("FUTURES_DISABLED");
  if (restrictions.enableWithdrawals || restrictions.enableInternalTransfer) problems.push("WITHDRAWALS_ENABLED");
  if (!restrictions.ipRestrict) problems.push("IP_UNRESTRICTED");
  if (config?.dualSidePosition) problems.push("HEDGE_MODE_ENABLED");
  if (config?.multiAssetsMargin) problems.push("MULTI_ASSETS_MARGIN_ENABLED");
  return {
    permissions: {
      canRead: restrictions.enableReading,
      canFutures: restrictions.enableFutures,
      canWithdraw: restrictions.enableWithdrawals,
    },
    accountHint: apiKey.length >= 4 ? `…${apiKey.slice(-4)}` : null,
    problems,
    // The venue answers no end date for an API key: it lasts until its owner deletes it.
    accessExpiresAt: null,
  };
}
