/**
 * Orders and protections on VENUE_A.
 *
 * Placement sends the order and nothing else: no look-up of the client order
 * id first, no mark-price read. The domain records each intent before sending
 * and never resends one, and an uncertain outcome (OUTCOME_UNKNOWN) is settled
 * by querying the id later (`getOrder`), so a read before every placement
 * would only cost latency and weight. The venue refuses a newClientOrderId
 * only while an order with it is still open (-4116); that race is answered
 * with the existing order. A filled or cancelled id would be placed again, which
 * is why callers must not resend an id they already sent.
 *
 * Conditional orders (stop / take-profit) live on the algo endpoints since the
 * venue's Dec 2025 migration; the regular endpoint answers -4120 for them.
 * Once one has fired (TRIGGERING / TRIGGERED) it can no longer be cancelled,
 * and a cancel never reports it as CANCELED.
 *
 * The one read before a placement: the algo service takes a STOP_MARKET or
 * TAKE_PROFIT_MARKET whose trigger the price has already passed and fires it
 * at once (it documents -2021 for trailing stops only), where our callers
 * expect such an order refused (TRIGGER_CROSSED) and decide themselves whether
 * to execute it now. So a conditional placement first reads the symbol's mark
 * price (premiumIndex, weight 1, one read shared by the placements waiting for
 * it) and refuses a crossed trigger locally.
 */
import { cmp, isDecimal } from "../decimal.ts";
import { protectionOrder } from "../protection.ts";
import {
  type ModifyOrderRequest,
  type Order,
  type OrderType,
  type PlaceOrderRequest,
  type ProtectionRequest,
  VenueError,
} from "../types.ts";
import type { ApiKeyPair } from "./client.ts";
import { CLIENT_ORDER_ID_PATTERN, PATHS, PROVIDER_ID, WEIGHTS } from "./constants.ts";
import { type AdapterContext, hasVenueCode, marketRules } from "./context.ts";
import { CODES, localError } from "./errors.ts";
import { type MarketRules, toOrder, toProtectionOrder } from "./mappers.ts";
import { prepareOrder } from "./order_rules.ts";
import type { WireAlgoOrder, WireOrder } from "./wire.ts";

const TIME_IN_FORCE = { GTC: "GTC", IOC: "IOC", FOK: "FOK", POST_ONLY: "GTX" } as const;

function checkClientOrderId(clientOrderId: string): void {
  if (!CLIENT_ORDER_ID_PATTERN.test(clientOrderId)) {
    throw localError(
      "INVALID_ORDER",
      `Client order id "${clientOrderId}" must be 1-36 characters of letters, digits and . : / _ -`,
    );
  }
}

function isConditional(type: OrderType): boolean {
  return type === "STOP_MARKET" || type === "TAKE_PROFIT_MARKET";
}

/** The regular order with this client id, or null when the venue does not know it (-2013). */
export async function findOrder(
  ctx: AdapterContext,
  keys: ApiKeyPair,
  symbol: string,
  clientOrderId: string,
): Promise<WireOrder | null> {
  try {
    return await ctx.fapi.request<WireOrder>({
      method: "GET",
      path: PATHS.order,
      params: { symbol, origClientOrderId: clientOrderId },
      weight: WEIGHTS.order,
      auth: keys,
      action: "Querying the order",
    });
  } catch (error) {
    if (hasVenueCode(error, CODES.noSuchOrder)) return null;
    throw error;
  }
}

/** The algo (conditional) order with this client id, or null. */
export async function findAlgoOrder(
  ctx: AdapterContext,
  keys: ApiKeyPair,
  clientAlgoId: string,
): Promise<WireAlgoOrder | null> {
  try {
    return await ctx.fapi.request<WireAlgoOrder>({
      method: "GET",
      path: PATHS.algoOrder,
      params: { clientAlgoId },
      weight: WEIGHTS.order,
      auth: keys,
      action: "Querying the conditional order",
    });
  } catch (error) {
    if (hasVenueCode(error, CODES.noSuchOrder)) return null;
    throw error;
  }
}

