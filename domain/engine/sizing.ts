/**
 * Sizing an entry from the client's setup and automation (spec: orderSizeUsd,
 * leverage, maxMarginPerTradeUsd, maxLossPerTrade against the stop distance),
 * on the venue's tick and step. The tighter of setup and automation wins; the
 * quantity is rounded down, never up; below the market's minimum the entry is
 * refused rather than enlarged.
 *
 * A signal sizes thousands of accounts at one price, so everything that
 * depends only on the signal and the market (the price on the tick, the stop
 * distance, the smallest quantity the market takes) is worked out once by
 * `sizingFor`, and each account costs a few integer operations: quantities are
 * counted in whole steps, exactly, with no decimal strings on the way.
 */
import { type Dec, formatDec, parseDec, roundToStep } from "../../venues/decimal.ts";
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

type SizingMarket = Pick<Market, "tickSize" | "stepSize" | "minQty" | "minNotionalUsd">;

const MICROS = 1_000_000n;
const pow10 = (exponent: number) => 10n ** BigInt(exponent);
const ceilDiv = (n: bigint, d: bigint) => (n + d - 1n) / d;

/** One account's sizing, for a single use (tests, a one-off); a signal's fan-out uses `sizingFor`. */
export function sizeEntry(limits: SizingLimits, market: SizingMarket, signal: SizingSignal): Sizing {
  return sizingFor(market, signal)(limits);
}

/** The signal's sizing, prepared once: a function of each account's limits. */
export function sizingFor(market: SizingMarket, signal: SizingSignal): (limits: SizingLimits) => Sizing {
  // A LIMIT entry's price goes to the tick on the passive side: a buy never pays more than the signal said.
  const price = roundToStep(signal.entryPrice, market.tickSize, signal.side === "BUY" ? "DOWN" : "UP");
  const priceDec = parseDec(price);
  const step = parseDec(market.stepSize);
  const stopDistance = signal.stopLossPrice === null ? null : distance(priceDec, parseDec(signal.stopLossPrice));
  const minQty = parseDec(market.minQty);
  const minNotional = parseDec(market.minNotionalUsd);
  // The fewest steps that meet both the market's minimum quantity and its minimum notional.
  const minSteps = priceDec.units > 0n
    ? maxOf(
      ceilDiv(minQty.units * pow10(step.scale), step.units * pow10(minQty.scale)),
      ceilDiv(
        minNotional.units * pow10(step.scale + priceDec.scale),
        step.units * priceDec.units * pow10(minNotional.scale),
      ),
    )
    : null;

  /** Whole steps that `micros` USD buys at `perUnit` USD per unit of quantity, rounded down. */
  const stepsFor = (micros: bigint, perUnit: Dec) =>
    micros * pow10(perUnit.scale + step.scale) / (MICROS * perUnit.units * step.units);

  return (limits) => {
    const notionalCap = Math.min(limits.orderSizeMicros, limits.maxMarginPerTradeMicros * limits.leverage);
    let steps = minSteps === null ? 0n : stepsFor(BigInt(notionalCap), priceDec);
    if (stopDistance && limits.maxLossPerTradeMicros !== null) {
      const lossSteps = stepsFor(BigInt(limits.maxLossPerTradeMicros), stopDistance);
      if (lossSteps < steps) steps = lossSteps;
    }
    const quantity = formatDec({ units: steps * step.units, scale: step.scale }, step.scale);
    if (minSteps === null || steps < minSteps) {
      return {
        refusal: "ASSET_NOTIONAL_LIMIT",
        detail: `A entrada dimensionada (${quantity} a ${price}) fica abaixo do mínimo do mercado ` +
          `(${market.minQty} ou ${market.minNotionalUsd} USD).`,
      };
    }
    const notionalUsd = formatDec({ units: steps * step.units * priceDec.units, scale: step.scale + priceDec.scale });
    return { quantity, price, notionalUsd, leverage: limits.leverage };
  };
}

/** |a − b|, or null when it is zero (a stop at the entry price caps nothing). */
function distance(a: Dec, b: Dec): Dec | null {
  const scale = Math.max(a.scale, b.scale);
  const units = a.units * pow10(scale - a.scale) - b.units * pow10(scale - b.scale);
  return units === 0n ? null : { units: units < 0n ? -units : units, scale };
}

const maxOf = (a: bigint, b: bigint) => a > b ? a : b;
