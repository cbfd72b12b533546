/** The risk envelope between its wire form (USD numbers) and its stored form (micro-units). */
import type { EnvelopeMicros } from "../../db/schema.ts";
import { microsToUsd, usdToMicros } from "../money.ts";
import type { RiskEnvelopeInput } from "./types.ts";

export function envelopeToMicros(envelope: RiskEnvelopeInput): EnvelopeMicros {
  return {
    maxLeverage: envelope.maxLeverage,
    maxMarginPerTradeMicros: usdToMicros(envelope.maxMarginPerTradeUsd),
    maxConcurrentTrades: envelope.maxConcurrentTrades,
    maxDailyLossMicros: usdToMicros(envelope.maxDailyLossUsd),
  };
}

export function envelopeToUsd(envelope: EnvelopeMicros): RiskEnvelopeInput {
  return {
    maxLeverage: envelope.maxLeverage,
    maxMarginPerTradeUsd: microsToUsd(envelope.maxMarginPerTradeMicros),
    maxConcurrentTrades: envelope.maxConcurrentTrades,
    maxDailyLossUsd: microsToUsd(envelope.maxDailyLossMicros),
  };
}

/** The tighter of two envelopes, field by field. */
export function tighterEnvelope(a: EnvelopeMicros, b: EnvelopeMicros | null): EnvelopeMicros {
  if (!b) return a;
  return {
    maxLeverage: Math.min(a.maxLeverage, b.maxLeverage),
    maxMarginPerTradeMicros: Math.min(a.maxMarginPerTradeMicros, b.maxMarginPerTradeMicros),
    maxConcurrentTrades: Math.min(a.maxConcurrentTrades, b.maxConcurrentTrades),
    maxDailyLossMicros: Math.min(a.maxDailyLossMicros, b.maxDailyLossMicros),
  };
}

/** The envelope's fields in their wire form, in the spec's order. */
export const ENVELOPE_FIELDS = [
  "maxLeverage",
  "maxMarginPerTradeUsd",
  "maxConcurrentTrades",
  "maxDailyLossUsd",
] as const;
