/**
 * What the simulator's engine tells its WebSocket: every order status it
 * sets, every fill (with the public trade it makes) and every funding
 * payment, already in the venue's wire shapes and taken at the moment they
 * happen (orders keep changing afterwards). The engine calls these; the
 * stream (stream.ts) listens. With no listener they cost nothing.
 */
import type { HexAddress } from "../../types.ts";
import type { WsOrder, WsTrade, WsUserFunding } from "../../venue_b/stream_wire.ts";
import type { WireFill, WireFunding } from "../../venue_b/wire.ts";
import { basicOrder } from "./info.ts";
import type { SimOrder, SimState } from "./state.ts";

/**
 * The other side of every trade in the simulator: its synthetic book has no
 * users, so public trades name this address where the venue would name the
 * resting or taking counterparty.
 */
export const BOOK_ADDRESS: HexAddress = "0x000000000000000000000000000000000000b00c";

/** One change the engine made. */
export type SimEvent =
  | { kind: "order"; user: HexAddress; update: WsOrder }
  | { kind: "fill"; user: HexAddress; fill: WireFill; trade: WsTrade }
  | { kind: "funding"; user: HexAddress; funding: WsUserFunding };

function publish(state: SimState, event: SimEvent): void {
  for (const listener of state.feed) listener(event);
}

/** The order's status as it stands now (or `status` when the engine passes through one without keeping it). */
export function publishOrder(state: SimState, order: SimOrder, status = order.status): void {
  if (!state.feed.size) return;
  publish(state, {
    kind: "order",
    user: order.user,
    update: { order: basicOrder(state, order), status, statusTimestamp: state.now() },
  });
}

/** A fill of `order` and the trade it made; `crossed` says whether the order took (the trade's side is the taker's). */
export function publishFill(state: SimState, order: SimOrder, fill: WireFill): void {
  if (!state.feed.size) return;
  const takerBuys = fill.crossed === order.isBuy;
  publish(state, {
    kind: "fill",
    user: order.user,
    fill,
    trade: {
      coin: fill.coin,
      side: takerBuys ? "B" : "A",
      px: fill.px,
      sz: fill.sz,
      hash: fill.hash,
      time: fill.time,
      tid: fill.tid,
      users: order.isBuy ? [order.user, BOOK_ADDRESS] : [BOOK_ADDRESS, order.user],
    },
  });
}

/** A funding payment booked to `user`. */
export function publishFunding(state: SimState, user: HexAddress, entry: WireFunding): void {
  if (!state.feed.size) return;
  const { type: _type, ...funding } = entry.delta;
  publish(state, { kind: "funding", user, funding: { time: entry.time, ...funding } });
}
