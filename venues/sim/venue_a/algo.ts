/**
 * Conditional (algo) orders, the venue's home for stop and take-profit since
 * Dec 2025. They wait without any margin check (NEW). When the mark price
 * reaches the trigger they go TRIGGERING (handed to the matching engine),
 * TRIGGERED (their MARKET order is in the engine; REJECTED instead when the
 * engine refuses it, e.g. for margin) and FINISHED once that order is done,
 * filled or not (`actualQty`). By default all of it happens within the market
 * move that fired them; `/_control/algo-hold` stops fired orders at TRIGGERING
 * or TRIGGERED so the intermediate states can be observed.
 */
import { abs, cmp, div, isZero, toFixed } from "../../decimal.ts";
import {
  checkClientId,
  checkPositionSide,
  checkPriceFilter,
  checkQuantity,
  marketOf,
  releaseOrder,
  sideOf,
  submitOrder,
} from "./engine.ts";
import { errors, type SimError } from "./errors.ts";
import type { RequestParams } from "./params.ts";
import {
  emitAccountEvent,
  firedAlgoOrders,
  openAlgoOrders,
  positionOf,
  type SimAccount,
  type SimAlgoOrder,
  type SimOrder,
  type SimState,
} from "./state.ts";

const ALGO_TYPES = ["STOP_MARKET", "TAKE_PROFIT_MARKET"] as const;
const WORKING_TYPES = ["MARK_PRICE", "CONTRACT_PRICE"] as const;

/** STOP fires when the price moves against the position; TAKE_PROFIT when it moves in favour. */
function fires(algo: Pick<SimAlgoOrder, "orderType" | "side" | "triggerPrice">, price: string): boolean {
  const direction = cmp(price, algo.triggerPrice);
  const upward = (algo.orderType === "STOP_MARKET") === (algo.side === "BUY");
  return upward ? direction >= 0 : direction <= 0;
}

/** POST /fapi/v1/algoOrder. */
export function placeAlgoOrder(state: SimState, account: SimAccount, params: RequestParams): SimAlgoOrder {
  const algoType = params.required("algoType");
  if (algoType !== "CONDITIONAL") throw errors.invalidParam("algoType");
  const market = marketOf(state, params);
  const side = sideOf(params);
  const orderType = params.oneOf("type", ALGO_TYPES, errors.badOrderType);
  if (!orderType) throw errors.mandatory("type");
  checkPositionSide(account, params);
  const closePosition = params.bool("closePosition") ?? false;
  const quantity = params.decimal("quantity");
  if (closePosition && quantity !== undefined) throw errors.quantityWithClosePosition();
  if (closePosition && params.get("reduceOnly") !== undefined) throw errors.notRequired("reduceOnly");
  if (!closePosition) {
    if (quantity === undefined) throw errors.mandatory("quantity");
    checkQuantity(market.def, quantity, true);
  }
  const triggerPrice = params.requiredDecimal("triggerPrice");
  checkPriceFilter(market.def, triggerPrice);
  const workingType = params.oneOf("workingType", WORKING_TYPES, () => errors.invalidParam("workingType")) ??
    "CONTRACT_PRICE";
  if (openAlgoOrders(account).length >= state.openCaps.conditional) throw errors.maxStopOrders();
  // A fired order that is not done yet still holds its client id, like a waiting one.
  const clientAlgoId = checkClientId(
    params.get("clientAlgoId"),
    (id) => [...openAlgoOrders(account), ...firedAlgoOrders(account)].some((o) => o.clientAlgoId === id),
  );
  const time = state.now();
  const algo: SimAlgoOrder = {
    algoId: ++state.ids.algo,
    clientAlgoId,
    symbol: market.def.symbol,
    side,
    orderType,
    quantity: quantity ?? "0",
    triggerPrice,
    workingType,
    closePosition,
    reduceOnly: params.bool("reduceOnly") ?? false,
    priceProtect: params.bool("priceProtect") ?? false,
    algoStatus: "NEW",
    createTime: time,
    updateTime: time,
    triggerTime: 0,
    actualOrderId: null,
    actualPrice: "0",
    actualQty: "0",
  };
  account.algoOrders.push(algo);
  emitAccountEvent(state, account, { kind: "algo", algo });
  return algo;
}

/**
 * A STOP_MARKET / TAKE_PROFIT_MARKET whose trigger the price has already
 * reached is not refused: the venue documents -2021 "Order would immediately
 * trigger." for TRAILING_STOP_MARKET only (New Algo Order page, 2026-05-28
 * scrape) and the trigger rule as a condition on the latest price, so the
 * algo service takes the order (NEW, the placement's answer) and fires it on
 * its first check. Called right after the answer is taken.
 */
export function fireIfReached(state: SimState, account: SimAccount, algo: SimAlgoOrder): void {
  // The simulator has one price per symbol, so CONTRACT_PRICE and MARK_PRICE both watch the mark.
  if (algo.algoStatus !== "NEW" || !fires(algo, state.markets.get(algo.symbol)!.markPrice)) return;
  algo.triggerTime = state.now();
  setStatus(state, account, algo, "TRIGGERING");
  advance(state, account, algo);
}

/** Moves `algo` to `status` now and says so on the stream (`reason`: ALGO_UPDATE's `rm`). */
function setStatus(
  state: SimState,
  account: SimAccount,
  algo: SimAlgoOrder,
  status: SimAlgoOrder["algoStatus"],
  reason?: string,
): void {
  algo.algoStatus = status;
  algo.updateTime = state.now();
  emitAccountEvent(state, account, { kind: "algo", algo, reason });
}

