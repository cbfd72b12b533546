/**
 * Translation between VENUE_B's wire shapes and our normalised venue types,
 * plus the venue's price/size rounding rules.
 */
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import {
  abs,
  add,
  cmp,
  div,
  formatDec,
  isZero,
  mul,
  parseDec,
  type RoundingMode,
  roundSignificant,
  roundTo,
  sub,
} from "../decimal.ts";
import type {
  Decimal,
  Fill,
  FundingPayment,
  HexAddress,
  LedgerEntry,
  Market,
  Order,
  OrderStatus,
  OrderType,
  Position,
  TimeInForce,
} from "../types.ts";
import {
  INTEGER_PRICE_THRESHOLD,
  MAX_SIGNIFICANT_FIGURES,
  MIN_ORDER_VALUE_USD,
  PERP_MAX_DECIMALS,
  QUOTE_ASSET,
} from "./constants.ts";
import type {
  WireAsset,
  WireAssetCtx,
  WireFill,
  WireFrontendOrder,
  WireFunding,
  WireLedgerUpdate,
  WirePosition,
} from "./wire.ts";

// ---------------------------------------------------------------- symbols and ids

/** Our symbol for a coin: "BTC" -> "BTCUSDC". */
export function toSymbol(coin: string): string {
  return `${coin}${QUOTE_ASSET}`;
}

/** The coin named by our symbol ("BTCUSDC") or by the venue's own name ("BTC"). */
export function findAsset(universe: WireAsset[], symbolOrCoin: string): { index: number; asset: WireAsset } | null {
  const candidates = [symbolOrCoin];
  if (symbolOrCoin.endsWith(QUOTE_ASSET)) candidates.push(symbolOrCoin.slice(0, -QUOTE_ASSET.length));
  for (const name of candidates) {
    const index = universe.findIndex((asset) => asset.name === name);
    if (index >= 0) return { index, asset: universe[index] };
  }
  return null;
}

/**
 * The cloid for our client order id: the first 16 bytes of its keccak256.
 * Deterministic, so a resubmission carries the same cloid and cannot create a
 * second order.
 */
export function cloidFromClientOrderId(clientOrderId: string): HexAddress {
  return `0x${bytesToHex(keccak_256(new TextEncoder().encode(clientOrderId)).subarray(0, 16))}`;
}

/** "0x1234…abcd": enough to recognise a wallet, not to copy it. */
export function accountHint(address: string): string {
  return `${address.slice(0, 4)}…${address.slice(-4)}`;
}

// ---------------------------------------------------------------- rounding rules

/** The canonical wire form of a decimal: no trailing zeros, never "-0". */
export function wireDecimal(value: Decimal): string {
  return formatDec(parseDec(value));
}

function maxPriceDecimals(szDecimals: number): number {
  return Math.max(0, PERP_MAX_DECIMALS - szDecimals);
}

/**
 * A price the venue accepts: at most five significant figures (integers are
 * always fine) and at most 6 - szDecimals decimals, rounded in `mode`.
 * Both roundings are on power-of-ten grids, so rounding twice in the same
 * direction equals rounding once on the coarser grid.
 */
export function formatPrice(price: Decimal, szDecimals: number, mode: RoundingMode): string {
  if (cmp(abs(price), INTEGER_PRICE_THRESHOLD) >= 0) return wireDecimal(roundTo(price, 0, mode));
  const significant = roundSignificant(price, MAX_SIGNIFICANT_FIGURES, mode);
  return wireDecimal(roundTo(significant, maxPriceDecimals(szDecimals), mode));
}

/** Sizes are truncated to the lot: an order is never bigger than asked. */
export function formatSize(size: Decimal, szDecimals: number): string {
  return wireDecimal(roundTo(size, szDecimals, "DOWN"));
}

function powerOfTen(exponent: number): string {
  return exponent >= 0 ? `1${"0".repeat(exponent)}` : `0.${"0".repeat(-exponent - 1)}1`;
}

