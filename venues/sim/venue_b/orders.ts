/**
 * The simulator's L1 trading actions: order (with the venue's per-order
 * checks and exact error texts), cancel / cancelByCloid, modify, leverage and
 * the dead man's switch.
 */
import { abs, add, cmp, decimalPlaces, div, isZero, max, min, mul, significantDigits, sub } from "../../decimal.ts";
import type { HexAddress } from "../../types.ts";
import { MAX_PERP_BUILDER_FEE, MIN_ORDER_VALUE_USD } from "../../venue_b/constants.ts";
import type { WireOrder, WireOrderResult } from "../../venue_b/wire.ts";
import { publishOrder } from "./feed.ts";
import { crosses, executeTaker } from "./matching.ts";
import {
  availableMargin,
  leverageOf,
  type SimMarket,
  type SimOrder,
  type SimState,
  type SimUser,
  wire,
} from "./state.ts";

type Builder = { b: HexAddress; f: number } | null;

function validPrice(px: string, market: SimMarket): boolean {
  const integer = decimalPlaces(px) === 0;
  return (integer || significantDigits(px) <= 5) && decimalPlaces(px) <= 6 - market.szDecimals;
}

/** Per-order checks in the venue's order; the first failure is the answer. */
function refusal(state: SimState, user: SimUser, wireOrder: WireOrder): string | null {
  const market = state.markets[wireOrder.a];
  if (!market) return "Order has invalid asset.";
  const trigger = "trigger" in wireOrder.t ? wireOrder.t.trigger : null;
  if (cmp(wireOrder.p, "0") <= 0 || (trigger && cmp(trigger.triggerPx, "0") <= 0)) return "Order has invalid price.";
  if (!validPrice(wireOrder.p, market) || (trigger && !validPrice(trigger.triggerPx, market))) {
    return "Price must be divisible by tick size.";
  }
  if (isZero(wireOrder.s)) return "Order has zero size.";
  if (decimalPlaces(wireOrder.s) > market.szDecimals) return "Order has invalid size.";
  if (cmp(abs(sub(wireOrder.p, market.markPx)), mul(market.markPx, "0.8")) > 0) {
    return "Order price cannot be more than 80% away from the reference price";
  }
  if (wireOrder.c && user.cloids.has(wireOrder.c)) return state.duplicateCloidText;
  const position = user.positions.get(market.coin)?.szi ?? "0";
  const grows = isZero(position) || (cmp(position, "0") > 0) === wireOrder.b;
  if (wireOrder.r && grows) return "Reduce only order would increase position.";
  if (wireOrder.r) return null;
  const reference = trigger
    ? trigger.triggerPx
    : wireOrder.b
    ? min(wireOrder.p, market.ask)
    : max(wireOrder.p, market.bid);
  if (cmp(mul(wireOrder.s, reference), MIN_ORDER_VALUE_USD) < 0) return "Order must have minimum value of $10.";
  const growth = grows ? wireOrder.s : sub(wireOrder.s, abs(position));
  const required = cmp(growth, "0") > 0 ? div(mul(growth, reference), leverageOf(user, market).value, 6) : "0";
  if (cmp(required, availableMargin(state, user)) > 0) return "Insufficient margin to place order.";
  return null;
}

/** Records a placed order (resting, or already done) and tells the stream its status. */
function keep(state: SimState, user: SimUser, order: SimOrder) {
  state.orders.set(order.oid, order);
  if (order.cloid) user.cloids.set(order.cloid, order.oid);
  publishOrder(state, order);
}

function withCloid<T extends object>(body: T, order: SimOrder): T & { cloid?: HexAddress } {
  return order.cloid ? { ...body, cloid: order.cloid } : body;
}

/** Places one order; returns its status entry. */
function placeOne(state: SimState, user: SimUser, wireOrder: WireOrder, builder: Builder): WireOrderResult {
  const error = refusal(state, user, wireOrder);
  if (error) return { error };
  const market = state.markets[wireOrder.a];
  const now = state.now();
  const order: SimOrder = {
    oid: state.counters.oid++,
    user: user.address,
    asset: wireOrder.a,
    isBuy: wireOrder.b,
    limitPx: wireOrder.p,
    sz: wireOrder.s,
    origSz: wireOrder.s,
    reduceOnly: wireOrder.r,
    tif: "limit" in wireOrder.t ? wireOrder.t.limit.tif : null,
    trigger: "trigger" in wireOrder.t ? wireOrder.t.trigger : null,
    cloid: wireOrder.c ?? null,
    // Builder fees apply to orders that open exposure; reduce-only orders never carry one.
    builder: wireOrder.r ? null : builder,
    timestamp: now,
    status: "open",
    statusTimestamp: now,
  };
  if (order.trigger) {
    keep(state, user, order);
    return { resting: withCloid({ oid: order.oid }, order) };
  }
  if (!crosses(market, order)) {
    if (order.tif === "Ioc") return { error: "Order could not immediately match against any resting orders." };
    keep(state, user, order);
    return { resting: withCloid({ oid: order.oid }, order) };
  }
  if (order.tif === "Alo") {
    return { error: `Post only order would have immediately matched, bbo was ${wire(market.bid)}@${wire(market.ask)}` };
  }
  const fills = executeTaker(state, user, order);
  if (fills.length === 0 && order.tif === "Ioc") {
    return { error: "Order could not immediately match against any resting orders." };
  }
  const filled = sub(order.origSz, order.sz);
  let notional = "0";
  for (const fill of fills) notional = add(notional, mul(fill.px, fill.sz));
  // An IOC remainder is cancelled; a GTC remainder rests and the reply says so.
  if (!isZero(order.sz) && order.tif === "Gtc") {
    keep(state, user, order);
    return { resting: withCloid({ oid: order.oid }, order) };
  }
  order.status = isZero(order.sz) ? "filled" : "canceled";
  keep(state, user, order);
  return { filled: withCloid({ totalSz: wire(filled), avgPx: wire(div(notional, filled, 8)), oid: order.oid }, order) };
}

