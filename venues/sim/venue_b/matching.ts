/**
 * Execution in the simulator: taker orders walk a synthetic book around the
 * bid/ask, resting limits fill as makers when the mark moves through them,
 * trigger orders fire on the mark, and every fill moves the position, the
 * realised PnL, the venue fee and the builder fee.
 */
import { abs, add, cmp, div, isZero, min, mul, neg, roundTo, sub } from "../../decimal.ts";
import { priceStep } from "../../venue_b/mappers.ts";
import { accruesBuilderFees } from "../../venue_b/builder_standing.ts";
import type { WireFill, WireFunding } from "../../venue_b/wire.ts";
import { publishFill, publishFunding, publishOrder } from "./feed.ts";
import {
  ensureUser,
  nextHash,
  type SimMarket,
  type SimOrder,
  type SimPosition,
  type SimState,
  type SimUser,
  wire,
} from "./state.ts";

/** The venue's base tier: 0.045% taker, 0.015% maker. */
const TAKER_FEE_RATE = "0.00045";
const MAKER_FEE_RATE = "0.00015";
const BOOK_LEVELS = 20;

/** The synthetic book side a taker on `isBuy` consumes, best level first. */
export function bookSide(market: SimMarket, asks: boolean): { px: string; sz: string }[] {
  const step = priceStep(market.markPx, market.szDecimals);
  return Array.from({ length: BOOK_LEVELS }, (_, level) => ({
    px: asks ? add(market.ask, mul(step, level)) : sub(market.bid, mul(step, level)),
    sz: market.depth,
  })).filter((level) => cmp(level.px, "0") > 0);
}

/** How much of `order` may still fill: all of it, or for reduce-only what closes the position. */
function fillable(user: SimUser, order: SimOrder, market: SimMarket): string {
  if (!order.reduceOnly) return order.sz;
  const position = user.positions.get(market.coin);
  if (!position || isZero(position.szi)) return "0";
  const closes = order.isBuy ? cmp(position.szi, "0") < 0 : cmp(position.szi, "0") > 0;
  return closes ? min(order.sz, abs(position.szi)) : "0";
}

function direction(start: string, signed: string): string {
  const long = cmp(start, "0") > 0;
  const short = cmp(start, "0") < 0;
  const buying = cmp(signed, "0") > 0;
  if ((!long && !short) || (long && buying) || (short && !buying)) return buying ? "Open Long" : "Open Short";
  if (cmp(abs(signed), abs(start)) <= 0) return long ? "Close Long" : "Close Short";
  return long ? "Long > Short" : "Short > Long";
}

/** Books one fill of `order` at `px` for `sz`: position, PnL, fees, the fill record. */
function applyFill(
  state: SimState,
  user: SimUser,
  order: SimOrder,
  px: string,
  sz: string,
  crossed: boolean,
): WireFill {
  const market = state.markets[order.asset];
  const position: SimPosition = user.positions.get(market.coin) ??
    { szi: "0", entryPx: "0", cumFunding: { allTime: "0", sinceOpen: "0", sinceChange: "0" } };
  const start = position.szi;
  const signed = order.isBuy ? sz : neg(sz);
  const opposite = !isZero(start) && (cmp(start, "0") > 0) !== order.isBuy;
  const closing = opposite ? min(abs(start), sz) : "0";
  const closedPnl = opposite ? mul(mul(sub(px, position.entryPx), closing), cmp(start, "0") > 0 ? "1" : "-1") : "0";
  const after = add(start, signed);
  if (!opposite) {
    position.entryPx = div(add(mul(position.entryPx, abs(start)), mul(px, sz)), abs(after), 8);
  } else if (cmp(abs(signed), abs(start)) > 0) {
    position.entryPx = px;
    position.cumFunding.sinceOpen = "0";
  }
  position.szi = after;
  if (isZero(after)) user.positions.delete(market.coin);
  else user.positions.set(market.coin, position);

  const notional = mul(px, sz);
  const venueFee = roundTo(mul(notional, crossed ? TAKER_FEE_RATE : MAKER_FEE_RATE), 6, "HALF_UP");
  const builderFee = order.builder ? roundTo(div(mul(notional, order.builder.f), 100000, 12), 6, "HALF_UP") : "0";
  const fee = add(venueFee, builderFee);
  user.usdc = sub(add(user.usdc, closedPnl), fee);
  // Builder fees accrue only to a builder in standard mode (HL docs, account abstraction modes);
  // the trader is still charged and the fill still reports the fee.
  const builder = order.builder && !isZero(builderFee) ? ensureUser(state, order.builder.b) : null;
  if (builder && accruesBuilderFees(builder.abstraction)) {
    builder.builderRewards = add(builder.builderRewards, builderFee);
  }
  order.sz = sub(order.sz, sz);
  const fill: WireFill = {
    coin: market.coin,
    px: wire(px),
    sz: wire(sz),
    side: order.isBuy ? "B" : "A",
    time: state.now(),
    startPosition: wire(start),
    dir: direction(start, signed),
    closedPnl: wire(closedPnl),
    hash: nextHash(state),
    oid: order.oid,
    crossed,
    fee: wire(fee),
    tid: state.counters.tid++,
    feeToken: "USDC",
    ...(isZero(builderFee) ? {} : { builderFee: wire(builderFee) }),
    ...(order.cloid ? { cloid: order.cloid } : {}),
  };
  user.fills.push(fill);
  publishFill(state, order, fill);
  return fill;
}

