/**
 * Money side of the simulator: positions, margin, fills with their commission
 * and realized PnL, funding. Accounting follows the venue: realizedPnl is the
 * gross price PnL of the closing part of a fill; commission and funding are
 * separate income rows; BNB pays the fee (10% off) when fee burn is on and the
 * wallet holds enough BNB.
 */
import { abs, add, cmp, div, isZero, max, min, mul, neg, roundTo, sub, toFixed } from "../../decimal.ts";
import {
  emitAccountEvent,
  openOrders,
  positionOf,
  type SimAccount,
  type SimIncome,
  type SimOrder,
  type SimPosition,
  type SimState,
  type SimTrade,
  symbolConfigOf,
} from "./state.ts";

export const MAKER_RATE = "0.0002";
export const TAKER_RATE = "0.0005";
const BNB_DISCOUNT = "0.9";
const SCALE = 8;

export function credit(state: SimState, account: SimAccount, asset: string, amount: string): void {
  account.wallet.set(asset, add(account.wallet.get(asset) ?? "0", amount));
  account.walletUpdated.set(asset, state.now());
}

export function addIncome(
  state: SimState,
  account: SimAccount,
  row: Pick<SimIncome, "symbol" | "incomeType" | "income" | "asset" | "tradeId">,
): void {
  account.income.push({ ...row, info: row.incomeType, time: state.now(), tranId: ++state.ids.tran });
}

function sameSign(a: string, b: string): boolean {
  return a.startsWith("-") === b.startsWith("-");
}

export function unrealizedPnl(position: SimPosition, markPrice: string): string {
  return isZero(position.amt) ? "0" : roundTo(mul(position.amt, sub(markPrice, position.entryPrice)), SCALE);
}

/** Initial margin of a position: the isolated wallet, or notional at mark over leverage when cross. */
export function positionMargin(state: SimState, account: SimAccount, symbol: string): string {
  const position = positionOf(account, symbol);
  const config = symbolConfigOf(account, symbol);
  if (config.marginType === "ISOLATED") return position.isolatedWallet;
  const mark = state.markets.get(symbol)!.markPrice;
  return div(mul(abs(position.amt), mark), config.leverage, SCALE, "UP");
}

export function openOrderMargin(account: SimAccount, symbol?: string): string {
  return openOrders(account, symbol).reduce((sum, order) => add(sum, order.reservedMargin), "0");
}

/** USDT free for new margin: cross PnL counts, isolated PnL stays inside its position. */
export function availableBalance(state: SimState, account: SimAccount): string {
  let available = account.wallet.get("USDT") ?? "0";
  for (const [symbol, position] of account.positions) {
    if (isZero(position.amt)) continue;
    available = sub(available, positionMargin(state, account, symbol));
    if (symbolConfigOf(account, symbol).marginType === "CROSSED") {
      available = add(available, unrealizedPnl(position, state.markets.get(symbol)!.markPrice));
    }
  }
  return sub(available, openOrderMargin(account));
}

/** The part of an order that opens or adds exposure; only that part needs margin. */
export function openingQuantity(position: SimPosition, side: "BUY" | "SELL", quantity: string): string {
  const signed = side === "BUY" ? quantity : neg(quantity);
  if (isZero(position.amt) || sameSign(position.amt, signed)) return quantity;
  return max("0", sub(quantity, abs(position.amt)));
}

export function marginFor(quantity: string, price: string, leverage: number): string {
  return div(mul(quantity, price), leverage, SCALE, "UP");
}

/** A rough liquidation price from the position's own margin; the venue's cross formula needs the whole account. */
export function liquidationPrice(state: SimState, account: SimAccount, symbol: string): string {
  const position = positionOf(account, symbol);
  if (isZero(position.amt)) return "0";
  const market = state.markets.get(symbol)!;
  const quantity = abs(position.amt);
  const cushion = div(positionMargin(state, account, symbol), quantity, SCALE);
  const ratio = div(market.def.maintMarginPercent, 100, SCALE);
  const long = !position.amt.startsWith("-");
  const price = long
    ? sub(mul(position.entryPrice, add("1", ratio)), cushion)
    : add(mul(position.entryPrice, sub("1", ratio)), cushion);
  return cmp(price, "0") > 0 ? roundTo(price, market.def.pricePrecision) : "0";
}

function updatePosition(state: SimState, account: SimAccount, order: SimOrder, price: string, qty: string): string {
  const position = positionOf(account, order.symbol);
  const config = symbolConfigOf(account, order.symbol);
  const isolated = config.marginType === "ISOLATED";
  const signed = order.side === "BUY" ? qty : neg(qty);
  const current = position.amt;
  const next = add(current, signed);
  let realized = "0";
  if (isZero(current) || sameSign(current, signed)) {
    position.entryPrice = div(add(mul(abs(current), position.entryPrice), mul(qty, price)), abs(next), SCALE);
    if (isolated) position.isolatedWallet = add(position.isolatedWallet, marginFor(qty, price, config.leverage));
  } else {
    const closing = min(qty, abs(current));
    const move = current.startsWith("-") ? sub(position.entryPrice, price) : sub(price, position.entryPrice);
    realized = roundTo(mul(closing, move), SCALE);
    if (isolated) {
      const released = div(mul(position.isolatedWallet, closing), abs(current), SCALE);
      position.isolatedWallet = sub(position.isolatedWallet, released);
    }
    if (isZero(next)) {
      position.entryPrice = "0";
      position.isolatedWallet = "0";
    } else if (!sameSign(next, current)) {
      position.entryPrice = price;
      position.isolatedWallet = isolated ? marginFor(abs(next), price, config.leverage) : "0";
    }
  }
  position.amt = next;
  position.updateTime = state.now();
  return realized;
}

