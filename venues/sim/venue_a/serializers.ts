/**
 * Wire shapes of the simulator's answers, field for field as the venue sends
 * them (decimals as strings, ids and times as numbers), including the v2/v3
 * differences adapters trip over.
 */
import { abs, add, div, isZero, mul, sub, toFixed } from "../../decimal.ts";
import { availableBalance, liquidationPrice, openOrderMargin, positionMargin, unrealizedPnl } from "./ledger.ts";
import type { MarketDef } from "./markets.ts";
import {
  openOrders,
  positionOf,
  type SimAccount,
  type SimAlgoOrder,
  type SimOrder,
  type SimState,
  symbolConfigOf,
} from "./state.ts";

const money = (value: string) => toFixed(value, 8);

/** Order object; a placement/cancel answer has `cumQty` and no `time`, a query the reverse. */
export function orderJson(state: SimState, order: SimOrder, answer: "placement" | "query") {
  const { def } = state.markets.get(order.symbol)!;
  const qty = (value: string) => toFixed(value, def.quantityPrecision);
  const common = {
    orderId: order.orderId,
    symbol: order.symbol,
    status: order.status,
    clientOrderId: order.clientOrderId,
    price: toFixed(order.price, def.pricePrecision),
    avgPrice: isZero(order.executedQty) ? "0.00000" : div(order.cumQuote, order.executedQty, 8),
    origQty: qty(order.origQty),
    executedQty: qty(order.executedQty),
    cumQuote: order.cumQuote,
    timeInForce: order.timeInForce,
    type: order.type,
    reduceOnly: order.reduceOnly,
    closePosition: order.closePosition,
    side: order.side,
    positionSide: "BOTH",
    stopPrice: "0",
    workingType: "CONTRACT_PRICE",
    priceProtect: false,
    origType: order.type,
    priceMatch: "NONE",
    selfTradePreventionMode: "EXPIRE_MAKER",
    goodTillDate: 0,
    updateTime: order.updateTime,
  };
  return answer === "placement" ? { ...common, cumQty: common.executedQty } : { ...common, time: order.time };
}

/** Algo order object; a query adds what the trigger produced. */
export function algoJson(algo: SimAlgoOrder, answer: "placement" | "query") {
  const common = {
    algoId: algo.algoId,
    clientAlgoId: algo.clientAlgoId,
    algoType: "CONDITIONAL",
    orderType: algo.orderType,
    symbol: algo.symbol,
    side: algo.side,
    positionSide: "BOTH",
    timeInForce: "GTC",
    quantity: algo.quantity,
    algoStatus: algo.algoStatus,
    triggerPrice: algo.triggerPrice,
    price: "0",
    icebergQuantity: null,
    selfTradePreventionMode: "EXPIRE_MAKER",
    workingType: algo.workingType,
    priceMatch: "NONE",
    closePosition: algo.closePosition,
    priceProtect: algo.priceProtect,
    reduceOnly: algo.reduceOnly,
    activatePrice: "",
    callbackRate: "",
    createTime: algo.createTime,
    updateTime: algo.updateTime,
    triggerTime: algo.triggerTime,
    goodTillDate: 0,
  };
  if (answer === "placement") return common;
  return {
    ...common,
    actualOrderId: algo.actualOrderId === null ? "" : String(algo.actualOrderId),
    actualPrice: algo.actualPrice,
    actualQty: algo.actualQty,
    actualType: "MARKET",
  };
}

/** Largest notional allowed at `leverage`: the cap of the widest bracket that still offers it. */
export function maxNotionalValue(def: MarketDef, leverage: number): string {
  const caps = def.brackets.filter((b) => b.initialLeverage >= leverage).map((b) => b.notionalCap);
  return String(caps.length ? Math.max(...caps) : 0);
}

