/**
 * In-memory state of the VENUE_B simulator and the account arithmetic every
 * other part reads (account value, margin in use, what an order may still use).
 * One state per simulator instance, so parallel tests never share a book.
 */
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { abs, add, cmp, div, formatDec, max, mul, parseDec, sub } from "../../decimal.ts";
import type { HexAddress } from "../../types.ts";
import { priceStep } from "../../venue_b/mappers.ts";
import type { Tif, WireFill, WireFunding, WireLedgerUpdate, WireUserAbstraction } from "../../venue_b/wire.ts";
import type { SimEvent } from "./feed.ts";

/** A listed perp and its current prices. */
export interface SimMarket {
  coin: string;
  szDecimals: number;
  maxLeverage: number;
  markPx: string;
  bid: string;
  ask: string;
  /** Size resting at each of the synthetic book's levels, per side. */
  depth: string;
  fundingRate: string;
  prevDayPx: string;
}

/** A user's position in one coin; `szi` is signed. */
export interface SimPosition {
  szi: string;
  entryPx: string;
  cumFunding: { allTime: string; sinceOpen: string; sinceChange: string };
}

/** A user's leverage setting for one coin. */
export interface SimLeverage {
  type: "cross" | "isolated";
  value: number;
}

/** The trigger of a TP/SL order. */
export interface SimTrigger {
  isMarket: boolean;
  triggerPx: string;
  tpsl: "tp" | "sl";
}

/** An order the venue accepted, open or finished. */
export interface SimOrder {
  oid: number;
  user: HexAddress;
  asset: number;
  isBuy: boolean;
  limitPx: string;
  /** Remaining size. */
  sz: string;
  origSz: string;
  reduceOnly: boolean;
  tif: Tif | null;
  trigger: SimTrigger | null;
  cloid: HexAddress | null;
  builder: { b: HexAddress; f: number } | null;
  timestamp: number;
  status: string;
  statusTimestamp: number;
}

/** A wallet the venue knows: funds, positions, history, approvals. */
export interface SimUser {
  address: HexAddress;
  /** The account abstraction mode `userAbstraction` reports (set through `/_control`). */
  abstraction: WireUserAbstraction;
  usdc: string;
  positions: Map<string, SimPosition>;
  leverage: Map<string, SimLeverage>;
  fills: WireFill[];
  funding: WireFunding[];
  ledger: WireLedgerUpdate[];
  /** builder -> approved maximum, tenths of a basis point. */
  builderApprovals: Map<HexAddress, number>;
  builderRewards: string;
  cloids: Map<HexAddress, number>;
  scheduledCancel: number | null;
}

/** An approved agent wallet. */
export interface SimAgent {
  address: HexAddress;
  user: HexAddress;
  /** "" for the unnamed agent. */
  name: string;
  validUntil: number;
}

/** A usdSend as the payment ledger control route reports it. */
export interface SimSend {
  time: number;
  hash: HexAddress;
  user: HexAddress;
  destination: HexAddress;
  amount: string;
  fee: string;
  nonce: number;
}

/** A signed action refused for its nonce. */
export interface NonceRefusal {
  signer: HexAddress;
  nonce: number;
  reason: string;
}

/** Injected faults (see the control routes). */
export type FaultMode = "NONE" | "DOWN" | "SLOW" | "LOSE_RESPONSE" | "REJECT_KEYS";

/** Everything one simulator instance holds. */
export interface SimState {
  now: () => number;
  isMainnet: boolean;
  markets: SimMarket[];
  users: Map<HexAddress, SimUser>;
  agents: Map<HexAddress, SimAgent>;
  /** signer -> its highest nonces, ascending, at most NONCE_SET_SIZE. */
  nonces: Map<HexAddress, number[]>;
  /** Nonces accepted and refused so far, with the latest refusals (`GET /_control/nonces`). */
  nonceChecks: { accepted: number; refused: number; refusals: NonceRefusal[] };
  orders: Map<number, SimOrder>;
  sends: SimSend[];
  faults: { mode: FaultMode; ms: number };
  /**
   * Holds fired market triggers at the venue's `triggered` status ("Order triggered and awaiting
   * execution") instead of executing them at once (`PUT /_control/trigger-hold`).
   */
  triggerHold: boolean;
  /**
   * The refusal of an order whose cloid the user already used. Its wording is not documented by
   * the venue nor named by its SDK, so it is invented and settable (`PUT /_control/refusals`):
   * nothing may depend on it.
   */
  duplicateCloidText: string;
  counters: { oid: number; tid: number; hash: number };
  /** Who hears of each change the engine makes (the WebSocket, feed.ts). */
  feed: Set<(event: SimEvent) => void>;
}

/** Realistic szDecimals / max leverage of the venue's majors, and prices of the day. */
const LISTINGS: Omit<SimMarket, "bid" | "ask" | "fundingRate" | "prevDayPx">[] = [
  { coin: "BTC", szDecimals: 5, maxLeverage: 40, markPx: "65000", depth: "5" },
  { coin: "ETH", szDecimals: 4, maxLeverage: 25, markPx: "3000", depth: "50" },
  { coin: "SOL", szDecimals: 2, maxLeverage: 20, markPx: "150", depth: "2000" },
];

/** A fresh state with the listings and nothing else. */
export function createSimState(options: { now: () => number; isMainnet: boolean }): SimState {
  return {
    now: options.now,
    isMainnet: options.isMainnet,
    markets: LISTINGS.map((listing) => ({
      ...listing,
      ...spreadAround(listing.markPx, listing.szDecimals),
      fundingRate: "0.0000125",
      prevDayPx: listing.markPx,
    })),
    users: new Map(),
    agents: new Map(),
    nonces: new Map(),
    nonceChecks: { accepted: 0, refused: 0, refusals: [] },
    orders: new Map(),
    sends: [],
    faults: { mode: "NONE", ms: 0 },
    triggerHold: false,
    duplicateCloidText: "Duplicate cloid.",
    counters: { oid: 1_000_000, tid: 1, hash: 0 },
    feed: new Set(),
  };
}

