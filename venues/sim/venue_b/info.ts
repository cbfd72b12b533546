/**
 * `POST /info` of the simulator: the venue's read requests with its reply
 * shapes (see venues/venue_b/wire.ts). Unknown request types are a 422 like
 * any body the venue cannot deserialise.
 */
import { abs, add, cmp, div, mul, roundTo, sub } from "../../decimal.ts";
import type { HexAddress } from "../../types.ts";
import type {
  WireClearinghouseState,
  WireExtraAgent,
  WireFrontendOrder,
  WirePosition,
  WireSpotClearinghouseState,
} from "../../venue_b/wire.ts";
import type { WsBasicOrder } from "../../venue_b/stream_wire.ts";
import { hex, integer, record, WireShapeError } from "./canonical.ts";
import { bookSide } from "./matching.ts";
import { addressRateLimit } from "./limits.ts";
import {
  accountValue,
  availableMargin,
  findUser,
  leverageOf,
  liveAgent,
  liveAgentsOf,
  marginUsed,
  marketByCoin,
  positionMargin,
  type SimOrder,
  type SimState,
  type SimUser,
  unrealizedPnl,
  usesSpotCollateral,
  wire,
  withdrawable,
} from "./state.ts";

function meta(state: SimState) {
  return {
    universe: state.markets.map((m) => ({
      name: m.coin,
      szDecimals: m.szDecimals,
      maxLeverage: m.maxLeverage,
      marginTableId: m.maxLeverage,
    })),
    marginTables: [...new Set(state.markets.map((m) => m.maxLeverage))].map((lev) => [
      lev,
      { description: "", marginTiers: [{ lowerBound: "0.0", maxLeverage: lev }] },
    ]),
    collateralToken: 0,
  };
}

function mid(state: SimState, index: number): string {
  const market = state.markets[index];
  return div(add(market.bid, market.ask), 2, 8);
}

function assetCtxs(state: SimState) {
  return state.markets.map((m, index) => ({
    dayNtlVlm: "0.0",
    funding: m.fundingRate,
    impactPxs: [wire(m.bid), wire(m.ask)],
    markPx: wire(m.markPx),
    midPx: wire(mid(state, index)),
    openInterest: "0.0",
    oraclePx: wire(m.markPx),
    premium: "0.0",
    prevDayPx: wire(m.prevDayPx),
    dayBaseVlm: "0.0",
  }));
}

function frontendOrder(state: SimState, order: SimOrder): WireFrontendOrder {
  const market = state.markets[order.asset];
  const trigger = order.trigger;
  const kind = trigger?.tpsl === "sl" ? "Stop" : "Take Profit";
  const firesAbove = trigger && ((trigger.tpsl === "sl") === order.isBuy);
  return {
    coin: market.coin,
    side: order.isBuy ? "B" : "A",
    limitPx: wire(order.limitPx),
    sz: wire(order.sz),
    oid: order.oid,
    timestamp: order.timestamp,
    origSz: wire(order.origSz),
    orderType: trigger ? `${kind} ${trigger.isMarket ? "Market" : "Limit"}` : "Limit",
    tif: order.tif,
    isTrigger: !!trigger,
    triggerPx: trigger ? wire(trigger.triggerPx) : "0.0",
    triggerCondition: trigger ? `Price ${firesAbove ? "above" : "below"} ${wire(trigger.triggerPx)}` : "N/A",
    isPositionTpsl: false,
    reduceOnly: order.reduceOnly,
    children: [],
    cloid: order.cloid,
  };
}

/** An order as `openOrders` lists it and `orderUpdates` pushes it: cloid and reduceOnly only when set. */
export function basicOrder(state: SimState, order: SimOrder): WsBasicOrder {
  const { coin, side, limitPx, sz, oid, timestamp, origSz, cloid, reduceOnly } = frontendOrder(state, order);
  return {
    coin,
    side,
    limitPx,
    sz,
    oid,
    timestamp,
    origSz,
    ...(cloid ? { cloid } : {}),
    ...(reduceOnly ? { reduceOnly: true as const } : {}),
  };
}

function openOrdersOf(state: SimState, user: HexAddress): SimOrder[] {
  return [...state.orders.values()].filter((order) => order.user === user && order.status === "open");
}

