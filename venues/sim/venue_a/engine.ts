/**
 * Regular orders: validation against the symbol filters in the venue's order
 * of checks, then a simple matching model. MARKET fills at the touch; a LIMIT
 * that crosses the touch fills there as taker; otherwise it rests and fills
 * at its own price as maker once the mark price moves through it.
 */
import { abs, add, cmp, decimalPlaces, isDecimal, isMultipleOf, isZero, min, mul, sub } from "../../decimal.ts";
import { errors } from "./errors.ts";
import { applyFill, availableBalance, marginFor, openingQuantity } from "./ledger.ts";
import { type MarketDef, type MarketState, MULTIPLIER_DOWN, MULTIPLIER_UP } from "./markets.ts";
import type { RequestParams } from "./params.ts";
import {
  emitAccountEvent,
  openOrders,
  positionOf,
  randomKey,
  type Side,
  type SimAccount,
  type SimOrder,
  type SimState,
  symbolConfigOf,
} from "./state.ts";

export const CLIENT_ID_PATTERN = /^[.A-Z:/a-z0-9_-]{1,36}$/;
const CONDITIONAL_TYPES = ["STOP", "STOP_MARKET", "TAKE_PROFIT", "TAKE_PROFIT_MARKET", "TRAILING_STOP_MARKET"];
const TIME_IN_FORCE = ["GTC", "IOC", "FOK", "GTX"] as const;

export function marketOf(state: SimState, params: RequestParams): MarketState {
  const market = state.markets.get(params.required("symbol"));
  if (!market) throw errors.badSymbol();
  return market;
}

export function sideOf(params: RequestParams): Side {
  const side = params.required("side");
  if (side !== "BUY" && side !== "SELL") throw errors.badSide();
  return side;
}

/** One-way mode takes BOTH only; hedge mode is not simulated, so every side is refused there. */
export function checkPositionSide(account: SimAccount, params: RequestParams): void {
  const positionSide = params.get("positionSide") ?? "BOTH";
  if (account.dualSidePosition || positionSide !== "BOTH") throw errors.positionSideMismatch();
}

export function checkQuantity(def: MarketDef, quantity: string, market: boolean): void {
  if (isZero(quantity)) throw errors.qtyNotPositive();
  if (!isDecimal(quantity) || decimalPlaces(quantity) > def.quantityPrecision) throw errors.badPrecision();
  if (cmp(quantity, def.minQty) < 0) throw errors.qtyBelowMin();
  if (cmp(quantity, market ? def.marketMaxQty : def.maxQty) > 0) throw errors.qtyAboveMax();
  if (!isMultipleOf(sub(quantity, def.minQty), def.stepSize)) throw errors.qtyNotStep();
}

export function checkPriceFilter(def: MarketDef, price: string): void {
  if (decimalPlaces(price) > def.pricePrecision) throw errors.badPrecision();
  if (cmp(price, def.minPrice) < 0) throw errors.priceBelowMin();
  if (cmp(price, def.maxPrice) > 0) throw errors.priceAboveMax();
  if (!isMultipleOf(sub(price, def.minPrice), def.tickSize)) throw errors.priceNotTick();
}

/** A caller's client id checked for format and for clashing with an open order, or a generated one. */
export function checkClientId(clientId: string | undefined, inUse: (id: string) => boolean): string {
  if (clientId === undefined) return randomKey(22);
  if (!CLIENT_ID_PATTERN.test(clientId)) throw errors.badClientOrderId();
  if (inUse(clientId)) throw errors.duplicateClientOrderId();
  return clientId;
}

function touch(market: MarketState, side: Side): string {
  return side === "BUY" ? market.ask : market.bid;
}

/**
 * ORDER_TRADE_UPDATE's expiry reasons (`er`): 2, an IOC order's unfilled rest;
 * 4, a reduce-only order knocked out because it would open or reverse a position.
 */
const EXPIRED_IOC = "2";
const EXPIRED_REDUCE_ONLY = "4";

/** Ends an open order as EXPIRED, as the engine does on its own, and says so on the stream. */
function expire(state: SimState, account: SimAccount, order: SimOrder, reason: string): void {
  order.status = "EXPIRED";
  order.reservedMargin = "0";
  order.updateTime = state.now();
  emitAccountEvent(state, account, { kind: "order", order, execution: "EXPIRED", expiryReason: reason });
}

/**
 * Fills what is left of `order` at `price`. A reduce-only order never flips
 * the position: the engine reduces its quantity to what is left to close
 * (`origQty` shrinks, so the order ends FILLED with that quantity, as the
 * venue reports it: nautechsystems/nautilus_trader#3983 saw a reduce-only
 * order's venue quantity drop below the one sent), and expires it when
 * nothing is left to close.
 */