/** The price increment at `price`'s magnitude (what a fixed tick would be there). */
export function priceStep(price: Decimal, szDecimals: number): string {
  if (cmp(abs(price), INTEGER_PRICE_THRESHOLD) >= 0) return "1";
  const text = wireDecimal(abs(price));
  const [whole, fraction = ""] = text.split(".");
  const exponent = whole !== "0" ? whole.length - 1 : -(fraction.search(/[1-9]/) + 1);
  const exponentOfStep = Math.max(exponent - (MAX_SIGNIFICANT_FIGURES - 1), -maxPriceDecimals(szDecimals));
  return powerOfTen(exponentOfStep);
}

// ---------------------------------------------------------------- market data

/** Our market for a universe entry; the tick is the price step at the current mark. */
export function toMarket(asset: WireAsset, ctx: WireAssetCtx | undefined): Market {
  const lot = powerOfTen(-asset.szDecimals);
  return {
    symbol: toSymbol(asset.name),
    providerSymbol: asset.name,
    kind: "PERPETUAL",
    base: asset.name,
    quote: QUOTE_ASSET,
    active: !asset.isDelisted,
    tickSize: ctx ? priceStep(ctx.markPx, asset.szDecimals) : powerOfTen(-maxPriceDecimals(asset.szDecimals)),
    stepSize: lot,
    minQty: lot,
    minNotionalUsd: MIN_ORDER_VALUE_USD,
    quantityPrecision: asset.szDecimals,
    pricePrecision: maxPriceDecimals(asset.szDecimals),
    maxLeverage: asset.maxLeverage,
  };
}

// ---------------------------------------------------------------- orders

const TIF: Record<string, TimeInForce> = { Gtc: "GTC", Ioc: "IOC", Alo: "POST_ONLY", FrontendMarket: "IOC" };

const ORDER_TYPE: Record<string, OrderType> = {
  "Market": "MARKET",
  "Stop Market": "STOP_MARKET",
  "Stop Limit": "STOP_MARKET",
  "Take Profit Market": "TAKE_PROFIT_MARKET",
  "Take Profit Limit": "TAKE_PROFIT_MARKET",
};

/**
 * Our status for one of the venue's order statuses. `triggered` (SDK
 * OrderProcessingStatus: "Order triggered and awaiting execution"; the order
 * keeps its oid and cloid and its fills carry them) is no longer waiting for
 * its trigger, so not TRIGGER_PENDING (which says it can still be cancelled
 * before it fires): NEW, or PARTIALLY_FILLED once it executed some, as
 * VENUE_A's TRIGGERED reads. The adapter never modifies it. Where
 * the venue does not say whether an open order waits for a trigger (the
 * WebSocket's orderUpdates), an open one reads NEW or PARTIALLY_FILLED.
 */
export function toOrderStatus(
  status: string,
  order: Pick<WireFrontendOrder, "origSz" | "sz"> & { isTrigger?: boolean },
): OrderStatus {
  if (status === "open") {
    if (order.isTrigger) return "TRIGGER_PENDING";
    return cmp(order.origSz, order.sz) > 0 ? "PARTIALLY_FILLED" : "NEW";
  }
  if (status === "filled") return "FILLED";
  if (status === "triggered") return cmp(order.origSz, order.sz) > 0 ? "PARTIALLY_FILLED" : "NEW";
  if (status === "rejected" || status.endsWith("Rejected")) return "REJECTED";
  return "CANCELED";
}

/**
 * An order as the venue reports it. `clientOrderId` is ours when the caller
 * knows it; listings only have the cloid, which is then reported instead
 * (the domain maps it with cloidFromClientOrderId).
 */
export function toOrder(
  order: WireFrontendOrder,
  status: string,
  clientOrderId: string | null,
  averagePrice: Decimal | null = null,
): Order {
  return {
    orderId: String(order.oid),
    clientOrderId: clientOrderId ?? order.cloid,
    symbol: toSymbol(order.coin),
    side: order.side === "B" ? "BUY" : "SELL",
    type: ORDER_TYPE[order.orderType] ?? "LIMIT",
    status: toOrderStatus(status, order),
    quantity: wireDecimal(order.origSz),
    filledQuantity: wireDecimal(sub(order.origSz, order.sz)),
    price: wireDecimal(order.limitPx),
    averagePrice,
    triggerPrice: order.isTrigger ? wireDecimal(order.triggerPx) : null,
    reduceOnly: order.reduceOnly,
    timeInForce: order.tif ? TIF[order.tif] ?? null : null,
    createdAt: order.timestamp,
  };
}