function clearinghouse(state: SimState, user: SimUser | undefined): WireClearinghouseState {
  const value = user ? accountValue(state, user) : "0";
  const used = user ? marginUsed(state, user) : "0";
  let notional = "0";
  let maintenance = "0";
  let signedNotional = "0";
  const positions: WirePosition[] = [];
  for (const [coin, position] of user?.positions ?? []) {
    const market = marketByCoin(state, coin)!.market;
    const size = abs(position.szi);
    notional = add(notional, mul(size, market.markPx));
    signedNotional = add(signedNotional, mul(position.szi, market.markPx));
    maintenance = add(maintenance, div(mul(size, market.markPx), 2 * market.maxLeverage, 6));
  }
  for (const [coin, position] of user?.positions ?? []) {
    const market = marketByCoin(state, coin)!.market;
    const leverage = leverageOf(user!, market);
    const margin = positionMargin(user!, position, market);
    const pnl = unrealizedPnl(position, market);
    // One shared-collateral estimate: the mark at which account value meets maintenance margin.
    const liquidation = sub(market.markPx, div(sub(value, maintenance), position.szi, 6));
    positions.push({
      coin,
      szi: wire(position.szi),
      entryPx: wire(position.entryPx),
      positionValue: wire(mul(abs(position.szi), market.markPx)),
      unrealizedPnl: wire(roundTo(pnl, 6, "HALF_UP")),
      returnOnEquity: wire(div(pnl, div(mul(abs(position.szi), position.entryPx), leverage.value, 6), 8)),
      leverage: leverage.type === "cross"
        ? { type: "cross", value: leverage.value }
        : { type: "isolated", value: leverage.value, rawUsd: wire(sub(margin, mul(position.szi, position.entryPx))) },
      liquidationPx: cmp(liquidation, "0") > 0 ? wire(liquidation) : null,
      marginUsed: wire(margin),
      maxLeverage: market.maxLeverage,
      cumFunding: {
        allTime: wire(position.cumFunding.allTime),
        sinceOpen: wire(position.cumFunding.sinceOpen),
        sinceChange: wire(position.cumFunding.sinceChange),
      },
    });
  }
  // The collateral of a unified or portfolio-margin account is reported in its spot state, not here.
  const spotCollateral = user !== undefined && usesSpotCollateral(user);
  const reported = spotCollateral ? sub(value, user.usdc) : value;
  const summary = {
    accountValue: wire(roundTo(reported, 6, "HALF_UP")),
    totalNtlPos: wire(notional),
    totalRawUsd: wire(roundTo(sub(reported, signedNotional), 6, "HALF_UP")),
    totalMarginUsed: wire(used),
  };
  return {
    assetPositions: positions.map((position) => ({ type: "oneWay", position })),
    marginSummary: summary,
    crossMarginSummary: summary,
    crossMaintenanceMarginUsed: wire(maintenance),
    withdrawable: wire(roundTo(user && !spotCollateral ? withdrawable(state, user) : "0", 6, "DOWN")),
    time: state.now(),
  };
}

/** USDC is the only token the simulator holds; it shows here for accounts whose collateral lives in spot. */
function spotClearinghouse(state: SimState, user: SimUser | undefined): WireSpotClearinghouseState {
  if (!user || !usesSpotCollateral(user)) return { balances: [] };
  const usdc = { coin: "USDC", token: 0, total: wire(user.usdc), hold: wire(marginUsed(state, user)), entryNtl: "0.0" };
  return { balances: [usdc], ...(user.abstraction === "portfolioMargin" ? { portfolioMarginEnabled: true } : {}) };
}

function inRange<T extends { time: number }>(items: T[], body: Record<string, unknown>, cap: number): T[] {
  const start = integer(body.startTime, "startTime");
  const end = body.endTime === undefined || body.endTime === null ? Infinity : integer(body.endTime, "endTime");
  return items.filter((item) => item.time >= start && item.time <= end).slice(0, cap);
}

function orderStatus(state: SimState, user: SimUser | undefined, oid: unknown) {
  const id = typeof oid === "string" ? user?.cloids.get(hex(oid, 16, "oid")) : integer(oid, "oid");
  const order = id === undefined ? undefined : state.orders.get(id);
  if (!user || !order || order.user !== user.address) return { status: "unknownOid" };
  return {
    status: "order",
    order: { order: frontendOrder(state, order), status: order.status, statusTimestamp: order.statusTimestamp },
  };
}

