/**
 * Wire shapes of the user data stream's events, field for field as the venue
 * documents them (developers.binance.com, USDⓈ-M Futures > User Data Streams,
 * pages "Event: Order Update", "Event: Algo Order Update", "Event: Balance and
 * Position Update", "Event: Trade Lite", "Event: Account Configuration Update",
 * "Event: User Data Stream Expired"; read from the 2026-05-28 scrape in
 * shubhamtaywade82/binance-docs-scraper). ccxt 4.5.84 (js/src/pro/binance.js,
 * parseWsOrder, handleOrderUpdate, handleBalance) parses the same letters.
 *
 * Every event carries `e` (type) and `E` (event time); the trading ones `T`
 * (transaction time). Decimals are strings, ids and times numbers.
 */
import { add, div, isZero, mul, sub, toFixed } from "../../decimal.ts";
import { unrealizedPnl } from "./ledger.ts";
import {
  openOrders,
  positionOf,
  type SimAccount,
  type SimAccountEvent,
  type SimState,
  symbolConfigOf,
} from "./state.ts";

export type UserEvent = { e: string; E: number } & Record<string, unknown>;

type OrderEvent = Extract<SimAccountEvent, { kind: "order" }>;
type AlgoEvent = Extract<SimAccountEvent, { kind: "algo" }>;
type BalanceEvent = Extract<SimAccountEvent, { kind: "balance" }>;

const money = (value: string) => toFixed(value, 8);

/** Open LIMIT orders' resting notional on one side (ORDER_TRADE_UPDATE's `b` and `a`). */
function restingNotional(state: SimState, account: SimAccount, symbol: string, side: "BUY" | "SELL"): string {
  const notional = openOrders(account, symbol)
    .filter((o) => o.side === side && o.type === "LIMIT")
    .reduce((sum, o) => add(sum, mul(sub(o.origQty, o.executedQty), o.price)), "0");
  return toFixed(notional, state.markets.get(symbol)!.def.pricePrecision);
}

/**
 * ORDER_TRADE_UPDATE. Commission (`N`, `n`) is pushed with fills only: the
 * venue documents "will not push if no commission", so consumers must not
 * require it on NEW, CANCELED or EXPIRED.
 */
export function orderTradeUpdate(state: SimState, account: SimAccount, event: OrderEvent): UserEvent {
  const { order, execution, trade } = event;
  const { def } = state.markets.get(order.symbol)!;
  const qty = (value: string) => toFixed(value, def.quantityPrecision);
  const price = (value: string) => toFixed(value, def.pricePrecision);
  const time = trade?.time ?? order.updateTime;
  const o: Record<string, unknown> = {
    s: order.symbol,
    c: order.clientOrderId,
    S: order.side,
    o: order.type,
    f: order.timeInForce,
    q: qty(order.origQty),
    p: price(order.price),
    ap: isZero(order.executedQty) ? "0" : div(order.cumQuote, order.executedQty, 8),
    sp: "0",
    x: execution,
    X: order.status,
    i: order.orderId,
    l: trade ? trade.qty : "0",
    z: isZero(order.executedQty) ? "0" : qty(order.executedQty),
    L: trade ? trade.price : "0",
    ...(trade ? { N: trade.commissionAsset, n: trade.commission } : {}),
    T: time,
    t: trade ? trade.id : 0,
    b: restingNotional(state, account, order.symbol, "BUY"),
    a: restingNotional(state, account, order.symbol, "SELL"),
    m: trade ? trade.maker : false,
    R: order.reduceOnly,
    wt: "CONTRACT_PRICE",
    ot: order.type,
    ps: "BOTH",
    cp: order.closePosition,
    rp: trade ? trade.realizedPnl : "0",
    pP: false,
    si: 0,
    ss: 0,
    V: "EXPIRE_MAKER",
    pm: "NONE",
    gtd: 0,
    er: event.expiryReason ?? "0",
  };
  return { e: "ORDER_TRADE_UPDATE", E: state.now(), T: time, o };
}

/** TRADE_LITE: the venue's lighter, earlier copy of a fill (pushed beside ORDER_TRADE_UPDATE). */
export function tradeLite(state: SimState, event: OrderEvent): UserEvent | null {
  const { order, trade } = event;
  if (!trade) return null;
  const { def } = state.markets.get(order.symbol)!;
  return {
    e: "TRADE_LITE",
    E: state.now(),
    T: trade.time,
    s: order.symbol,
    q: toFixed(order.origQty, def.quantityPrecision),
    p: toFixed(order.price, def.pricePrecision),
    m: trade.maker,
    c: order.clientOrderId,
    S: order.side,
    L: trade.price,
    l: trade.qty,
    t: trade.id,
    i: order.orderId,
  };
}

