/**
 * Exact decimal arithmetic on strings, for prices, quantities and money.
 *
 * A value is held as an integer of units and a scale (digits after the point),
 * so "0.010" is {units: 10n, scale: 3}. Nothing here ever goes through a float:
 * venues answer in decimal strings and a float round-trip would move the last
 * digit of a tick or a cent.
 */

export interface Dec {
  units: bigint;
  scale: number;
}

const DECIMAL_PATTERN = /^([+-])?(\d+)(?:\.(\d+))?$/;

export function isDecimal(text: string): boolean {
  return DECIMAL_PATTERN.test(text);
}

export function parseDec(text: string | number): Dec {
  const source = typeof text === "number" ? numberToPlain(text) : text.trim();
  const match = DECIMAL_PATTERN.exec(source);
  if (!match) throw new RangeError(`Not a decimal number: "${source}"`);
  const [, sign, whole, fraction = ""] = match;
  const units = BigInt(whole + fraction);
  return { units: sign === "-" ? -units : units, scale: fraction.length };
}

/**
 * Plain notation of a JS number (no exponent), for values that arrive as JSON
 * numbers. Starts from `String(value)`, the shortest decimal that reads back
 * as the same number (what the sender most likely wrote), and only moves its
 * decimal point: `1e-7` is "0.0000001", never a binary expansion.
 */
function numberToPlain(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`Not a finite number: "${value}"`);
  const text = String(value);
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) return text;
  const [, sign, whole, fraction = "", exponent] = match;
  const digits = whole + fraction;
  const point = whole.length + Number(exponent);
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return sign + digits + "0".repeat(point - digits.length);
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

function rescale(value: Dec, scale: number): bigint {
  return value.units * 10n ** BigInt(scale - value.scale);
}

function aligned(a: Dec, b: Dec): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale);
  return [rescale(a, scale), rescale(b, scale), scale];
}

export function formatDec(value: Dec, minScale = 0): string {
  const negative = value.units < 0n;
  let digits = (negative ? -value.units : value.units).toString().padStart(value.scale + 1, "0");
  let scale = value.scale;
  // Trim trailing zeros down to the requested minimum scale.
  while (scale > minScale && digits.endsWith("0")) {
    digits = digits.slice(0, -1);
    scale--;
  }
  while (scale < minScale) {
    digits += "0";
    scale++;
  }
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale);
  const text = fraction ? `${whole}.${fraction}` : whole;
  return negative && /[1-9]/.test(text) ? `-${text}` : text;
}

type Operand = string | number | Dec;

function dec(value: Operand): Dec {
  return typeof value === "object" ? value : parseDec(value);
}

export function add(a: Operand, b: Operand): string {
  const [x, y, scale] = aligned(dec(a), dec(b));
  return formatDec({ units: x + y, scale });
}

export function sub(a: Operand, b: Operand): string {
  const [x, y, scale] = aligned(dec(a), dec(b));
  return formatDec({ units: x - y, scale });
}

export function mul(a: Operand, b: Operand): string {
  const x = dec(a);
  const y = dec(b);
  return formatDec({ units: x.units * y.units, scale: x.scale + y.scale });
}

export function cmp(a: Operand, b: Operand): -1 | 0 | 1 {
  const [x, y] = aligned(dec(a), dec(b));
  return x < y ? -1 : x > y ? 1 : 0;
}

export function isZero(a: Operand): boolean {
  return dec(a).units === 0n;
}

export function neg(a: Operand): string {
  const x = dec(a);
  return formatDec({ units: -x.units, scale: x.scale });
}

export function abs(a: Operand): string {
  const x = dec(a);
  return formatDec({ units: x.units < 0n ? -x.units : x.units, scale: x.scale });
}

export type RoundingMode = "DOWN" | "UP" | "HALF_UP";