/** Volume-weighted price of the fills of one order, or null before any fill. */
export function averageFillPrice(fills: WireFill[], oid: number): Decimal | null {
  let quantity = "0";
  let notional = "0";
  for (const fill of fills) {
    if (fill.oid !== oid) continue;
    quantity = add(quantity, fill.sz);
    notional = add(notional, mul(fill.px, fill.sz));
  }
  return isZero(quantity) ? null : wireDecimal(div(notional, quantity, 8, "HALF_UP"));
}

// ---------------------------------------------------------------- account

/** Our position for a clearinghouse position. */
export function toPosition(position: WirePosition): Position {
  const quantity = abs(position.szi);
  return {
    symbol: toSymbol(position.coin),
    side: cmp(position.szi, "0") > 0 ? "LONG" : "SHORT",
    quantity: wireDecimal(quantity),
    entryPrice: wireDecimal(position.entryPx),
    // The venue reports value, not mark, per position; value / size is the mark it used.
    markPrice: wireDecimal(div(position.positionValue, quantity, 8, "HALF_UP")),
    unrealizedPnlUsd: wireDecimal(position.unrealizedPnl),
    leverage: position.leverage.value,
    marginMode: position.leverage.type === "cross" ? "CROSSED" : "ISOLATED",
    liquidationPrice: position.liquidationPx === null ? null : wireDecimal(position.liquidationPx),
  };
}

/** Our fill for a userFills entry. */
export function toFill(fill: WireFill): Fill {
  return {
    tradeId: String(fill.tid),
    orderId: String(fill.oid),
    clientOrderId: fill.cloid ?? null,
    symbol: toSymbol(fill.coin),
    side: fill.side === "B" ? "BUY" : "SELL",
    price: wireDecimal(fill.px),
    quantity: wireDecimal(fill.sz),
    realizedPnl: wireDecimal(fill.closedPnl),
    fee: wireDecimal(fill.fee),
    feeAsset: fill.feeToken,
    // The venue omits builderFee when it is zero.
    builderFee: wireDecimal(fill.builderFee ?? "0"),
    time: fill.time,
  };
}

/** Our funding payment for a userFunding entry. */
export function toFunding(entry: WireFunding): FundingPayment {
  return {
    symbol: toSymbol(entry.delta.coin),
    amount: wireDecimal(entry.delta.usdc),
    asset: QUOTE_ASSET,
    time: entry.time,
  };
}

/**
 * One ledger update. Sends carry `user`/`destination`/`token`/`amount`/`nonce`
 * and the dexes they moved between (`sourceDex`/`destinationDex`); older
 * delta kinds (internalTransfer, deposit, withdraw) carry `usdc` and maybe no
 * nonce, which stays null so the payment check can refuse to bind on it.
 */
export function toLedgerEntry(update: WireLedgerUpdate, queriedUser: HexAddress): LedgerEntry {
  const delta = update.delta;
  const text = (key: string) => (typeof delta[key] === "string" ? delta[key] as string : undefined);
  return {
    time: update.time,
    hash: update.hash,
    type: delta.type,
    user: (text("user") ?? queriedUser).toLowerCase() as HexAddress,
    destination: (text("destination")?.toLowerCase() as HexAddress | undefined) ?? null,
    amount: wireDecimal(text("amount") ?? text("usdc") ?? "0"),
    token: text("token") ?? QUOTE_ASSET,
    nonce: typeof delta.nonce === "number" ? delta.nonce : null,
    sourceDex: text("sourceDex") ?? null,
    destinationDex: text("destinationDex") ?? null,
  };
}