function positionFigures(state: SimState, account: SimAccount, symbol: string) {
  const market = state.markets.get(symbol)!;
  const position = positionOf(account, symbol);
  const config = symbolConfigOf(account, symbol);
  const isolated = config.marginType === "ISOLATED";
  const unrealized = unrealizedPnl(position, market.markPrice);
  const notional = mul(position.amt, market.markPrice);
  const margin = isZero(position.amt) ? "0" : positionMargin(state, account, symbol);
  const orderMargin = openOrderMargin(account, symbol);
  return {
    market,
    position,
    config,
    isolated,
    unrealized,
    notional,
    margin,
    orderMargin,
    maint: mul(abs(notional), div(market.def.maintMarginPercent, 100, 8)),
    isolatedWallet: isolated ? position.isolatedWallet : "0",
  };
}

/** Symbols v3 reports: those with a position or an open order. */
function activeSymbols(state: SimState, account: SimAccount, symbol?: string): string[] {
  return [...state.markets.keys()].filter((s) =>
    (!symbol || s === symbol) &&
    (!isZero(account.positions.get(s)?.amt ?? "0") || openOrders(account, s).length > 0)
  );
}

export function positionRiskJson(state: SimState, account: SimAccount, version: 2 | 3, symbol?: string) {
  const symbols = version === 3
    ? activeSymbols(state, account, symbol)
    : [...state.markets.keys()].filter((s) => !symbol || s === symbol);
  return symbols.map((s) => {
    const f = positionFigures(state, account, s);
    const common = {
      symbol: s,
      positionSide: "BOTH",
      positionAmt: toFixed(f.position.amt, f.market.def.quantityPrecision),
      entryPrice: f.position.entryPrice,
      breakEvenPrice: f.position.entryPrice,
      markPrice: f.market.markPrice,
      unRealizedProfit: money(f.unrealized),
      liquidationPrice: liquidationPrice(state, account, s),
      isolatedMargin: money(f.isolated ? add(f.isolatedWallet, f.unrealized) : "0"),
      notional: money(f.notional),
      isolatedWallet: money(f.isolatedWallet),
      updateTime: f.position.updateTime,
    };
    if (version === 2) {
      return {
        ...common,
        leverage: String(f.config.leverage),
        maxNotionalValue: maxNotionalValue(f.market.def, f.config.leverage),
        // v2 spells the margin type in lowercase, unlike every other endpoint.
        marginType: f.isolated ? "isolated" : "cross",
        isAutoAddMargin: "false",
      };
    }
    return {
      ...common,
      marginAsset: "USDT",
      initialMargin: money(add(f.margin, f.orderMargin)),
      maintMargin: money(f.maint),
      positionInitialMargin: money(f.margin),
      openOrderInitialMargin: money(f.orderMargin),
      adl: 0,
      bidNotional: "0",
      askNotional: "0",
    };
  });
}

function totals(state: SimState, account: SimAccount) {
  let unrealized = "0";
  let crossUnrealized = "0";
  let positionInitial = "0";
  let maint = "0";
  let isolatedWallets = "0";
  for (const symbol of account.positions.keys()) {
    const f = positionFigures(state, account, symbol);
    unrealized = add(unrealized, f.unrealized);
    if (!f.isolated) crossUnrealized = add(crossUnrealized, f.unrealized);
    positionInitial = add(positionInitial, f.margin);
    maint = add(maint, f.maint);
    isolatedWallets = add(isolatedWallets, f.isolatedWallet);
  }
  const wallet = account.wallet.get("USDT") ?? "0";
  const available = availableBalance(state, account);
  const orderInitial = openOrderMargin(account);
  return {
    wallet,
    unrealized,
    crossUnrealized,
    positionInitial,
    orderInitial,
    maint,
    crossWallet: sub(wallet, isolatedWallets),
    available,
    maxWithdraw: available.startsWith("-") ? "0" : available,
  };
}

