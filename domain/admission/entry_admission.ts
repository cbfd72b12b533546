/**
 * Entry-moment admission (spec, Admission refusals for new real entries): the
 * checks an opening order must pass at the moment it is sent, after the entry
 * gates allowed the account. A pure function of the asset's entry policy, the
 * order book read for the symbol (once per signal, not per account) and the
 * order; the first failing check is the refusal. Maintenance never comes here.
 */
import { add, cmp, type Dec, div, formatDec, mul, parseDec, sub } from "../../venues/decimal.ts";
import type { OrderBook, OrderSide } from "../../venues/types.ts";

export interface EntryPolicy {
  minNotionalMicros: number;
  maxNotionalMicros: number;
  maxSpreadBps: number;
  maxSlippageBps: number;
  /** Largest share of the visible book on the taking side one entry may take ("0.1"). */
  maxBookFraction: string;
}

export interface EntryOrder {
  side: OrderSide;
  quantity: string;
  /** The limit price (real openings are LIMIT only). */
  price: string;
}

/** The book as read, with the wall-clock time it was read (the venue's own time is inside). */
export interface BookReading {
  book: OrderBook;
  readAtWall: number;
}

export type AdmissionDecision =
  | { admitted: true; estimatedSlippageBps: string; notionalUsd: string }
  | { admitted: false; code: AdmissionRefusal; detail: string };

export type AdmissionRefusal =
  | "ASSET_POLICY_REQUIRED"
  | "ASSET_NOTIONAL_LIMIT"
  | "BOOK_UNVERIFIED"
  | "SPREAD_LIMIT"
  | "LIQUIDITY_LIMIT"
  | "SLIPPAGE_LIMIT";

/** A book older than this, by our read or by the venue's stamp, is not evidence of the market now. */
export const BOOK_MAX_AGE_MS = 2_000;

const pow10 = (exponent: number) => 10n ** BigInt(exponent);
const usd = (micros: number) => formatDec({ units: BigInt(micros), scale: 6 });
const refuse = (code: AdmissionRefusal, detail: string): AdmissionDecision => ({ admitted: false, code, detail });

/**
 * One side of the book as the entries of a signal take it: prices and running
 * totals of quantity and cost as integers at one scale each, so an account's
 * slippage is a short walk of integer sums, not decimal strings.
 */
interface BookSide {
  prices: bigint[];
  priceScale: number;
  /** Quantity up to and including each level, at `quantityScale`. */
  cumulativeQuantity: bigint[];
  /** Cost of taking everything up to and including each level, at `quantityScale + priceScale`. */
  cumulativeCost: bigint[];
  quantityScale: number;
  visible: string;
}

/** The book's per-signal facts, worked out once and shared by every account's admission. */
export type PreparedBook =
  | { problem: string }
  | { problem: null; spreadBps: Dec; bids: BookSide; asks: BookSide };

export function prepareBook(reading: BookReading | null, nowWall: number): PreparedBook {
  const problem = bookProblem(reading, nowWall);
  if (problem) return { problem };
  const { book } = reading!;
  const mid = div(add(book.bids[0].price, book.asks[0].price), 2, 12);
  return {
    problem: null,
    spreadBps: parseDec(div(mul(sub(book.asks[0].price, book.bids[0].price), 10_000), mid, 4)),
    bids: bookSide(book.bids),
    asks: bookSide(book.asks),
  };
}

function bookSide(levels: OrderBook["bids"]): BookSide {
  const prices = levels.map((level) => parseDec(level.price));
  const quantities = levels.map((level) => parseDec(level.quantity));
  const priceScale = Math.max(...prices.map((price) => price.scale));
  const quantityScale = Math.max(...quantities.map((quantity) => quantity.scale));
  const side: BookSide = {
    prices: prices.map((price) => price.units * pow10(priceScale - price.scale)),
    priceScale,
    cumulativeQuantity: [],
    cumulativeCost: [],
    quantityScale,
    visible: "0",
  };
  let quantityTotal = 0n;
  let costTotal = 0n;
  quantities.forEach((quantity, i) => {
    const units = quantity.units * pow10(quantityScale - quantity.scale);
    quantityTotal += units;
    costTotal += units * side.prices[i];
    side.cumulativeQuantity.push(quantityTotal);
    side.cumulativeCost.push(costTotal);
  });
  side.visible = formatDec({ units: quantityTotal, scale: quantityScale });
  return side;
}

/** One order against a book read now (the manual order routes). */
export function admitEntry(
  policy: EntryPolicy | null,
  reading: BookReading | null,
  order: EntryOrder,
  nowWall: number,
): AdmissionDecision {
  return admitEntryOn(policy, prepareBook(reading, nowWall), order);
}