/**
 * MARKET orders are checked against the quantity filters only: their notional
 * is valued at the mark price, which the venue checks itself (-4164), so no
 * mark-price read is spent before sending.
 */
export async function placeOrder(ctx: AdapterContext, keys: ApiKeyPair, order: PlaceOrderRequest): Promise<Order> {
  checkClientOrderId(order.clientOrderId);
  const rules = await marketRules(ctx, order.symbol);
  if (isConditional(order.type)) return placeConditional(ctx, keys, rules, order);
  const prepared = prepareOrder(rules, order);
  try {
    const placed = await ctx.fapi.request<WireOrder>({
      method: "POST",
      path: PATHS.order,
      params: {
        symbol: order.symbol,
        side: order.side,
        type: order.type,
        quantity: prepared.quantity,
        price: prepared.price,
        timeInForce: order.type === "LIMIT" ? TIME_IN_FORCE[order.timeInForce ?? "GTC"] : undefined,
        reduceOnly: order.reduceOnly ? "true" : undefined,
        newClientOrderId: order.clientOrderId,
        newOrderRespType: "RESULT",
      },
      weight: WEIGHTS.orderMutation,
      mutation: true,
      auth: keys,
      countsOrder: true,
      deadline: order.deadline,
      action: "Placing the order",
    });
    return toOrder(placed);
  } catch (error) {
    // -4116: an open order already has this id (a concurrent send of the same intent); answer that order.
    if (!hasVenueCode(error, CODES.duplicatedClientOrderId)) throw error;
    const raced = await findOrder(ctx, keys, order.symbol, order.clientOrderId);
    if (raced) return toOrder(raced);
    throw error;
  }
}

async function placeConditional(
  ctx: AdapterContext,
  keys: ApiKeyPair,
  rules: MarketRules,
  order: Pick<
    PlaceOrderRequest,
    "side" | "type" | "quantity" | "triggerPrice" | "reduceOnly" | "clientOrderId" | "deadline"
  >,
): Promise<Order> {
  const prepared = prepareOrder(rules, order);
  await refuseCrossedTrigger(ctx, rules.symbol, order.type, order.side, prepared.triggerPrice!);
  try {
    const placed = await ctx.fapi.request<WireAlgoOrder>({
      method: "POST",
      path: PATHS.algoOrder,
      params: {
        algoType: "CONDITIONAL",
        symbol: rules.symbol,
        side: order.side,
        type: order.type,
        quantity: prepared.quantity,
        triggerPrice: prepared.triggerPrice,
        // Mark price is what liquidation uses and is harder to spike than the last trade.
        workingType: "MARK_PRICE",
        reduceOnly: order.reduceOnly ? "true" : undefined,
        clientAlgoId: order.clientOrderId,
        newOrderRespType: "RESULT",
      },
      weight: WEIGHTS.orderMutation,
      mutation: true,
      auth: keys,
      countsOrder: true,
      deadline: order.deadline,
      action: "Placing the conditional order",
    });
    return toProtectionOrder(placed);
  } catch (error) {
    // -4116: a waiting or fired algo order already has this id; answer that order.
    if (!hasVenueCode(error, CODES.duplicatedClientOrderId)) throw error;
    const raced = await findAlgoOrder(ctx, keys, order.clientOrderId);
    if (raced) return toProtectionOrder(raced);
    throw error;
  }
}

/**
 * TRIGGER_CROSSED, without sending anything, when the mark price has already
 * reached `triggerPrice` by the venue's rule (New Algo Order: STOP BUY fires
 * at price >= trigger, SELL at <=; TAKE_PROFIT the other way round). The
 * check is best-effort: when the mark price cannot be read (the weight budget
 * is spent, the read fails) the order is sent unchecked rather than left
 * unplaced, since order placement itself costs no weight; and the price may
 * still cross between this read and the venue's first check. Either way the
 * venue then fires the order at once.
 */