/** Takes liquidity for `order` up to its limit price; returns the fills made. */
export function executeTaker(state: SimState, user: SimUser, order: SimOrder): WireFill[] {
  const market = state.markets[order.asset];
  const fills: WireFill[] = [];
  for (const level of bookSide(market, order.isBuy)) {
    const beyondLimit = order.isBuy ? cmp(level.px, order.limitPx) > 0 : cmp(level.px, order.limitPx) < 0;
    const size = min(level.sz, fillable(user, order, market));
    if (beyondLimit || isZero(size)) break;
    fills.push(applyFill(state, user, order, level.px, size, true));
  }
  return fills;
}

/** Whether `order` would take liquidity at once. */
export function crosses(market: SimMarket, order: { isBuy: boolean; limitPx: string }): boolean {
  return order.isBuy ? cmp(order.limitPx, market.ask) >= 0 : cmp(order.limitPx, market.bid) <= 0;
}

function settle(state: SimState, order: SimOrder, status: string) {
  order.status = status;
  order.statusTimestamp = state.now();
  publishOrder(state, order);
}

function triggered(order: SimOrder, markPx: string): boolean {
  const { tpsl, triggerPx } = order.trigger!;
  // A stop fires when the mark moves against the position it protects, a take-profit when it moves in favour.
  const above = cmp(markPx, triggerPx) >= 0;
  const below = cmp(markPx, triggerPx) <= 0;
  if (tpsl === "sl") return order.isBuy ? above : below;
  return order.isBuy ? below : above;
}

/**
 * Runs resting limits and triggers of one market against its (new) mark. A market
 * trigger that fires takes the venue's `triggered` status under its own oid and
 * cloid, then executes as a market order whose fills carry that oid (and cloid)
 * and ends `filled`; under the trigger hold it waits at `triggered`.
 */
export function matchOnMark(state: SimState, asset: number): void {
  const market = state.markets[asset];
  const live = (order: SimOrder) => order.status === "open" || order.status === "triggered";
  const open = [...state.orders.values()].filter((order) => order.asset === asset && live(order));
  for (const order of open.sort((a, b) => a.oid - b.oid)) {
    const user = state.users.get(order.user)!;
    if (order.trigger) {
      if (order.status === "open") {
        if (!triggered(order, market.markPx)) continue;
        if (!order.trigger.isMarket) {
          // A limit trigger becomes a plain resting limit once fired.
          publishOrder(state, order, "triggered");
          order.trigger = null;
          order.tif = "Gtc";
          continue;
        }
        settle(state, order, "triggered");
      }
      if (state.triggerHold) continue;
      const fills = executeTaker(state, user, order);
      settle(state, order, fills.length ? "filled" : "reduceOnlyCanceled");
      continue;
    }
    const reached = order.isBuy ? cmp(order.limitPx, market.markPx) >= 0 : cmp(order.limitPx, market.markPx) <= 0;
    if (!reached) continue;
    const size = fillable(user, order, market);
    if (isZero(size)) {
      settle(state, order, "reduceOnlyCanceled");
      continue;
    }
    applyFill(state, user, order, order.limitPx, size, false);
    if (isZero(order.sz) || order.reduceOnly) settle(state, order, isZero(order.sz) ? "filled" : "reduceOnlyCanceled");
    else publishOrder(state, order);
  }
}

/** Pays one funding interval on `asset` at `rate`: longs pay shorts when the rate is positive. */
export function applyFunding(state: SimState, asset: number, rate: string): number {
  const market = state.markets[asset];
  market.fundingRate = rate;
  let payments = 0;
  for (const user of state.users.values()) {
    const position = user.positions.get(market.coin);
    if (!position) continue;
    const usdc = roundTo(neg(mul(mul(position.szi, market.markPx), rate)), 6, "HALF_UP");
    user.usdc = add(user.usdc, usdc);
    for (const key of ["allTime", "sinceOpen", "sinceChange"] as const) {
      position.cumFunding[key] = sub(position.cumFunding[key], usdc);
    }
    const entry: WireFunding = {
      time: state.now(),
      hash: nextHash(state),
      delta: {
        type: "funding",
        coin: market.coin,
        usdc: wire(usdc),
        szi: wire(position.szi),
        fundingRate: rate,
        nSamples: null,
      },
    };
    user.funding.push(entry);
    publishFunding(state, user.address, entry);
    payments++;
  }
  return payments;
}