function activeAssetData(state: SimState, user: SimUser | undefined, address: HexAddress, coin: string) {
  const found = marketByCoin(state, coin);
  if (!found) throw new WireShapeError(`coin: unknown "${coin}"`);
  const { market } = found;
  const leverage = user
    ? leverageOf(user, market)
    : { type: "cross" as const, value: Math.min(20, market.maxLeverage) };
  const available = user ? availableMargin(state, user) : "0";
  const maxSize = cmp(available, "0") > 0
    ? roundTo(div(mul(available, leverage.value), market.markPx, 8), market.szDecimals, "DOWN")
    : "0";
  return {
    user: address,
    coin,
    leverage: leverage.type === "cross" ? leverage : { ...leverage, rawUsd: "0.0" },
    maxTradeSzs: [wire(maxSize), wire(maxSize)],
    availableToTrade: [wire(available), wire(available)],
    markPx: wire(market.markPx),
  };
}

/** Answers one info request body; throws WireShapeError for what the venue would 422. */
export function answerInfo(state: SimState, raw: unknown): unknown {
  const body = record(raw, "body");
  const address = () => hex(body.user, 20, "user");
  const user = () => findUser(state, address());
  switch (body.type) {
    case "meta":
      return meta(state);
    case "metaAndAssetCtxs":
      return [meta(state), assetCtxs(state)];
    case "allMids":
      return Object.fromEntries(state.markets.map((m, index) => [m.coin, wire(mid(state, index))]));
    case "l2Book": {
      const found = marketByCoin(state, String(body.coin));
      if (!found) return null;
      const side = (asks: boolean) =>
        bookSide(found.market, asks).map((l) => ({ px: wire(l.px), sz: wire(l.sz), n: 1 }));
      return { coin: found.market.coin, time: state.now(), levels: [side(false), side(true)] };
    }
    case "clearinghouseState":
      return clearinghouse(state, user());
    case "spotClearinghouseState":
      return spotClearinghouse(state, user());
    case "userAbstraction":
      return user()?.abstraction ?? "default";
    case "openOrders":
      return openOrdersOf(state, address()).map((order) => basicOrder(state, order));
    case "frontendOpenOrders":
      return openOrdersOf(state, address()).map((order) => frontendOrder(state, order));
    case "orderStatus":
      return orderStatus(state, user(), body.oid);
    case "userFills":
      return [...(user()?.fills ?? [])].reverse().slice(0, 2000);
    case "userFillsByTime":
      return inRange(user()?.fills ?? [], body, 2000);
    case "userFunding":
      return inRange(user()?.funding ?? [], body, 500);
    case "userNonFundingLedgerUpdates":
      return inRange(user()?.ledger ?? [], body, 500);
    case "maxBuilderFee":
      return user()?.builderApprovals.get(hex(body.builder, 20, "builder")) ?? 0;
    case "approvedBuilders":
      return [...(user()?.builderApprovals.keys() ?? [])];
    case "userRateLimit":
      return addressRateLimit(state, user());
    case "referral":
      return {
        referredBy: null,
        cumVlm: "0.0",
        unclaimedRewards: "0.0",
        claimedRewards: "0.0",
        builderRewards: wire(user()?.builderRewards ?? "0"),
      };
    // Under REJECT_KEYS the venue knows no agent here either, as for signatures (verify.ts).
    case "extraAgents":
      return (keysRejected(state) ? [] : liveAgentsOf(state, address()))
        .map((agent): WireExtraAgent => ({ name: agent.name, address: agent.address, validUntil: agent.validUntil }));
    case "userRole": {
      const agent = liveAgent(state, address());
      if (agent && !keysRejected(state)) {
        return { role: "agent", data: { user: agent.user } };
      }
      return user() ? { role: "user" } : { role: "missing" };
    }
    case "activeAssetData":
      return activeAssetData(state, user(), address(), String(body.coin));
    default:
      throw new WireShapeError(`type: unknown variant "${String(body.type)}"`);
  }
}

function keysRejected(state: SimState): boolean {
  return state.faults.mode === "REJECT_KEYS";
}