function assetRows(state: SimState, account: SimAccount) {
  const t = totals(state, account);
  return [...account.wallet.entries()].map(([asset, balance]) => {
    const usdt = asset === "USDT";
    return {
      asset,
      walletBalance: money(balance),
      unrealizedProfit: money(usdt ? t.unrealized : "0"),
      marginBalance: money(usdt ? add(balance, t.unrealized) : balance),
      maintMargin: money(usdt ? t.maint : "0"),
      initialMargin: money(usdt ? add(t.positionInitial, t.orderInitial) : "0"),
      positionInitialMargin: money(usdt ? t.positionInitial : "0"),
      openOrderInitialMargin: money(usdt ? t.orderInitial : "0"),
      crossWalletBalance: money(usdt ? t.crossWallet : balance),
      crossUnPnl: money(usdt ? t.crossUnrealized : "0"),
      availableBalance: money(usdt ? t.available : balance),
      maxWithdrawAmount: money(usdt ? t.maxWithdraw : balance),
      updateTime: account.walletUpdated.get(asset) ?? 0,
    };
  });
}

export function accountJson(state: SimState, account: SimAccount, version: 2 | 3) {
  const t = totals(state, account);
  const summary = {
    totalInitialMargin: money(add(t.positionInitial, t.orderInitial)),
    totalMaintMargin: money(t.maint),
    totalWalletBalance: money(t.wallet),
    totalUnrealizedProfit: money(t.unrealized),
    totalMarginBalance: money(add(t.wallet, t.unrealized)),
    totalPositionInitialMargin: money(t.positionInitial),
    totalOpenOrderInitialMargin: money(t.orderInitial),
    totalCrossWalletBalance: money(t.crossWallet),
    totalCrossUnPnl: money(t.crossUnrealized),
    availableBalance: money(t.available),
    maxWithdrawAmount: money(t.maxWithdraw),
  };
  const assets = assetRows(state, account);
  if (version === 3) {
    const positions = activeSymbols(state, account).map((s) => {
      const f = positionFigures(state, account, s);
      return {
        symbol: s,
        positionSide: "BOTH",
        positionAmt: toFixed(f.position.amt, f.market.def.quantityPrecision),
        unrealizedProfit: money(f.unrealized),
        isolatedMargin: money(f.isolated ? add(f.isolatedWallet, f.unrealized) : "0"),
        notional: money(f.notional),
        isolatedWallet: money(f.isolatedWallet),
        initialMargin: money(add(f.margin, f.orderMargin)),
        maintMargin: money(f.maint),
        updateTime: f.position.updateTime,
      };
    });
    return { ...summary, assets, positions };
  }
  const positions = [...state.markets.keys()].map((s) => {
    const f = positionFigures(state, account, s);
    return {
      symbol: s,
      initialMargin: money(add(f.margin, f.orderMargin)),
      maintMargin: money(f.maint),
      unrealizedProfit: money(f.unrealized),
      positionInitialMargin: money(f.margin),
      openOrderInitialMargin: money(f.orderMargin),
      leverage: String(f.config.leverage),
      isolated: f.isolated,
      entryPrice: f.position.entryPrice,
      maxNotional: maxNotionalValue(f.market.def, f.config.leverage),
      bidNotional: "0",
      askNotional: "0",
      positionSide: "BOTH",
      positionAmt: toFixed(f.position.amt, f.market.def.quantityPrecision),
      updateTime: f.position.updateTime,
    };
  });
  return {
    feeTier: 0,
    feeBurn: account.feeBurn,
    canTrade: true,
    canDeposit: true,
    canWithdraw: true,
    updateTime: 0,
    multiAssetsMargin: account.multiAssetsMargin,
    tradeGroupId: -1,
    ...summary,
    assets: assets.map((a) => ({ ...a, marginAvailable: true })),
    positions,
  };
}

export function balanceJson(state: SimState, account: SimAccount) {
  return assetRows(state, account).map((a) => ({
    accountAlias: "SgsR",
    asset: a.asset,
    balance: a.walletBalance,
    crossWalletBalance: a.crossWalletBalance,
    crossUnPnl: a.crossUnPnl,
    availableBalance: a.availableBalance,
    maxWithdrawAmount: a.maxWithdrawAmount,
    marginAvailable: true,
    updateTime: a.updateTime,
  }));
}