async function refuseCrossedTrigger(
  ctx: AdapterContext,
  symbol: string,
  type: OrderType,
  side: PlaceOrderRequest["side"],
  triggerPrice: string,
): Promise<void> {
  let mark: string;
  try {
    mark = await ctx.markPrice(symbol);
  } catch {
    return;
  }
  if (!isDecimal(mark)) return;
  const direction = cmp(mark, triggerPrice);
  const upward = (type === "STOP_MARKET") === (side === "BUY");
  if (upward ? direction < 0 : direction > 0) return;
  throw localError(
    "TRIGGER_CROSSED",
    `Trigger price "${triggerPrice}" is already reached by the mark price "${mark}"; the venue would fire the order at once`,
  );
}

/**
 * Regular orders first, then conditional ones, so an unclear protection
 * placement can be resolved too. A query by id does not find an order created
 * over 90 days ago, even one still open (Query Order / Query Algo Order:
 * "these orders will not be found"), so before answering "unknown" the
 * symbol's open lists are read (weight 1 each): a stop resting for months is
 * still working, and must never be taken for one the venue never received.
 * What neither finds is unknown to the venue, or ended and forgotten (over 90
 * days, or cancelled or expired without a fill over 3 days ago).
 */
export async function getOrder(
  ctx: AdapterContext,
  keys: ApiKeyPair,
  symbol: string,
  clientOrderId: string,
): Promise<Order | null> {
  const regular = await findOrder(ctx, keys, symbol, clientOrderId);
  if (regular) return toOrder(regular);
  const conditional = await findAlgoOrder(ctx, keys, clientOrderId);
  if (conditional) return conditional.symbol === symbol ? toProtectionOrder(conditional) : null;
  const [open, waiting] = await Promise.all([
    ctx.fapi.request<WireOrder[]>({
      method: "GET",
      path: PATHS.openOrders,
      params: { symbol },
      weight: WEIGHTS.openOrdersSymbol,
      auth: keys,
      action: "Listing open orders",
    }),
    listProtections(ctx, keys, symbol),
  ]);
  const listed = open.find((order) => order.clientOrderId === clientOrderId);
  if (listed) return toOrder(listed);
  return waiting.find((order) => order.clientOrderId === clientOrderId) ?? null;
}

/**
 * Cancelling an order that already reached a final state answers that state
 * instead of failing. A conditional order that fired meanwhile is answered as
 * it stands (working), never as CANCELED.
 */
export async function cancelOrder(
  ctx: AdapterContext,
  keys: ApiKeyPair,
  symbol: string,
  clientOrderId: string,
): Promise<Order> {
  try {
    const cancelled = await ctx.fapi.request<WireOrder>({
      method: "DELETE",
      path: PATHS.order,
      params: { symbol, origClientOrderId: clientOrderId },
      weight: WEIGHTS.order,
      mutation: true,
      auth: keys,
      action: "Cancelling the order",
    });
    return toOrder(cancelled);
  } catch (error) {
    if (!hasVenueCode(error, CODES.cancelRejected, CODES.noSuchOrder)) throw error;
    const order = await getOrder(ctx, keys, symbol, clientOrderId);
    if (order?.status === "TRIGGER_PENDING") {
      const outcome = await cancelAlgoOrder(ctx, keys, clientOrderId);
      return outcome.cancelled ? { ...order, status: "CANCELED" } : outcome.order;
    }
    if (order) return order;
    throw localError("INVALID_ORDER", `Order "${clientOrderId}" does not exist on "${symbol}"`);
  }
}

