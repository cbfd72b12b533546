/**
 * VENUE_B order operations: place (limit, market as aggressive IOC, trigger),
 * look up, cancel and modify by cloid, leverage and margin mode.
 *
 * Every order carries the cloid derived from our client order id, and a
 * placement first asks the venue whether that cloid already exists: after an
 * OUTCOME_UNKNOWN the retry returns the order the lost attempt created instead
 * of creating a second one.
 */
import { protectionOrder } from "../protection.ts";
import { add, cmp, isDecimal, isZero, mul, sub } from "../decimal.ts";
import type {
  Decimal,
  MarginMode,
  ModifyOrderRequest,
  Order,
  PlaceOrderRequest,
  ProtectionRequest,
  TimeInForce,
  VenueCredentials,
} from "../types.ts";
import { VenueError } from "../types.ts";
import { MARKET_SLIPPAGE, MAX_PERP_BUILDER_FEE, MIN_ORDER_VALUE_USD, TRIGGER_SLIPPAGE } from "./constants.ts";
import { agentCredentials, principal, sendL1Action, type VenueBContext } from "./context.ts";
import { errorFromVenueMessage, isNothingToCancel, venueError } from "./errors.ts";
import {
  averageFillPrice,
  cloidFromClientOrderId,
  formatPrice,
  formatSize,
  toOrder,
  toSymbol,
  wireDecimal,
} from "./mappers.ts";
import type { ResolvedAsset } from "./markets.ts";
import type { Tif, WireActiveAssetData, WireFill, WireOrder, WireOrderResult, WireOrderStatus } from "./wire.ts";

const TIF: Record<TimeInForce, Tif | null> = { GTC: "Gtc", IOC: "Ioc", POST_ONLY: "Alo", FOK: null };

/** The order as the venue knows it under this client order id, or null. */
export async function findOrder(ctx: VenueBContext, user: string, clientOrderId: string): Promise<Order | null> {
  const reply = await ctx.client.info<WireOrderStatus>({
    type: "orderStatus",
    user,
    oid: cloidFromClientOrderId(clientOrderId),
  });
  if (reply.status !== "order") return null;
  const { order, status } = reply.order;
  // orderStatus has no average price; the fills of the order do.
  const average = cmp(order.origSz, order.sz) > 0
    ? averageFillPrice(
      await ctx.client.info<WireFill[]>({ type: "userFillsByTime", user, startTime: order.timestamp }),
      order.oid,
    )
    : null;
  return toOrder(order, status, clientOrderId, average);
}

/** The order under our client order id in `symbol`, or null when the venue never saw it. */
export async function getOrder(
  ctx: VenueBContext,
  credentials: VenueCredentials,
  symbol: string,
  clientOrderId: string,
): Promise<Order | null> {
  const agent = agentCredentials(credentials);
  // Resolving refuses an unknown market the same way every other call does.
  await ctx.markets.resolve(symbol);
  return await findOrder(ctx, principal(agent), clientOrderId);
}

interface OrderPlan {
  wire: WireOrder;
  timeInForce: TimeInForce | null;
  triggerPrice: string | null;
}

/** The worst acceptable price of an aggressive order: `fraction` beyond the reference. */
function slipped(price: Decimal, fraction: string, isBuy: boolean): string {
  return mul(price, isBuy ? add("1", fraction) : sub("1", fraction));
}

/** Refuses what is not a positive decimal before any rounding could throw on it. */
function assertPositive(value: Decimal | undefined, what: string): void {
  if (value !== undefined && (!isDecimal(value) || cmp(value, "0") <= 0)) {
    throw venueError("INVALID_ORDER", `The ${what} must be a positive decimal; got "${value}"`);
  }
}

