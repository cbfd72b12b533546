/**
 * Shapes of VENUE_B's JSON, as the venue sends and takes them. Amounts and
 * prices are decimal strings, times epoch ms, addresses lowercase hex.
 * Shared by the adapter (reading) and the simulator (writing).
 */
import type { HexAddress } from "../types.ts";

/** Time in force of a limit order. */
export type Tif = "Gtc" | "Ioc" | "Alo";

/** The `t` of an order: a limit with its TIF, or a trigger (keys in hashing order). */
export type WireOrderType =
  | { limit: { tif: Tif } }
  | { trigger: { isMarket: boolean; triggerPx: string; tpsl: "tp" | "sl" } };

/** One order of an `order` action, keys in the venue's hashing order. */
export interface WireOrder {
  a: number;
  b: boolean;
  p: string;
  s: string;
  r: boolean;
  t: WireOrderType;
  c?: HexAddress;
}

/** How the orders of one action relate (TP/SL groupings). */
export type WireGrouping = "na" | "normalTpsl" | "positionTpsl";

/** One entry of `statuses` in an order reply. */
export type WireOrderResult =
  | { resting: { oid: number; cloid?: HexAddress } }
  | { filled: { totalSz: string; avgPx: string; oid: number; cloid?: HexAddress } }
  | { error: string }
  | "waitingForFill"
  | "waitingForTrigger";

/** One coin of `meta.universe`; its index is the asset id of actions. */
export interface WireAsset {
  name: string;
  szDecimals: number;
  maxLeverage: number;
  marginTableId?: number;
  onlyIsolated?: boolean;
  isDelisted?: boolean;
  marginMode?: "strictIsolated" | "noCross";
}

/** Reply of `meta`. */
export interface WireMeta {
  universe: WireAsset[];
  marginTables?: unknown[];
  collateralToken?: number;
}

/** Per-coin market context of `metaAndAssetCtxs`. */
export interface WireAssetCtx {
  dayNtlVlm: string;
  funding: string;
  impactPxs: [string, string] | null;
  markPx: string;
  midPx: string | null;
  openInterest: string;
  oraclePx: string;
  premium: string | null;
  prevDayPx: string;
  dayBaseVlm: string;
}

/** One price level of `l2Book`. */
export interface WireLevel {
  px: string;
  sz: string;
  n: number;
}

/** Reply of `l2Book`: bids then asks, best first. */
export interface WireL2Book {
  coin: string;
  time: number;
  levels: [WireLevel[], WireLevel[]];
}

/** A position's or coin's leverage setting. */
export type WireLeverage = { type: "cross"; value: number } | { type: "isolated"; value: number; rawUsd: string };

/** One position of `clearinghouseState`; `szi` is signed. */
export interface WirePosition {
  coin: string;
  szi: string;
  entryPx: string;
  positionValue: string;
  unrealizedPnl: string;
  returnOnEquity: string;
  leverage: WireLeverage;
  liquidationPx: string | null;
  marginUsed: string;
  maxLeverage: number;
  cumFunding: { allTime: string; sinceOpen: string; sinceChange: string };
}

/** Account totals of `clearinghouseState`. */
export interface WireMarginSummary {
  accountValue: string;
  totalNtlPos: string;
  totalRawUsd: string;
  totalMarginUsed: string;
}

/** Reply of `clearinghouseState`. */
export interface WireClearinghouseState {
  assetPositions: { type: "oneWay"; position: WirePosition }[];
  marginSummary: WireMarginSummary;
  crossMarginSummary: WireMarginSummary;
  crossMaintenanceMarginUsed: string;
  withdrawable: string;
  time: number;
}

/**
 * `userAbstraction` (a bare JSON string). Under `unifiedAccount` and
 * `portfolioMargin` the account's balances and holds live in the spot
 * clearinghouse state; the perp state then does not describe collateral.
 */
export type WireUserAbstraction = "unifiedAccount" | "portfolioMargin" | "disabled" | "default" | "dexAbstraction";

/** One token row of `spotClearinghouseState.balances`. */
export interface WireSpotBalance {
  coin: string;
  token: number;
  total: string;
  hold: string;
  entryNtl: string;
}

export interface WireSpotClearinghouseState {
  balances: WireSpotBalance[];
  portfolioMarginEnabled?: boolean;
}

/** One order of `frontendOpenOrders`, also the order inside `orderStatus`. */
export interface WireFrontendOrder {
  coin: string;
  side: "B" | "A";
  limitPx: string;
  sz: string;
  oid: number;
  timestamp: number;
  origSz: string;
  orderType: string;
  tif: Tif | "FrontendMarket" | "LiquidationMarket" | null;
  isTrigger: boolean;
  triggerPx: string;
  triggerCondition: string;
  isPositionTpsl: boolean;
  reduceOnly: boolean;
  children: WireFrontendOrder[];
  cloid: HexAddress | null;
}

/** Reply of `orderStatus`. */
export type WireOrderStatus =
  | { status: "order"; order: { order: WireFrontendOrder; status: string; statusTimestamp: number } }
  | { status: "unknownOid" };

/** One fill of `userFills` / `userFillsByTime`; `fee` includes `builderFee`. */
export interface WireFill {
  coin: string;
  px: string;
  sz: string;
  side: "B" | "A";
  time: number;
  startPosition: string;
  dir: string;
  closedPnl: string;
  hash: HexAddress;
  oid: number;
  crossed: boolean;
  fee: string;
  tid: number;
  feeToken: string;
  builderFee?: string;
  cloid?: HexAddress;
}

/** One entry of `userFunding`; negative `usdc` = paid. */
export interface WireFunding {
  time: number;
  hash: HexAddress;
  delta: { type: "funding"; coin: string; usdc: string; szi: string; fundingRate: string; nSamples: number | null };
}

/** One entry of `userNonFundingLedgerUpdates`. */
export interface WireLedgerUpdate {
  time: number;
  hash: HexAddress;
  delta: { type: string } & Record<string, unknown>;
}

/** Reply of `activeAssetData`. */
export interface WireActiveAssetData {
  user: HexAddress;
  coin: string;
  leverage: WireLeverage;
  maxTradeSzs: [string, string];
  availableToTrade: [string, string];
  markPx: string;
}

/** Reply of `userRole`. */
export type WireUserRole =
  | { role: "user" | "missing" | "vault" }
  | { role: "agent"; data: { user: HexAddress } }
  | { role: "subAccount"; data: { master: HexAddress } };

/** One agent of `extraAgents`. */
export interface WireExtraAgent {
  name: string;
  address: HexAddress;
  validUntil: number | null;
}