/** Integer division of `n` by positive `d`, rounded by `mode` (DOWN/UP are towards -inf/+inf). */
function divRound(n: bigint, d: bigint, mode: RoundingMode): bigint {
  const q = n / d;
  const r = n % d;
  if (r === 0n) return q;
  const floor = n < 0n ? q - 1n : q;
  if (mode === "DOWN") return floor;
  if (mode === "UP") return floor + 1n;
  // HALF_UP: ties away from zero.
  const twice = 2n * (r < 0n ? -r : r);
  if (twice === d) return n < 0n ? q - 1n : q + 1n;
  return twice > d ? (n < 0n ? q - 1n : q + 1n) : q;
}

/**
 * Divide to `scale` decimal places (HALF_UP by default).
 * Throws on division by zero.
 */
export function div(a: Operand, b: Operand, scale: number, mode: RoundingMode = "HALF_UP"): string {
  const x = dec(a);
  const y = dec(b);
  if (y.units === 0n) throw new RangeError("Division by zero");
  // a/b = (ax / 10^as) / (by / 10^bs); scale the numerator so the quotient has `scale` digits.
  let numerator = x.units * 10n ** BigInt(scale + y.scale);
  let denominator = y.units * 10n ** BigInt(x.scale);
  if (denominator < 0n) {
    numerator = -numerator;
    denominator = -denominator;
  }
  return formatDec({ units: divRound(numerator, denominator, mode), scale });
}

/** Round to a multiple of `step` (e.g. a tick size "0.10" or a lot "0.001"). */
export function roundToStep(value: Operand, step: Operand, mode: RoundingMode): string {
  const s = dec(step);
  if (s.units <= 0n) throw new RangeError(`Step must be positive: "${formatDec(s)}"`);
  const [x, y, scale] = aligned(dec(value), s);
  return formatDec({ units: divRound(x, y, mode) * y, scale }, s.scale);
}

/** Round to `places` decimal places. */
export function roundTo(value: Operand, places: number, mode: RoundingMode = "HALF_UP"): string {
  return roundToStep(value, places === 0 ? "1" : `0.${"0".repeat(places - 1)}1`, mode);
}

/** Round to at most `digits` significant figures (used by VENUE_B prices). */
export function roundSignificant(value: Operand, digits: number, mode: RoundingMode): string {
  const x = dec(value);
  if (x.units === 0n) return "0";
  const magnitude = (x.units < 0n ? -x.units : x.units).toString().length - x.scale;
  const places = digits - magnitude;
  if (places >= 0) return roundTo(x, places, mode);
  const step = 10n ** BigInt(-places);
  return formatDec({ units: divRound(x.units, step * 10n ** BigInt(x.scale), mode) * step, scale: 0 });
}

/** Number of significant digits of a decimal (trailing zeros of the fraction ignored). */
export function significantDigits(value: Operand): number {
  const digits = formatDec(dec(value)).replace(/^-/, "").replace(".", "").replace(/^0+/, "");
  return digits.replace(/0+$/, "").length;
}

/** Digits after the point once trailing zeros are dropped ("0.0100" -> 2). */
export function decimalPlaces(value: Operand): number {
  const text = formatDec(dec(value));
  const point = text.indexOf(".");
  return point < 0 ? 0 : text.length - point - 1;
}

export function isMultipleOf(value: Operand, step: Operand): boolean {
  const [x, y] = aligned(dec(value), dec(step));
  return y !== 0n && x % y === 0n;
}

export function min(a: Operand, b: Operand): string {
  return cmp(a, b) <= 0 ? formatDec(dec(a)) : formatDec(dec(b));
}

export function max(a: Operand, b: Operand): string {
  return cmp(a, b) >= 0 ? formatDec(dec(a)) : formatDec(dec(b));
}

/** Fixed `places` digits (HALF_UP), always showing them: toFixed without floats. */
export function toFixed(value: Operand, places: number): string {
  return formatDec(parseDec(roundTo(value, places)), places);
}
