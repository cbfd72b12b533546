/**
 * Rounding and filter checks applied before an order leaves the adapter.
 *
 * Prices go to the tick towards the passive side (BUY down, SELL up) so a
 * rounded limit never pays more than asked; quantities go down to the step so
 * we never trade more than asked. The same direction rule on trigger prices
 * makes a stop fire no later and a take-profit no worse than requested.
 */
import { cmp, isDecimal, isZero, mul, roundToStep } from "../decimal.ts";
import type { OrderSide, OrderType } from "../types.ts";
import { localError } from "./errors.ts";
import type { MarketRules } from "./mappers.ts";

export interface PreparedOrder {
  quantity: string;
  price?: string;
  triggerPrice?: string;
}

function invalid(message: string): never {
  throw localError("INVALID_ORDER", message);
}

function positive(value: string | undefined, field: string): string {
  if (value === undefined || !isDecimal(value) || cmp(value, "0") <= 0) {
    invalid(`The ${field} must be a positive decimal, got "${value ?? ""}"`);
  }
  return value;
}

function roundPrice(value: string, side: OrderSide, rules: MarketRules, field: string): string {
  const rounded = roundToStep(value, rules.tickSize, side === "BUY" ? "DOWN" : "UP");
  if (isZero(rounded)) invalid(`The ${field} "${value}" rounds to zero at tick "${rules.tickSize}"`);
  if (!isZero(rules.minPrice) && cmp(rounded, rules.minPrice) < 0) {
    invalid(`The ${field} "${rounded}" is below the minimum "${rules.minPrice}" of "${rules.symbol}"`);
  }
  if (!isZero(rules.maxPrice) && cmp(rounded, rules.maxPrice) > 0) {
    invalid(`The ${field} "${rounded}" is above the maximum "${rules.maxPrice}" of "${rules.symbol}"`);
  }
  return rounded;
}

/**
 * Rounds and checks an order against the symbol's filters.
 * The notional is valued at the limit price, else the trigger price, else
 * `referencePrice` (the mark price of a MARKET order); reduce-only orders are
 * exempt from min notional, as on the venue.
 */
export function prepareOrder(
  rules: MarketRules,
  order: {
    side: OrderSide;
    type: OrderType;
    quantity: string;
    price?: string;
    triggerPrice?: string;
    reduceOnly: boolean;
  },
  referencePrice?: string,
): PreparedOrder {
  const market = order.type !== "LIMIT";
  const step = market ? rules.marketStepSize : rules.stepSize;
  const minQty = market ? rules.marketMinQty : rules.minQty;
  const maxQty = market ? rules.marketMaxQty : rules.maxQty;
  const quantity = roundToStep(positive(order.quantity, "quantity"), step, "DOWN");
  if (cmp(quantity, minQty) < 0) {
    invalid(`Quantity "${order.quantity}" is below the minimum "${minQty}" of "${rules.symbol}"`);
  }
  if (!isZero(maxQty) && cmp(quantity, maxQty) > 0) {
    invalid(`Quantity "${quantity}" is above the maximum "${maxQty}" of "${rules.symbol}"`);
  }
  const prepared: PreparedOrder = { quantity };
  if (order.type === "LIMIT") {
    prepared.price = roundPrice(positive(order.price, "price"), order.side, rules, "price");
  }
  if (order.type === "STOP_MARKET" || order.type === "TAKE_PROFIT_MARKET") {
    prepared.triggerPrice = roundPrice(
      positive(order.triggerPrice, "trigger price"),
      order.side,
      rules,
      "trigger price",
    );
  }
  const valuedAt = prepared.price ?? prepared.triggerPrice ?? referencePrice;
  if (!order.reduceOnly && valuedAt !== undefined && !isZero(rules.minNotionalUsd)) {
    const notional = mul(quantity, valuedAt);
    if (cmp(notional, rules.minNotionalUsd) < 0) {
      invalid(`Order notional "${notional}" is below the minimum "${rules.minNotionalUsd}" of "${rules.symbol}"`);
    }
  }
  return prepared;
}
