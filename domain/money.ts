/**
 * USD amounts inside the domain are integer micro-units (1 USD = 1_000_000).
 * They enter from JSON numbers or decimal strings, are summed as integers, and
 * leave as JSON numbers with at most 6 decimals (2 for charges).
 */
import { decimalPlaces, formatDec, parseDec, roundTo } from "../venues/decimal.ts";

/** Exact conversion; throws RangeError for more than 6 decimals or non-numbers. */
export function usdToMicros(value: number | string): number {
  const text = typeof value === "number" ? formatDec(parseDec(value)) : value;
  if (decimalPlaces(text) > 6) throw new RangeError(`More than 6 decimals: "${text}"`);
  const { units, scale } = parseDec(text);
  const micros = units * 10n ** BigInt(6 - scale);
  if (micros > BigInt(Number.MAX_SAFE_INTEGER) || micros < -BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`Amount out of range: "${text}"`);
  }
  return Number(micros);
}

/** Whether `value` converts with `usdToMicros` and is not negative: the one test of every money field. */
export function isUsdAmount(value: number | string): boolean {
  try {
    return usdToMicros(value) >= 0;
  } catch {
    return false;
  }
}

/**
 * Micro-units as a JSON number. The division is correctly rounded, so it
 * gives the double nearest the exact decimal, which prints back with at most
 * 6 decimals (the same number `Number("<decimal>")` would give, without
 * building the text).
 */
export function microsToUsd(micros: number): number {
  return micros / 1_000_000;
}

/** An optional amount (null or absent: none) in micro-units. */
export const microsOrNull = (usd: number | null | undefined) => usd == null ? null : usdToMicros(usd);

/** An optional amount in micro-units as USD, null kept. */
export const usdOrNull = (micros: number | null) => micros === null ? null : microsToUsd(micros);

/** An exact decimal (a venue amount) rounded half away from zero to micro-units: the one rounding of a fact. */
export function decimalToMicros(value: string): number {
  return usdToMicros(roundTo(value, 6, "HALF_UP"));
}

/**
 * A fee: `baseMicros` times the fraction `percent` ("0.2" = 20 %), rounded
 * half away from zero to the cent (spec, Performance rule 6). Whole cents in
 * micro-units. Integer arithmetic throughout.
 */
export function feeMicros(baseMicros: number, percent: string): number {
  const { units, scale } = parsedPercent(percent);
  // micro-units × percent = units / 10^scale micro-units; a cent is 10^4 micro-units.
  const product = BigInt(baseMicros) * units;
  const divisor = 10n ** BigInt(scale + 4);
  const cents = product / divisor;
  const twice = 2n * (product < 0n ? -product : product) % (2n * divisor);
  const roundsAway = twice >= divisor;
  return Number((roundsAway ? cents + (product < 0n ? -1n : 1n) : cents) * 10_000n);
}

const percents = new Map<string, { units: bigint; scale: number }>();
function parsedPercent(percent: string) {
  let parsed = percents.get(percent);
  // Contracts store the exact decimal, and migration 0020_plain_fee_percents rewrote older rows; an instance of an
  // earlier version still running beside this one may write `String(number)` ("1e-7" for a fraction under 1e-6),
  // which reads here as the number it came from, in plain decimal ("0.0000001"), instead of failing the close.
  if (!parsed) percents.set(percent, parsed = parseDec(/e/i.test(percent) ? Number(percent) : percent));
  return parsed;
}