export async function modifyOrder(ctx: AdapterContext, keys: ApiKeyPair, request: ModifyOrderRequest): Promise<Order> {
  const rules = await marketRules(ctx, request.symbol);
  const current = await findOrder(ctx, keys, request.symbol, request.clientOrderId);
  if (!current) throw localError("INVALID_ORDER", `Order "${request.clientOrderId}" does not exist`);
  if (current.type !== "LIMIT") throw localError("INVALID_ORDER", "Only limit orders can be modified");
  const prepared = prepareOrder(rules, {
    side: current.side,
    type: "LIMIT",
    quantity: request.quantity,
    price: request.price,
    reduceOnly: current.reduceOnly,
  });
  try {
    const amended = await ctx.fapi.request<WireOrder>({
      method: "PUT",
      path: PATHS.order,
      params: {
        symbol: request.symbol,
        origClientOrderId: request.clientOrderId,
        side: current.side,
        quantity: prepared.quantity,
        price: prepared.price,
      },
      weight: WEIGHTS.orderMutation,
      mutation: true,
      auth: keys,
      countsOrder: true,
      action: "Modifying the order",
    });
    return toOrder(amended);
  } catch (error) {
    // -5027: the order already has this price and quantity, which is what was asked.
    if (hasVenueCode(error, CODES.sameOrder)) return toOrder(current);
    throw error;
  }
}

/** Protections are reduce-only with an explicit quantity (the venue forbids quantity with closePosition). */
export async function placeProtection(
  ctx: AdapterContext,
  keys: ApiKeyPair,
  request: ProtectionRequest,
): Promise<Order> {
  checkClientOrderId(request.clientOrderId);
  const rules = await marketRules(ctx, request.symbol);
  return placeConditional(ctx, keys, rules, protectionOrder(request));
}

/** What a cancel of an algo order came to: cancelled now, or the order as it stands when it could not be. */
type AlgoCancel = { cancelled: true } | { cancelled: false; order: Order; refusal: VenueError };

/** A fired order is still in the venue's hands: not cancellable, not done. */
function stillWorking(order: Order): boolean {
  return order.status === "NEW" || order.status === "PARTIALLY_FILLED";
}

async function cancelAlgoOrder(ctx: AdapterContext, keys: ApiKeyPair, clientAlgoId: string): Promise<AlgoCancel> {
  try {
    await ctx.fapi.request({
      method: "DELETE",
      path: PATHS.algoOrder,
      params: { clientAlgoId },
      weight: WEIGHTS.order,
      mutation: true,
      auth: keys,
      action: "Cancelling the conditional order",
    });
    return { cancelled: true };
  } catch (error) {
    // -4117: it fired and is being handed to the engine; -2011: it is no longer waiting (fired, done or unknown).
    if (!hasVenueCode(error, CODES.cancelRejected, CODES.noSuchOrder, CODES.stopOrderTriggering)) throw error;
    const current = await findAlgoOrder(ctx, keys, clientAlgoId);
    if (!current) throw localError("INVALID_ORDER", `Conditional order "${clientAlgoId}" does not exist`);
    return { cancelled: false, order: toProtectionOrder(current), refusal: error };
  }
}

/**
 * Cancelling a protection that already finished or was cancelled succeeds; an
 * unknown one is INVALID_ORDER. One that has fired and is still working
 * (TRIGGERING / TRIGGERED) cannot be cancelled any more: that is INVALID_ORDER
 * too, so no caller records it as cancelled while its order may still fill.
 */
export async function cancelProtection(ctx: AdapterContext, keys: ApiKeyPair, clientOrderId: string): Promise<void> {
  const outcome = await cancelAlgoOrder(ctx, keys, clientOrderId);
  if (outcome.cancelled || !stillWorking(outcome.order)) return;
  throw new VenueError(
    "INVALID_ORDER",
    `Conditional order "${clientOrderId}" has triggered and can no longer be cancelled; it is still working`,
    { providerId: PROVIDER_ID, venueCode: outcome.refusal.detail.venueCode },
  );
}

export async function listProtections(ctx: AdapterContext, keys: ApiKeyPair, symbol?: string): Promise<Order[]> {
  const open = await ctx.fapi.request<WireAlgoOrder[]>({
    method: "GET",
    path: PATHS.openAlgoOrders,
    params: { algoType: "CONDITIONAL", symbol },
    weight: symbol ? WEIGHTS.openOrdersSymbol : WEIGHTS.openOrdersAll,
    auth: keys,
    action: "Listing conditional orders",
  });
  return open.map(toProtectionOrder);
}
