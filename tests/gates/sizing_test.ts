/** Sizing an entry: the tighter of size, margin × leverage and loss ÷ stop distance, on the venue's grid. */
import assert from "node:assert/strict";
import { sizeEntry, type SizingLimits } from "../../domain/engine/sizing.ts";

const BTC = { tickSize: "0.10", stepSize: "0.001", minQty: "0.001", minNotionalUsd: "100" };
const limits = (overrides: Partial<SizingLimits> = {}): SizingLimits => ({
  orderSizeMicros: 1_000e6,
  leverage: 5,
  maxMarginPerTradeMicros: 500e6,
  maxLossPerTradeMicros: null,
  ...overrides,
});
const buy = { side: "BUY" as const, entryPrice: "65000.07", stopLossPrice: null };

Deno.test("sizing: the order size at the tick, rounded down to the step", () => {
  assert.deepEqual(sizeEntry(limits(), BTC, buy), {
    quantity: "0.015",
    price: "65000.00",
    notionalUsd: "975",
    leverage: 5,
  });
  const sell = sizeEntry(limits(), BTC, { ...buy, side: "SELL" });
  assert.equal("price" in sell && sell.price, "65000.10", "a sell rounds its price up, to the passive side");
});

Deno.test("sizing: margin × leverage and the loss limit against the stop each cap the size", () => {
  const margin = sizeEntry(limits({ maxMarginPerTradeMicros: 100e6 }), BTC, buy);
  assert.equal("quantity" in margin && margin.quantity, "0.007", "100 × 5 = 500 USD");
  const stop = sizeEntry(limits({ maxLossPerTradeMicros: 20e6 }), BTC, { ...buy, stopLossPrice: "63000" });
  assert.equal("quantity" in stop && stop.quantity, "0.010", "20 USD over a 2,000 stop distance");
});

Deno.test("sizing: below the market minimum is refused, never enlarged", () => {
  const small = sizeEntry(limits({ orderSizeMicros: 50e6 }), BTC, buy);
  assert.equal("refusal" in small && small.refusal, "ASSET_NOTIONAL_LIMIT");
  const noMargin = sizeEntry(limits({ maxMarginPerTradeMicros: 0 }), BTC, buy);
  assert.equal("refusal" in noMargin && noMargin.refusal, "ASSET_NOTIONAL_LIMIT");
});
