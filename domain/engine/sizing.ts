/**
 * Sizing an entry from the client's setup and automation (spec: orderSizeUsd,
 * leverage, maxMarginPerTradeUsd, maxLossPerTrade against the stop distance),
 * on the venue's tick and step. The tighter of setup and automation wins; the
 * quantity is rounded down, never up; below the market's minimum the entry is
 * refused rather than enlarged.
 */
import { abs, cmp, div, formatDec, isZero, min, mul, roundToStep, sub } from "../../venues/decimal.ts";
import type { Market, OrderSide } from "../../venues/types.ts";

export interface SizingLimits {
  orderSizeMicros: number;
  leverage: number;
  maxMarginPerTradeMicros: number;
  /** null: no per-trade loss limit. */
  maxLossPerTradeMicros: number | null;
}

export interface SizingSignal {
  side: OrderSide;
  entryPrice: string;
  stopLossPrice: string | null;
}

export type Sizing =
  | { quantity: string; price: string; notionalUsd: string; leverage: number }
  | { refusal: "ASSET_NOTIONAL_LIMIT"; detail: string };

const usd = (micros: number) => formatDec({ units: BigInt(micros), scale: 6 });

export function sizeEntry(
  limits: SizingLimits,
  market: Pick<Market, "tickSize" | "stepSize" | "minQty" | "minNotionalUsd">,
  signal: SizingSignal,
): Sizing {
  // A LIMIT entry's price goes to the tick on the passive side: a buy never pays more than the signal said.
  const price = roundToStep(signal.entryPrice, market.tickSize, signal.side === "BUY" ? "DOWN" : "UP");
  const notionalCap = mul(usd(limits.maxMarginPerTradeMicros), limits.leverage);
  let quantity = div(min(usd(limits.orderSizeMicros), notionalCap), price, 12, "DOWN");
  if (signal.stopLossPrice !== null && limits.maxLossPerTradeMicros !== null) {
    const stopDistance = abs(sub(price, signal.stopLossPrice));
    if (!isZero(stopDistance)) {
      quantity = min(quantity, div(usd(limits.maxLossPerTradeMicros), stopDistance, 12, "DOWN"));
    }
  }
  quantity = roundToStep(quantity, market.stepSize, "DOWN");
  const notional = mul(quantity, price);
  if (cmp(quantity, market.minQty) < 0 || cmp(notional, market.minNotionalUsd) < 0) {
    return {
      refusal: "ASSET_NOTIONAL_LIMIT",
      detail: `A entrada dimensionada (${quantity} a ${price}) fica abaixo do mínimo do mercado ` +
        `(${market.minQty} ou ${market.minNotionalUsd} USD).`,
    };
  }
  return { quantity, price, notionalUsd: notional, leverage: limits.leverage };
}