export function fillOrder(state: SimState, account: SimAccount, order: SimOrder, price: string, maker: boolean): void {
  order.reservedMargin = "0";
  let quantity = sub(order.origQty, order.executedQty);
  if (order.reduceOnly) {
    const position = positionOf(account, order.symbol);
    // A BUY reduces a short and a SELL a long; anything else has nothing to reduce.
    const reduces = !isZero(position.amt) && position.amt.startsWith("-") === (order.side === "BUY");
    quantity = reduces ? min(quantity, abs(position.amt)) : "0";
    if (!isZero(quantity)) order.origQty = add(order.executedQty, quantity);
  }
  if (isZero(quantity)) return expire(state, account, order, EXPIRED_REDUCE_ONLY);
  applyFill(state, account, order, price, quantity, maker);
}

/**
 * Records a new order and runs it against the book. With `hold` it is only
 * admitted (checked and recorded as NEW) and `releaseOrder` runs it later:
 * how a fired algo order's MARKET order waits while a test holds it in TRIGGERED.
 */
export function submitOrder(
  state: SimState,
  account: SimAccount,
  order: Omit<SimOrder, "orderId" | "executedQty" | "cumQuote" | "status" | "reservedMargin" | "time" | "updateTime">,
  options: { hold?: boolean } = {},
): SimOrder {
  const market = state.markets.get(order.symbol)!;
  const position = positionOf(account, order.symbol);
  const limit = order.type === "LIMIT";
  const crosses = !limit ||
    (order.side === "BUY" ? cmp(order.price, market.ask) >= 0 : cmp(order.price, market.bid) <= 0);
  if (order.timeInForce === "GTX" && crosses) throw errors.gtxRejected();
  if (order.timeInForce === "FOK" && !crosses) throw errors.fokRejected();
  const opening = order.reduceOnly ? "0" : openingQuantity(position, order.side, order.origQty);
  const margin = marginFor(
    opening,
    crosses ? touch(market, order.side) : order.price,
    symbolConfigOf(account, order.symbol).leverage,
  );
  if (cmp(margin, availableBalance(state, account)) > 0) throw errors.marginInsufficient();
  const time = state.now();
  const record: SimOrder = {
    ...order,
    orderId: ++state.ids.order,
    executedQty: "0",
    cumQuote: "0",
    status: "NEW",
    reservedMargin: "0",
    time,
    updateTime: time,
  };
  account.orders.push(record);
  emitAccountEvent(state, account, { kind: "order", order: record, execution: "NEW" });
  if (options.hold) return record;
  if (crosses) fillOrder(state, account, record, touch(market, order.side), false);
  else if (order.timeInForce === "IOC") expire(state, account, record, EXPIRED_IOC);
  else record.reservedMargin = margin;
  return record;
}

/** Runs a MARKET order admitted with `hold`: it fills at the touch now, unless it was cancelled meanwhile. */
export function releaseOrder(state: SimState, account: SimAccount, order: SimOrder): void {
  if (order.status !== "NEW") return;
  fillOrder(state, account, order, touch(state.markets.get(order.symbol)!, order.side), false);
}

/** POST /fapi/v1/order. */
export function placeOrder(state: SimState, account: SimAccount, params: RequestParams): SimOrder {
  const market = marketOf(state, params);
  const { def } = market;
  const side = sideOf(params);
  const type = params.required("type");
  if (CONDITIONAL_TYPES.includes(type)) throw errors.useAlgoEndpoint();
  if (type !== "LIMIT" && type !== "MARKET") throw errors.badOrderType();
  checkPositionSide(account, params);
  const reduceOnly = params.bool("reduceOnly") ?? false;
  if (openOrders(account, def.symbol).length >= state.openCaps.ordersPerSymbol) throw errors.maxOpenOrders();
  const clientOrderId = checkClientId(
    params.get("newClientOrderId"),
    (id) => openOrders(account).some((o) => o.clientOrderId === id),
  );
  const quantity = params.requiredDecimal("quantity");
  checkQuantity(def, quantity, type === "MARKET");
  let price = "0";
  let timeInForce: SimOrder["timeInForce"] = "GTC";
  if (type === "LIMIT") {
    const requested = params.oneOf("timeInForce", TIME_IN_FORCE, errors.badTimeInForce);
    if (!requested) throw errors.mandatory("timeInForce");
    timeInForce = requested;
    price = params.requiredDecimal("price");
    checkPriceFilter(def, price);
    if (side === "BUY" && cmp(price, mul(market.markPrice, MULTIPLIER_UP)) > 0) throw errors.priceAboveMultiplier();
    if (side === "SELL" && cmp(price, mul(market.markPrice, MULTIPLIER_DOWN)) < 0) throw errors.priceBelowMultiplier();
  } else if (params.get("price") !== undefined) {
    throw errors.notRequired("price");
  }
  const valuedAt = type === "LIMIT" ? price : market.markPrice;
  if (!reduceOnly && cmp(mul(quantity, valuedAt), def.minNotional) < 0) throw errors.minNotional(def.minNotional);
  if (reduceOnly && cmp(openingQuantity(positionOf(account, def.symbol), side, quantity), quantity) === 0) {
    throw errors.reduceOnlyRejected();
  }
  return submitOrder(state, account, {
    clientOrderId,
    symbol: def.symbol,
    side,
    type,
    timeInForce,
    price,
    origQty: quantity,
    reduceOnly,
    closePosition: false,
  });
}