async function planOrder(ctx: VenueBContext, request: PlaceOrderRequest, resolved: ResolvedAsset): Promise<OrderPlan> {
  const { asset, index } = resolved;
  const isBuy = request.side === "BUY";
  assertPositive(request.quantity, "quantity");
  assertPositive(request.price, "price");
  assertPositive(request.triggerPrice, "trigger price");
  const size = formatSize(request.quantity, asset.szDecimals);
  if (isZero(size)) {
    throw venueError("INVALID_ORDER", `Quantity "${request.quantity}" rounds to zero at ${asset.szDecimals} decimals`);
  }
  let price: string;
  let reference: string;
  let type: WireOrder["t"];
  let timeInForce: TimeInForce | null = null;
  let triggerPrice: string | null = null;
  if (request.type === "LIMIT") {
    if (!request.price) throw venueError("INVALID_ORDER", "A limit order needs a price");
    timeInForce = request.timeInForce ?? "GTC";
    const tif = TIF[timeInForce];
    if (!tif) throw venueError("INVALID_ORDER", `VENUE_B has no "${timeInForce}" orders`);
    // Towards the passive side: a buy never pays more, a sell never gets less, than asked.
    price = formatPrice(request.price, asset.szDecimals, isBuy ? "DOWN" : "UP");
    reference = price;
    type = { limit: { tif } };
  } else if (request.type === "MARKET") {
    reference = await ctx.markets.mid(asset.name);
    price = formatPrice(slipped(reference, MARKET_SLIPPAGE, isBuy), asset.szDecimals, isBuy ? "UP" : "DOWN");
    timeInForce = "IOC";
    type = { limit: { tif: "Ioc" } };
  } else {
    if (!request.triggerPrice) throw venueError("INVALID_ORDER", "A trigger order needs a trigger price");
    triggerPrice = formatPrice(request.triggerPrice, asset.szDecimals, "HALF_UP");
    reference = triggerPrice;
    price = formatPrice(slipped(triggerPrice, TRIGGER_SLIPPAGE, isBuy), asset.szDecimals, isBuy ? "UP" : "DOWN");
    type = { trigger: { isMarket: true, triggerPx: triggerPrice, tpsl: request.type === "STOP_MARKET" ? "sl" : "tp" } };
  }
  if (!request.reduceOnly && cmp(mul(size, reference), MIN_ORDER_VALUE_USD) < 0) {
    throw venueError("INVALID_ORDER", `Order value is below the $${MIN_ORDER_VALUE_USD} minimum`, {
      venueCode: "Order must have minimum value of $10.",
    });
  }
  return {
    wire: {
      a: index,
      b: isBuy,
      p: price,
      s: size,
      r: request.reduceOnly,
      t: type,
      c: cloidFromClientOrderId(request.clientOrderId),
    },
    timeInForce,
    triggerPrice,
  };
}

function builderField(request: PlaceOrderRequest) {
  if (!request.builder || request.reduceOnly) return {};
  const f = request.builder.feeTenthsBps;
  if (!Number.isInteger(f) || f < 0 || f > MAX_PERP_BUILDER_FEE) {
    throw venueError(
      "INVALID_ORDER",
      `Builder fee must be a whole number of tenths of a basis point up to ${MAX_PERP_BUILDER_FEE}`,
    );
  }
  return { builder: { b: request.builder.address.toLowerCase(), f } };
}

/**
 * Places one order; the builder goes on opening orders only. No look-up
 * first (the caller records each order before sending it and never sends it
 * twice): a refused order is looked up by its cloid, and an order the venue
 * already holds under it (a duplicate cloid, whatever the refusal says) is
 * the answer.
 */
export async function placeOrder(
  ctx: VenueBContext,
  credentials: VenueCredentials,
  request: PlaceOrderRequest,
): Promise<Order> {
  const [placed] = await placeOrders(ctx, credentials, [request], builderField(request));
  if (placed instanceof VenueError) throw placed;
  return placed;
}

/**
 * Several orders of one account in one `order` action (one request, weight
 * 1 + 1 per 40 orders): the answer of each, an Order or the venue's refusal
 * of it. A failure of the action as a whole is thrown.
 */