function chargeCommission(state: SimState, account: SimAccount, notional: string, maker: boolean) {
  const inUsdt = roundTo(mul(notional, maker ? MAKER_RATE : TAKER_RATE), SCALE, "UP");
  if (account.feeBurn) {
    const bnbMark = state.markets.get("BNBUSDT")!.markPrice;
    const inBnb = roundTo(div(mul(inUsdt, BNB_DISCOUNT), bnbMark, 12), SCALE, "UP");
    if (cmp(account.wallet.get("BNB") ?? "0", inBnb) >= 0) return { commission: inBnb, asset: "BNB" };
  }
  return { commission: inUsdt, asset: "USDT" };
}

/** Executes `qty` of `order` at `price`: position, wallet, trade row and income rows. */
export function applyFill(
  state: SimState,
  account: SimAccount,
  order: SimOrder,
  price: string,
  qty: string,
  maker: boolean,
): SimTrade {
  const { def } = state.markets.get(order.symbol)!;
  const realized = updatePosition(state, account, order, price, qty);
  const notional = mul(qty, price);
  const { commission, asset } = chargeCommission(state, account, notional, maker);
  credit(state, account, asset, neg(commission));
  if (!isZero(realized)) credit(state, account, "USDT", realized);
  order.executedQty = add(order.executedQty, qty);
  order.cumQuote = add(order.cumQuote, notional);
  order.status = cmp(order.executedQty, order.origQty) >= 0 ? "FILLED" : "PARTIALLY_FILLED";
  order.updateTime = state.now();
  const trade: SimTrade = {
    buyer: order.side === "BUY",
    commission,
    commissionAsset: asset,
    id: ++state.ids.trade,
    maker,
    orderId: order.orderId,
    price: toFixed(price, def.pricePrecision),
    qty: toFixed(qty, def.quantityPrecision),
    quoteQty: notional,
    realizedPnl: realized,
    side: order.side,
    positionSide: "BOTH",
    symbol: order.symbol,
    time: state.now(),
    marginAsset: "USDT",
  };
  account.trades.push(trade);
  const tradeId = String(trade.id);
  if (!isZero(realized)) {
    addIncome(state, account, {
      symbol: order.symbol,
      incomeType: "REALIZED_PNL",
      income: realized,
      asset: "USDT",
      tradeId,
    });
  }
  addIncome(state, account, {
    symbol: order.symbol,
    incomeType: "COMMISSION",
    income: neg(commission),
    asset,
    tradeId,
  });
  emitAccountEvent(state, account, { kind: "order", order, execution: "TRADE", trade });
  // Realized PnL and commission are not part of `bc`, so an ORDER update's change is zero.
  const changes = [...new Set(["USDT", asset])].map((a) => ({ asset: a, change: "0" }));
  emitAccountEvent(state, account, { kind: "balance", reason: "ORDER", changes, symbols: [order.symbol] });
  return trade;
}

/**
 * A transfer into (positive) or out of the futures wallet: a TRANSFER income
 * row, and DEPOSIT or WITHDRAW on the stream.
 */
export function transfer(state: SimState, account: SimAccount, asset: string, amount: string): void {
  credit(state, account, asset, amount);
  addIncome(state, account, { symbol: "", incomeType: "TRANSFER", income: amount, asset, tradeId: "" });
  emitAccountEvent(state, account, {
    kind: "balance",
    reason: amount.startsWith("-") ? "WITHDRAW" : "DEPOSIT",
    changes: [{ asset, change: amount }],
    symbols: [],
  });
}

/** Pays `rate` on every open position of `symbol` at the mark: positive rates make longs pay shorts. */
export function payFunding(state: SimState, symbol: string, rate: string): number {
  const market = state.markets.get(symbol)!;
  market.lastFundingRate = rate;
  let payments = 0;
  for (const account of state.accounts.values()) {
    const position = account.positions.get(symbol);
    if (!position || isZero(position.amt)) continue;
    const amount = roundTo(neg(mul(mul(position.amt, market.markPrice), rate)), SCALE);
    credit(state, account, "USDT", amount);
    addIncome(state, account, { symbol, incomeType: "FUNDING_FEE", income: amount, asset: "USDT", tradeId: "" });
    // The venue names the position only when it is isolated (ACCOUNT_UPDATE docs, FUNDING FEE).
    const isolated = symbolConfigOf(account, symbol).marginType === "ISOLATED";
    emitAccountEvent(state, account, {
      kind: "balance",
      reason: "FUNDING_FEE",
      changes: [{ asset: "USDT", change: amount }],
      symbols: isolated ? [symbol] : [],
    });
    payments++;
  }
  return payments;
}