/** One account's order against the signal's prepared book: the checks in the spec's order. */
export function admitEntryOn(policy: EntryPolicy | null, prepared: PreparedBook, order: EntryOrder): AdmissionDecision {
  if (!policy) return refuse("ASSET_POLICY_REQUIRED", "O ativo não possui política de entrada configurada.");
  const quantity = parseDec(order.quantity);
  const price = parseDec(order.price);
  const notional: Dec = { units: quantity.units * price.units, scale: quantity.scale + price.scale };
  const notionalMicros = notional.units * 1_000_000n;
  if (
    notionalMicros < BigInt(policy.minNotionalMicros) * pow10(notional.scale) ||
    notionalMicros > BigInt(policy.maxNotionalMicros) * pow10(notional.scale)
  ) {
    return refuse(
      "ASSET_NOTIONAL_LIMIT",
      `Notional ${formatDec(notional)} fora do intervalo do ativo (${usd(policy.minNotionalMicros)} a ${
        usd(policy.maxNotionalMicros)
      } USD).`,
    );
  }
  if (prepared.problem !== null) return refuse("BOOK_UNVERIFIED", prepared.problem);
  if (cmp(prepared.spreadBps, policy.maxSpreadBps) > 0) {
    return refuse(
      "SPREAD_LIMIT",
      `Spread de ${formatDec(prepared.spreadBps)} bps acima do limite de ${policy.maxSpreadBps} bps.`,
    );
  }
  const side = order.side === "BUY" ? prepared.asks : prepared.bids;
  // The order's quantity and the book's at one scale.
  const scale = Math.max(quantity.scale, side.quantityScale);
  const wanted = quantity.units * pow10(scale - quantity.scale);
  const bookFactor = pow10(scale - side.quantityScale);
  const visible = side.cumulativeQuantity[side.cumulativeQuantity.length - 1] * bookFactor;
  const fraction = parseDec(policy.maxBookFraction);
  if (wanted * pow10(fraction.scale) > visible * fraction.units || wanted > visible) {
    return refuse(
      "LIQUIDITY_LIMIT",
      `A entrada (${order.quantity}) excede ${policy.maxBookFraction} da liquidez visível (${side.visible}).`,
    );
  }
  // Taking `wanted` from the best level on: the cost against the cost at the best price alone.
  const level = side.cumulativeQuantity.findIndex((total) => total * bookFactor >= wanted);
  const takenBefore = level === 0 ? 0n : side.cumulativeQuantity[level - 1] * bookFactor;
  const costBefore = level === 0 ? 0n : side.cumulativeCost[level - 1] * bookFactor;
  const cost = costBefore + (wanted - takenBefore) * side.prices[level];
  const costAtBest = wanted * side.prices[0];
  const extra = cost > costAtBest ? cost - costAtBest : costAtBest - cost;
  // slippage (bps) = extra × 10,000 / costAtBest, compared exactly with the limit.
  const slippageBps = div({ units: extra * 10_000n, scale: 0 }, { units: costAtBest, scale: 0 }, 4);
  if (extra * 10_000n > BigInt(policy.maxSlippageBps) * costAtBest) {
    return refuse(
      "SLIPPAGE_LIMIT",
      `Slippage estimado de ${slippageBps} bps acima do limite de ${policy.maxSlippageBps} bps.`,
    );
  }
  return { admitted: true, estimatedSlippageBps: slippageBps, notionalUsd: formatDec(notional) };
}

/** Why a book is not evidence of the market now, or null when it is. */
function bookProblem(reading: BookReading | null, nowWall: number): string | null {
  if (!reading) return "Livro de ofertas indisponível.";
  const { book, readAtWall } = reading;
  if (nowWall - readAtWall > BOOK_MAX_AGE_MS) return "Livro de ofertas lido há mais de 2 segundos.";
  if (Math.abs(readAtWall - book.time) > BOOK_MAX_AGE_MS) return "Livro de ofertas desatualizado no provedor.";
  if (!book.bids.length || !book.asks.length) return "Livro de ofertas sem um dos lados.";
  if (cmp(book.bids[0].price, book.asks[0].price) >= 0) return "Livro de ofertas cruzado.";
  const ordered = (levels: OrderBook["bids"], direction: 1 | -1) =>
    levels.every((level, i) =>
      cmp(level.quantity, "0") > 0 && (i === 0 || cmp(level.price, levels[i - 1].price) === direction)
    );
  if (!ordered(book.bids, -1) || !ordered(book.asks, 1)) return "Livro de ofertas inconsistente.";
  return null;
}
