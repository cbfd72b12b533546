/**
 * The money values of a contract, as the money rules can carry them. A
 * subscription becomes a charge, and charges are whole cents; a performance
 * fee is a fraction applied to micro-units and rounded to the cent, kept as
 * the exact decimal the operator wrote (a JSON number's shortest decimal,
 * never exponent notation), so every stored value parses as a decimal.
 */
import { decimalPlaces, formatDec, parseDec } from "../../venues/decimal.ts";
import { ApiError } from "../errors.ts";
import { usdToMicros } from "../money.ts";

/** Ceiling of a monthly subscription per client: far above any real price, far below a sum that could overflow. */
export const SUBSCRIPTION_MAX_USD = 100_000;
/** Digits of a fee fraction: 0.000001 is 0.0001 %, the finest rate a contract states. */
export const FEE_PERCENT_DECIMALS = 6;

/** The exact decimal of a JSON number (`1e-7` is "0.0000001"), or null for a non-finite one. */
function exactDecimal(value: number): string | null {
  return Number.isFinite(value) ? formatDec(parseDec(value)) : null;
}

/** A monthly subscription: 0 to SUBSCRIPTION_MAX_USD USD in whole cents. */
export function isSubscriptionUsd(value: number): boolean {
  const text = exactDecimal(value);
  return text !== null && value >= 0 && value <= SUBSCRIPTION_MAX_USD && decimalPlaces(text) <= 2;
}

/** A performance fee: a fraction from 0 to 1 ("0.2" is 20 %) with at most FEE_PERCENT_DECIMALS decimals. */
export function isFeeFraction(value: number): boolean {
  const text = exactDecimal(value);
  return text !== null && value >= 0 && value <= 1 && decimalPlaces(text) <= FEE_PERCENT_DECIMALS;
}

/** The subscription in micro-units; the API refuses anything else first, this keeps other callers to the rule. */
export function subscriptionMicros(value: number): number {
  if (!isSubscriptionUsd(value)) {
    throw new ApiError("VALIDATION_ERROR", {
      message: `subscriptionMonthlyUsd: ${value} não é um valor de 0 a ${SUBSCRIPTION_MAX_USD} USD em centavos.`,
    });
  }
  return usdToMicros(value);
}

/** The fee fraction as stored: its exact decimal text ("0.000001", never "1e-6"). */
export function feePercentText(value: number): string {
  if (!isFeeFraction(value)) {
    throw new ApiError("VALIDATION_ERROR", {
      message:
        `performanceFeePercent: ${value} não é uma fração de 0 a 1 com até ${FEE_PERCENT_DECIMALS} casas decimais.`,
    });
  }
  return exactDecimal(value)!;
}