/** A one-tick spread around the mark, the default book when only the mark is set. */
export function spreadAround(markPx: string, szDecimals: number): { bid: string; ask: string } {
  const step = priceStep(markPx, szDecimals);
  return { bid: sub(markPx, step), ask: add(markPx, step) };
}

/** Venue-style decimal text: at least one decimal ("0.0", "65000.0"). */
export function wire(value: string): string {
  return formatDec(parseDec(value), 1);
}

/** A unique transaction-hash-like id for fills and ledger rows. */
export function nextHash(state: SimState): HexAddress {
  state.counters.hash++;
  return `0x${bytesToHex(keccak_256(new TextEncoder().encode(`venue-b-sim-${state.counters.hash}`)))}`;
}

/** The wallet at `address`, if the venue knows it. */
export function findUser(state: SimState, address: string): SimUser | undefined {
  return state.users.get(address.toLowerCase() as HexAddress);
}

/** The wallet at `address`, created empty when new. */
export function ensureUser(state: SimState, address: string): SimUser {
  const key = address.toLowerCase() as HexAddress;
  let user = state.users.get(key);
  if (!user) {
    user = {
      address: key,
      abstraction: "default",
      usdc: "0",
      positions: new Map(),
      leverage: new Map(),
      fills: [],
      funding: [],
      ledger: [],
      builderApprovals: new Map(),
      builderRewards: "0",
      cloids: new Map(),
      scheduledCancel: null,
    };
    state.users.set(key, user);
  }
  return user;
}

/** A listed coin and its asset index. */
export function marketByCoin(state: SimState, coin: string): { index: number; market: SimMarket } | null {
  const index = state.markets.findIndex((market) => market.coin === coin);
  return index < 0 ? null : { index, market: state.markets[index] };
}

/** The user's leverage for a coin: cross 20x (or the coin's max) until set. */
export function leverageOf(user: SimUser, market: SimMarket): SimLeverage {
  return user.leverage.get(market.coin) ?? { type: "cross", value: Math.min(20, market.maxLeverage) };
}

/** PnL of a position at the current mark. */
export function unrealizedPnl(position: SimPosition, market: SimMarket): string {
  return mul(sub(market.markPx, position.entryPx), position.szi);
}

/** Initial margin a position holds at the current mark. */
export function positionMargin(user: SimUser, position: SimPosition, market: SimMarket): string {
  return div(mul(abs(position.szi), market.markPx), leverageOf(user, market).value, 6);
}

function eachPosition(state: SimState, user: SimUser, visit: (position: SimPosition, market: SimMarket) => void) {
  for (const [coin, position] of user.positions) visit(position, marketByCoin(state, coin)!.market);
}

/** USDC plus unrealised PnL of every position. */
export function accountValue(state: SimState, user: SimUser): string {
  let value = user.usdc;
  eachPosition(state, user, (position, market) => value = add(value, unrealizedPnl(position, market)));
  return value;
}

/** Initial margin held by all positions. */
export function marginUsed(state: SimState, user: SimUser): string {
  let used = "0";
  eachPosition(state, user, (position, market) => used = add(used, positionMargin(user, position, market)));
  return used;
}

/** Margin held by resting orders that would open or grow a position. */
export function orderHold(state: SimState, user: SimUser): string {
  let held = "0";
  for (const order of state.orders.values()) {
    if (order.user !== user.address || order.status !== "open" || order.reduceOnly || order.trigger) continue;
    const market = state.markets[order.asset];
    held = add(held, div(mul(order.sz, order.limitPx), leverageOf(user, market).value, 6));
  }
  return held;
}

/** Unified-account and portfolio-margin users keep their collateral in the spot clearinghouse. */
export function usesSpotCollateral(user: SimUser): boolean {
  return user.abstraction === "unifiedAccount" || user.abstraction === "portfolioMargin";
}

/** What may leave the account: value not held as position margin. */
export function withdrawable(state: SimState, user: SimUser): string {
  return max("0", sub(accountValue(state, user), marginUsed(state, user)));
}

/** What a new order may still commit as initial margin. */
export function availableMargin(state: SimState, user: SimUser): string {
  return sub(sub(accountValue(state, user), marginUsed(state, user)), orderHold(state, user));
}

/** An account the venue would act for: it holds value or positions. */
export function isFunded(state: SimState, user: SimUser | undefined): user is SimUser {
  return !!user && (cmp(accountValue(state, user), "0") > 0 || user.positions.size > 0);
}

/**
 * The agent at `address` while the venue still holds it. The venue prunes an
 * agent once it expires or its master has no funds left, and its nonce set
 * with it (GitBook, "Nonces and API wallets"): here on the first touch after
 * the fact, which is all a caller can observe. A pruned agent stays gone when
 * the master is funded again.
 */
export function liveAgent(state: SimState, address: HexAddress): SimAgent | undefined {
  const agent = state.agents.get(address);
  if (!agent || (agent.validUntil > state.now() && isFunded(state, findUser(state, agent.user)))) return agent;
  state.agents.delete(address);
  state.nonces.delete(address);
  return undefined;
}

/** The agents `user` approved that the venue still holds (see liveAgent). */
export function liveAgentsOf(state: SimState, user: HexAddress): SimAgent[] {
  return [...state.agents.values()].filter((agent) => agent.user === user && liveAgent(state, agent.address));
}