/** The algo order named by algoId or clientAlgoId (the latest one for a reused client id). */
export function findAlgoOrder(account: SimAccount, params: RequestParams): SimAlgoOrder {
  const algoId = params.int("algoId");
  const clientAlgoId = params.get("clientAlgoId");
  if (algoId === undefined && clientAlgoId === undefined) throw errors.eitherParam("algoId", "clientAlgoId");
  const algo = account.algoOrders.findLast((o) =>
    algoId !== undefined ? o.algoId === algoId : o.clientAlgoId === clientAlgoId
  );
  if (!algo) throw errors.noSuchOrder();
  return algo;
}

/**
 * DELETE /fapi/v1/algoOrder: only a waiting order can be cancelled. One that
 * is being handed to the engine answers -4117; one already there or done -2011.
 */
export function cancelAlgoOrder(state: SimState, account: SimAccount, params: RequestParams): SimAlgoOrder {
  let algo: SimAlgoOrder;
  try {
    algo = findAlgoOrder(account, params);
  } catch (error) {
    throw (error as SimError).code === -2013 ? errors.cancelRejected() : error;
  }
  if (algo.algoStatus === "TRIGGERING") throw errors.stopOrderTriggering();
  if (algo.algoStatus !== "NEW") throw errors.cancelRejected();
  setStatus(state, account, algo, "CANCELED");
  return algo;
}

/** DELETE /fapi/v1/algoOpenOrders: every waiting algo order of `symbol`. */
export function cancelOpenAlgoOrders(state: SimState, account: SimAccount, symbol: string): void {
  for (const algo of openAlgoOrders(account, symbol)) setStatus(state, account, algo, "CANCELED");
}

/**
 * TRIGGERING -> TRIGGERED: the MARKET order goes to the engine, which checks
 * margin only now. A refusal there is REJECTED; nothing left to close for a
 * reduce-only or close-position order is the system cancelling it (EXPIRED).
 * A reduce-only order goes with its own quantity: the engine, not the algo
 * service, cuts it to the position (see `fillOrder`), so a stop larger than
 * what is left FINISHES with `actualQty` below its `quantity`, its order FILLED.
 */
function handToEngine(state: SimState, account: SimAccount, algo: SimAlgoOrder): void {
  const position = positionOf(account, algo.symbol);
  const reduces = !isZero(position.amt) && position.amt.startsWith("-") === (algo.side === "BUY");
  const closing = reduces ? abs(position.amt) : "0";
  const quantity = algo.closePosition ? closing : algo.quantity;
  if ((algo.closePosition || algo.reduceOnly) && isZero(closing)) {
    return setStatus(state, account, algo, "EXPIRED", "Reduce Only reject");
  }
  let order: SimOrder;
  try {
    order = submitOrder(state, account, {
      clientOrderId: `algo_${algo.algoId}`,
      symbol: algo.symbol,
      side: algo.side,
      type: "MARKET",
      timeInForce: "GTC",
      price: "0",
      origQty: quantity,
      reduceOnly: algo.reduceOnly || algo.closePosition,
      closePosition: algo.closePosition,
    }, { hold: true });
  } catch (error) {
    return setStatus(state, account, algo, "REJECTED", (error as SimError).message);
  }
  algo.actualOrderId = order.orderId;
  setStatus(state, account, algo, "TRIGGERED");
}

/** TRIGGERED -> FINISHED: the engine runs the order; what it executed is `actualQty` (zero if it was cancelled). */
function finish(state: SimState, account: SimAccount, algo: SimAlgoOrder): void {
  const order = account.orders.find((o) => o.orderId === algo.actualOrderId)!;
  releaseOrder(state, account, order);
  algo.actualQty = toFixed(order.executedQty, state.markets.get(algo.symbol)!.def.quantityPrecision);
  algo.actualPrice = isZero(order.executedQty) ? "0" : div(order.cumQuote, order.executedQty, 8);
  setStatus(state, account, algo, "FINISHED");
}

/** Moves a fired algo order on as far as the hold allows. */
function advance(state: SimState, account: SimAccount, algo: SimAlgoOrder): void {
  if (algo.algoStatus === "TRIGGERING" && state.algoHold !== "TRIGGERING") handToEngine(state, account, algo);
  if (algo.algoStatus === "TRIGGERED" && state.algoHold === null) finish(state, account, algo);
}

/** Fires every waiting algo order of `symbol` that the current mark price reaches. */
export function triggerAlgoOrders(state: SimState, symbol: string): void {
  const mark = state.markets.get(symbol)!.markPrice;
  for (const account of state.accounts.values()) {
    for (const algo of openAlgoOrders(account, symbol)) {
      if (fires(algo, mark)) fireIfReached(state, account, algo);
    }
  }
}

/** Sets where fired algo orders stop and moves the ones already held as far as the new setting allows. */
export function holdAlgoOrders(state: SimState, hold: SimState["algoHold"]): number {
  state.algoHold = hold;
  let held = 0;
  for (const account of state.accounts.values()) {
    for (const algo of firedAlgoOrders(account)) {
      advance(state, account, algo);
      if (algo.algoStatus === "TRIGGERING" || algo.algoStatus === "TRIGGERED") held++;
    }
  }
  return held;
}