/** The order named by orderId or origClientOrderId (the latest one when a client id was reused). */
export function findOrder(account: SimAccount, params: RequestParams): SimOrder {
  const symbol = params.required("symbol");
  const orderId = params.int("orderId");
  const clientId = params.get("origClientOrderId");
  if (orderId === undefined && clientId === undefined) throw errors.eitherParam("orderId", "origClientOrderId");
  const order = account.orders.findLast((o) =>
    o.symbol === symbol && (orderId !== undefined ? o.orderId === orderId : o.clientOrderId === clientId)
  );
  if (!order) throw errors.noSuchOrder();
  return order;
}

function isOpen(order: SimOrder): boolean {
  return order.status === "NEW" || order.status === "PARTIALLY_FILLED";
}

/** DELETE /fapi/v1/order. */
export function cancelOrder(state: SimState, account: SimAccount, params: RequestParams): SimOrder {
  let order: SimOrder;
  try {
    order = findOrder(account, params);
  } catch (error) {
    throw (error as { code?: number }).code === -2013 ? errors.cancelRejected() : error;
  }
  if (!isOpen(order)) throw errors.cancelRejected();
  cancel(state, account, order);
  return order;
}

function cancel(state: SimState, account: SimAccount, order: SimOrder): void {
  order.status = "CANCELED";
  order.reservedMargin = "0";
  order.updateTime = state.now();
  emitAccountEvent(state, account, { kind: "order", order, execution: "CANCELED" });
}

/** DELETE /fapi/v1/allOpenOrders: every open order of `symbol`. */
export function cancelOpenOrders(state: SimState, account: SimAccount, symbol: string): void {
  for (const order of openOrders(account, symbol)) cancel(state, account, order);
}

/** PUT /fapi/v1/order: new price and quantity for a resting LIMIT order, re-matched at once. */
export function amendOrder(state: SimState, account: SimAccount, params: RequestParams): SimOrder {
  const market = marketOf(state, params);
  const side = sideOf(params);
  const order = findOrder(account, params);
  if (!isOpen(order)) throw errors.noSuchOrder();
  if (order.type !== "LIMIT") throw errors.limitOnly();
  if (order.side !== side) throw errors.invalidParam("side");
  const quantity = params.requiredDecimal("quantity");
  const price = params.requiredDecimal("price");
  checkQuantity(market.def, quantity, false);
  checkPriceFilter(market.def, price);
  if (cmp(quantity, order.origQty) === 0 && cmp(price, order.price) === 0) throw errors.sameOrder();
  if (cmp(quantity, order.executedQty) <= 0) throw errors.invalidParam("quantity");
  const held = order.reservedMargin;
  order.reservedMargin = "0";
  const remaining = sub(quantity, order.executedQty);
  const opening = order.reduceOnly ? "0" : openingQuantity(positionOf(account, order.symbol), side, remaining);
  const margin = marginFor(opening, price, symbolConfigOf(account, order.symbol).leverage);
  if (cmp(margin, availableBalance(state, account)) > 0) {
    order.reservedMargin = held;
    throw errors.marginInsufficient();
  }
  order.origQty = quantity;
  order.price = price;
  order.updateTime = state.now();
  emitAccountEvent(state, account, { kind: "order", order, execution: "AMENDMENT" });
  const crosses = side === "BUY" ? cmp(price, market.ask) >= 0 : cmp(price, market.bid) <= 0;
  if (crosses) fillOrder(state, account, order, touch(market, side), false);
  else order.reservedMargin = margin;
  return order;
}

/** Resting LIMIT orders of `symbol` that the new mark price went through fill at their own price as maker. */
export function matchRestingOrders(state: SimState, symbol: string): void {
  const mark = state.markets.get(symbol)!.markPrice;
  for (const account of state.accounts.values()) {
    for (const order of openOrders(account, symbol)) {
      if (order.type !== "LIMIT") continue;
      const reached = order.side === "BUY" ? cmp(mark, order.price) <= 0 : cmp(mark, order.price) >= 0;
      if (reached) fillOrder(state, account, order, order.price, true);
    }
  }
}