/**
 * ALGO_UPDATE, pushed on every algo status change since the conditional
 * orders moved to the Algo Service (change log 2025-11-06; it replaced
 * CONDITIONAL_ORDER_TRIGGER_REJECT from 2025-12-15). `ai` is the regular
 * order the trigger placed ("" before), `aq`/`ap` what that order executed.
 */
export function algoUpdate(state: SimState, event: AlgoEvent): UserEvent {
  const { algo } = event;
  const triggered = algo.actualOrderId !== null;
  return {
    e: "ALGO_UPDATE",
    T: algo.updateTime,
    E: state.now(),
    o: {
      caid: algo.clientAlgoId,
      aid: algo.algoId,
      at: "CONDITIONAL",
      o: algo.orderType,
      s: algo.symbol,
      S: algo.side,
      ps: "BOTH",
      f: "GTC",
      q: algo.quantity,
      X: algo.algoStatus,
      ai: triggered ? String(algo.actualOrderId) : "",
      ap: triggered ? algo.actualPrice : "0.00000",
      aq: triggered ? algo.actualQty : "0.00000",
      act: triggered ? "MARKET" : "0",
      tp: algo.triggerPrice,
      p: "0",
      V: "EXPIRE_MAKER",
      wt: algo.workingType,
      pm: "NONE",
      cp: algo.closePosition,
      pP: algo.priceProtect,
      R: algo.reduceOnly,
      tt: algo.triggerTime,
      gtd: 0,
      rm: event.reason ?? "",
    },
  };
}

/** A position row of ACCOUNT_UPDATE (`a.P`), margin type in lowercase as the venue spells it there. */
function positionRow(state: SimState, account: SimAccount, symbol: string) {
  const position = positionOf(account, symbol);
  const market = state.markets.get(symbol)!;
  const isolated = symbolConfigOf(account, symbol).marginType === "ISOLATED";
  const realized = account.trades.filter((t) => t.symbol === symbol).reduce((sum, t) => add(sum, t.realizedPnl), "0");
  return {
    s: symbol,
    pa: toFixed(position.amt, market.def.quantityPrecision),
    ep: position.entryPrice,
    bep: position.entryPrice,
    cr: money(realized),
    up: money(unrealizedPnl(position, market.markPrice)),
    mt: isolated ? "isolated" : "cross",
    iw: money(isolated ? position.isolatedWallet : "0"),
    ps: "BOTH",
  };
}

/**
 * ACCOUNT_UPDATE: the balances that moved (`a.B`, wallet `wb`, cross wallet
 * `cw`, change except PnL and commission `bc`) and the positions named
 * (`a.P`), with the reason `a.m` (ORDER, FUNDING_FEE, DEPOSIT, WITHDRAW, ...).
 */
export function accountUpdate(state: SimState, account: SimAccount, event: BalanceEvent): UserEvent {
  const isolatedWallets = [...account.positions.entries()]
    .filter(([symbol]) => symbolConfigOf(account, symbol).marginType === "ISOLATED")
    .reduce((sum, [, p]) => add(sum, p.isolatedWallet), "0");
  const balances = event.changes.map(({ asset, change }) => {
    const wallet = account.wallet.get(asset) ?? "0";
    return {
      a: asset,
      wb: money(wallet),
      cw: money(asset === "USDT" ? sub(wallet, isolatedWallets) : wallet),
      bc: money(change),
    };
  });
  return {
    e: "ACCOUNT_UPDATE",
    E: state.now(),
    T: state.now(),
    a: { m: event.reason, B: balances, P: event.symbols.map((s) => positionRow(state, account, s)) },
  };
}

/** ACCOUNT_CONFIG_UPDATE with `ac`: a symbol's leverage changed. */
export function accountConfigUpdate(state: SimState, symbol: string, leverage: number): UserEvent {
  return { e: "ACCOUNT_CONFIG_UPDATE", E: state.now(), T: state.now(), ac: { s: symbol, l: leverage } };
}

/** listenKeyExpired: the key died (expiry or DELETE); nothing more is pushed for it. */
export function listenKeyExpired(now: number, listenKey: string): UserEvent {
  return { e: "listenKeyExpired", E: now, listenKey };
}

/** The stream events one account change produces, in the order they are pushed. */
export function userEventsOf(state: SimState, account: SimAccount, event: SimAccountEvent): UserEvent[] {
  switch (event.kind) {
    case "order": {
      const lite = tradeLite(state, event);
      return lite ? [lite, orderTradeUpdate(state, account, event)] : [orderTradeUpdate(state, account, event)];
    }
    case "algo":
      return [algoUpdate(state, event)];
    case "balance":
      return [accountUpdate(state, account, event)];
    case "leverage":
      return [accountConfigUpdate(state, event.symbol, event.leverage)];
  }
}