async function placeOrders(
  ctx: VenueBContext,
  credentials: VenueCredentials,
  requests: PlaceOrderRequest[],
  builder: ReturnType<typeof builderField>,
): Promise<(Order | VenueError)[]> {
  const agent = agentCredentials(credentials);
  const planned = await Promise.all(requests.map(async (request) => {
    const resolved = await ctx.markets.resolve(request.symbol);
    return { request, resolved, plan: await planOrder(ctx, request, resolved) };
  }));
  const action = { type: "order", orders: planned.map(({ plan }) => plan.wire), grouping: "na", ...builder };
  // One action for all of them: it must expire by the earliest of their deadlines.
  const deadlines = requests.flatMap((request) => request.deadline === undefined ? [] : [request.deadline]);
  const response = await sendL1Action(ctx, agent, action, deadlines.length ? Math.min(...deadlines) : undefined);
  return await Promise.all(planned.map(async ({ request, resolved, plan }, index) => {
    const result = response.data?.statuses[index] as WireOrderResult | undefined;
    const base: Order = {
      orderId: "",
      clientOrderId: request.clientOrderId,
      symbol: toSymbol(resolved.asset.name),
      side: request.side,
      type: request.type,
      status: "NEW",
      quantity: plan.wire.s,
      filledQuantity: "0",
      price: plan.wire.p,
      averagePrice: null,
      triggerPrice: plan.triggerPrice,
      reduceOnly: request.reduceOnly,
      timeInForce: plan.timeInForce,
      createdAt: ctx.now(),
    };
    if (result && typeof result === "object" && "resting" in result) {
      return { ...base, orderId: String(result.resting.oid), status: plan.triggerPrice ? "TRIGGER_PENDING" : "NEW" };
    }
    if (result && typeof result === "object" && "filled" in result) {
      const { totalSz, avgPx, oid } = result.filled;
      const complete = cmp(totalSz, plan.wire.s) >= 0;
      return {
        ...base,
        orderId: String(oid),
        status: complete ? "FILLED" : "CANCELED",
        filledQuantity: wireDecimal(totalSz),
        averagePrice: wireDecimal(avgPx),
      };
    }
    // Any refusal, or a status we cannot read: the venue's record under our cloid is the answer
    // when it has one. Its wording of a duplicate cloid is documented nowhere, so no text is
    // matched: every order carries its cloid, and an order the venue already holds under it was ours.
    const known = await findOrder(ctx, principal(agent), request.clientOrderId);
    if (known) return known;
    if (result && typeof result === "object" && "error" in result) return errorFromVenueMessage(result.error);
    throw venueError("OUTCOME_UNKNOWN", "VENUE_B accepted the order action without a readable order status");
  }));
}

/** A position's stop and targets in one action (reduce-only market triggers); the answer of each leg. */
export function placeProtections(
  ctx: VenueBContext,
  credentials: VenueCredentials,
  requests: ProtectionRequest[],
): Promise<(Order | VenueError)[]> {
  return placeOrders(ctx, credentials, requests.map(protectionOrder), {});
}

/** A reduce-only market trigger order (tpsl "sl" or "tp"). */
export function placeProtection(ctx: VenueBContext, credentials: VenueCredentials, request: ProtectionRequest) {
  return placeOrder(ctx, credentials, protectionOrder(request));
}

/** Cancels by cloid; an order that had already finished is returned as it finished. */
export async function cancelOrder(
  ctx: VenueBContext,
  credentials: VenueCredentials,
  symbol: string,
  clientOrderId: string,
): Promise<Order> {
  const agent = agentCredentials(credentials);
  const { index } = await ctx.markets.resolve(symbol);
  const action = { type: "cancelByCloid", cancels: [{ asset: index, cloid: cloidFromClientOrderId(clientOrderId) }] };
  const response = await sendL1Action(ctx, agent, action);
  const result = response.data?.statuses[0];
  if (result && typeof result === "object" && "error" in result) {
    const message = String(result.error);
    if (!isNothingToCancel(message)) throw errorFromVenueMessage(message);
  }
  const order = await findOrder(ctx, principal(agent), clientOrderId);
  if (!order) throw venueError("INVALID_ORDER", `No VENUE_B order has client order id "${clientOrderId}"`);
  return order;
}

/** Cancels a trigger order; one that already fired or was cancelled is left as it is. */
export async function cancelProtection(
  ctx: VenueBContext,
  credentials: VenueCredentials,
  symbol: string,
  clientOrderId: string,
): Promise<void> {
  await cancelOrder(ctx, credentials, symbol, clientOrderId);
}

/**
 * Re-prices and re-sizes an open limit order; the venue keeps its cloid and
 * builder. Sent without `a`, the new order is held to ALO at the venue: a GTC
 * comes back as POST_ONLY (its TIF overridden), and a price that would take
 * liquidity is refused, the order left as it was.
 */
