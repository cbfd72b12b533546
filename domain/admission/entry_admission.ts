/**
 * Entry-moment admission (spec, Admission refusals for new real entries): the
 * checks an opening order must pass at the moment it is sent, after the entry
 * gates allowed the account. A pure function of the asset's entry policy, the
 * order book read for the symbol (once per signal, not per account) and the
 * order; the first failing check is the refusal. Maintenance never comes here.
 */
import { abs, add, cmp, div, formatDec, isZero, mul, sub } from "../../venues/decimal.ts";
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

const usd = (micros: number) => formatDec({ units: BigInt(micros), scale: 6 });
const refuse = (code: AdmissionRefusal, detail: string): AdmissionDecision => ({ admitted: false, code, detail });

/** The book's per-signal facts, worked out once and shared by every account's admission. */
export type PreparedBook =
  | { problem: string }
  | { problem: null; book: OrderBook; spreadBps: string; visibleBids: string; visibleAsks: string };

export function prepareBook(reading: BookReading | null, nowWall: number): PreparedBook {
  const problem = bookProblem(reading, nowWall);
  if (problem) return { problem };
  const { book } = reading!;
  const mid = div(add(book.bids[0].price, book.asks[0].price), 2, 12);
  const total = (levels: OrderBook["bids"]) => levels.reduce((sum, level) => add(sum, level.quantity), "0");
  return {
    problem: null,
    book,
    spreadBps: div(mul(sub(book.asks[0].price, book.bids[0].price), 10_000), mid, 4),
    visibleBids: total(book.bids),
    visibleAsks: total(book.asks),
  };
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
  const notional = mul(order.quantity, order.price);
  if (cmp(notional, usd(policy.minNotionalMicros)) < 0 || cmp(notional, usd(policy.maxNotionalMicros)) > 0) {
    return refuse(
      "ASSET_NOTIONAL_LIMIT",
      `Notional ${notional} fora do intervalo do ativo (${usd(policy.minNotionalMicros)} a ${
        usd(policy.maxNotionalMicros)
      } USD).`,
    );
  }
  if (prepared.problem !== null) return refuse("BOOK_UNVERIFIED", prepared.problem);
  if (cmp(prepared.spreadBps, policy.maxSpreadBps) > 0) {
    return refuse(
      "SPREAD_LIMIT",
      `Spread de ${prepared.spreadBps} bps acima do limite de ${policy.maxSpreadBps} bps.`,
    );
  }
  const taking = order.side === "BUY" ? prepared.book.asks : prepared.book.bids;
  const visible = order.side === "BUY" ? prepared.visibleAsks : prepared.visibleBids;
  if (cmp(order.quantity, mul(visible, policy.maxBookFraction)) > 0) {
    return refuse(
      "LIQUIDITY_LIMIT",
      `A entrada (${order.quantity}) excede ${policy.maxBookFraction} da liquidez visível (${visible}).`,
    );
  }
  const average = averageFillPrice(taking, order.quantity);
  const best = taking[0].price;
  const slippageBps = div(mul(abs(sub(average, best)), 10_000), best, 4);
  if (cmp(slippageBps, policy.maxSlippageBps) > 0) {
    return refuse(
      "SLIPPAGE_LIMIT",
      `Slippage estimado de ${slippageBps} bps acima do limite de ${policy.maxSlippageBps} bps.`,
    );
  }
  return { admitted: true, estimatedSlippageBps: slippageBps, notionalUsd: notional };
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

/** The average price of taking `quantity` from `levels`, best first (caller checked it fits the book). */
function averageFillPrice(levels: OrderBook["bids"], quantity: string): string {
  let left = quantity;
  let cost = "0";
  for (const level of levels) {
    if (isZero(left) || cmp(left, "0") < 0) break;
    const take = cmp(level.quantity, left) < 0 ? level.quantity : left;
    cost = add(cost, mul(take, level.price));
    left = sub(left, take);
  }
  return div(cost, quantity, 12);
}