/** The `order` action. A string is a whole-action refusal. */
export function placeOrders(
  state: SimState,
  user: SimUser,
  action: { orders: WireOrder[]; builder?: { b: HexAddress; f: number } },
): WireOrderResult[] | string {
  if (action.orders.length === 0) return "Order list cannot be empty.";
  const builder = action.builder ?? null;
  if (builder) {
    if (builder.f > MAX_PERP_BUILDER_FEE) return "Builder fee is too high.";
    const approved = user.builderApprovals.get(builder.b);
    if (approved === undefined || builder.f > approved) return "Builder fee has not been approved.";
  }
  return action.orders.map((order) => placeOne(state, user, order, builder));
}

function cancelOne(
  state: SimState,
  user: SimUser,
  oid: number | undefined,
  asset: number,
): "success" | { error: string } {
  const order = oid === undefined ? undefined : state.orders.get(oid);
  if (!order || order.user !== user.address || order.asset !== asset || order.status !== "open") {
    return { error: "Order was never placed, already canceled, or filled." };
  }
  order.status = "canceled";
  order.statusTimestamp = state.now();
  publishOrder(state, order);
  return "success";
}

/** The `cancel` action (by oid). */
export function cancelOrders(state: SimState, user: SimUser, cancels: { a: number; o: number }[]) {
  return cancels.map((cancel) => cancelOne(state, user, cancel.o, cancel.a));
}

/** The `cancelByCloid` action. */
export function cancelOrdersByCloid(state: SimState, user: SimUser, cancels: { asset: number; cloid: HexAddress }[]) {
  return cancels.map((cancel) => cancelOne(state, user, user.cloids.get(cancel.cloid), cancel.asset));
}

/**
 * modify: the old order is cancelled and the new one placed under a new oid,
 * keeping the cloid and the builder. Without `a: true` (SDK modify.d.ts: "the
 * default behavior requires the new order to be a non-trigger order with TIF
 * `Alo`, or a non-executable order with TIF `Gtc`"; the venue's docs: such a
 * GTC's TIF "is then overridden to ALO") a GTC becomes an ALO: one that would
 * take liquidity is refused as ALO is, the old order left open, and one that
 * rests reports `Alo`; nothing is placed when the old order is no longer open.
 * With `a: true` ("Always place the resulting order, even if the cancel did
 * not succeed") it is placed as any order, taking liquidity as its TIF says.
 */
export function modifyOrder(
  state: SimState,
  user: SimUser,
  modify: { oid: number | HexAddress; order: WireOrder; a?: true },
): WireOrderResult {
  const oid = typeof modify.oid === "number" ? modify.oid : user.cloids.get(modify.oid);
  const found = oid === undefined ? undefined : state.orders.get(oid);
  const current = found && found.user === user.address && found.status === "open" ? found : undefined;
  if (!current && !modify.a) return { error: "Cannot modify canceled or filled order" };
  const asGtc = "limit" in modify.order.t && modify.order.t.limit.tif === "Gtc";
  const replacement: WireOrder = asGtc && !modify.a ? { ...modify.order, t: { limit: { tif: "Alo" } } } : modify.order;
  if (current) {
    current.status = "canceled";
    current.statusTimestamp = state.now();
    if (current.cloid) user.cloids.delete(current.cloid);
  }
  const result = placeOne(state, user, replacement, current?.builder ?? null);
  if (!current) return result;
  if ("error" in (result as object)) {
    current.status = "open";
    if (current.cloid) user.cloids.set(current.cloid, current.oid);
  } else {
    publishOrder(state, current);
  }
  return result;
}

/** The `updateLeverage` action; the margin type cannot change under an open position. */
export function updateLeverage(
  state: SimState,
  user: SimUser,
  action: { asset: number; isCross: boolean; leverage: number },
): string | null {
  const market = state.markets[action.asset];
  if (!market) return "Invalid asset.";
  if (action.leverage < 1 || action.leverage > market.maxLeverage) return "Invalid leverage value.";
  const type = action.isCross ? "cross" : "isolated";
  const position = user.positions.get(market.coin);
  if (position && leverageOf(user, market).type !== type) return "Cannot switch leverage type with open position.";
  user.leverage.set(market.coin, { type, value: action.leverage });
  return null;
}

/** Fires due dead man's switches: every open order of that user is cancelled. */
export function runScheduledCancels(state: SimState): void {
  const now = state.now();
  for (const user of state.users.values()) {
    if (user.scheduledCancel === null || user.scheduledCancel > now) continue;
    user.scheduledCancel = null;
    for (const order of state.orders.values()) {
      if (order.user === user.address && order.status === "open") {
        order.status = "scheduledCancel";
        order.statusTimestamp = now;
        publishOrder(state, order);
      }
    }
  }
}