export async function modifyOrder(
  ctx: VenueBContext,
  credentials: VenueCredentials,
  request: ModifyOrderRequest,
): Promise<Order> {
  const agent = agentCredentials(credentials);
  const { index, asset } = await ctx.markets.resolve(request.symbol);
  const current = await findOrder(ctx, principal(agent), request.clientOrderId);
  if (!current) throw venueError("INVALID_ORDER", `No VENUE_B order has client order id "${request.clientOrderId}"`);
  // A trigger order is never modified: before it fires it is TRIGGER_PENDING, after it fired (the
  // venue's `triggered`, read NEW) it is on its way to a fill.
  if (current.triggerPrice !== null || (current.status !== "NEW" && current.status !== "PARTIALLY_FILLED")) {
    throw venueError("INVALID_ORDER", `Only an open limit order can be modified; this one is ${current.status}`);
  }
  assertPositive(request.quantity, "quantity");
  assertPositive(request.price, "price");
  const isBuy = current.side === "BUY";
  const cloid = cloidFromClientOrderId(request.clientOrderId);
  const order: WireOrder = {
    a: index,
    b: isBuy,
    p: formatPrice(request.price, asset.szDecimals, isBuy ? "DOWN" : "UP"),
    s: formatSize(request.quantity, asset.szDecimals),
    r: current.reduceOnly,
    t: { limit: { tif: current.timeInForce === "POST_ONLY" ? "Alo" : "Gtc" } },
    c: cloid,
  };
  if (isZero(order.s)) throw venueError("INVALID_ORDER", `Quantity "${request.quantity}" rounds to zero`);
  // No `a` (always place): without it the venue holds the new order to ALO (SDK modify.d.ts; a GTC's
  // TIF is overridden to ALO), so a price that would take liquidity is refused and the order stays as
  // it was; with it the new order would be placed even where the old one has just filled.
  try {
    await sendL1Action(ctx, agent, { type: "modify", oid: cloid, order });
  } catch (error) {
    if (
      !(error instanceof VenueError) ||
      !/^Post only order would have immediately matched/i.test(String(error.detail.venueCode))
    ) {
      throw error;
    }
    throw venueError(
      "INVALID_ORDER",
      "VENUE_B modifies an order only to a price that rests on the book; this one would take liquidity (cancel and place instead)",
      { venueCode: error.detail.venueCode },
    );
  }
  const modified = await findOrder(ctx, principal(agent), request.clientOrderId);
  if (!modified) {
    throw venueError("OUTCOME_UNKNOWN", "VENUE_B accepted the modification but no longer reports the order");
  }
  return modified;
}

async function currentLeverage(ctx: VenueBContext, user: string, coin: string) {
  const data = await ctx.client.info<WireActiveAssetData>({ type: "activeAssetData", user, coin });
  return data.leverage;
}

/** Sets the leverage of a market, keeping its margin mode. */
export async function setLeverage(ctx: VenueBContext, credentials: VenueCredentials, symbol: string, leverage: number) {
  const agent = agentCredentials(credentials);
  const { index, asset } = await ctx.markets.resolve(symbol);
  if (!Number.isInteger(leverage) || leverage < 1 || leverage > asset.maxLeverage) {
    throw venueError(
      "INVALID_ORDER",
      `Leverage must be a whole number from 1 to ${asset.maxLeverage}; got "${leverage}"`,
    );
  }
  const current = await currentLeverage(ctx, principal(agent), asset.name);
  await sendL1Action(ctx, agent, { type: "updateLeverage", asset: index, isCross: current.type === "cross", leverage });
}

/** Switches cross/isolated, keeping the leverage. */
export async function setMarginMode(
  ctx: VenueBContext,
  credentials: VenueCredentials,
  symbol: string,
  mode: MarginMode,
) {
  const agent = agentCredentials(credentials);
  const { index, asset } = await ctx.markets.resolve(symbol);
  if (mode === "CROSSED" && (asset.onlyIsolated || asset.marginMode)) {
    throw venueError("INVALID_ORDER", `${asset.name} trades in isolated margin only`);
  }
  const current = await currentLeverage(ctx, principal(agent), asset.name);
  await sendL1Action(ctx, agent, {
    type: "updateLeverage",
    asset: index,
    isCross: mode === "CROSSED",
    leverage: current.value,
  });
}
