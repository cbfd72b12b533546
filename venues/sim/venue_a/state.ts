/**
 * In-memory state of one simulator instance: markets, accounts with their
 * orders, positions, trades and income, the fault switch and the weight
 * counter. Stored orders, trades and income rows keep the venue's field names.
 */
import { createMarketStates, type MarketState } from "./markets.ts";

export type Side = "BUY" | "SELL";
export type FaultMode = "NONE" | "DOWN" | "SLOW" | "LOSE_RESPONSE" | "REJECT_KEYS";
export type MarginType = "ISOLATED" | "CROSSED";

export interface SimOrder {
  orderId: number;
  clientOrderId: string;
  symbol: string;
  side: Side;
  type: "LIMIT" | "MARKET";
  timeInForce: "GTC" | "IOC" | "FOK" | "GTX";
  price: string;
  origQty: string;
  executedQty: string;
  cumQuote: string;
  status: "NEW" | "PARTIALLY_FILLED" | "FILLED" | "CANCELED" | "EXPIRED";
  reduceOnly: boolean;
  closePosition: boolean;
  /** Initial margin held while the order rests. */
  reservedMargin: string;
  time: number;
  updateTime: number;
}

/**
 * The venue's algo lifecycle (ALGO_UPDATE): NEW waits for its trigger;
 * TRIGGERING has fired and is being handed to the matching engine; TRIGGERED
 * has its order there (`actualOrderId`), not yet done; FINISHED means that
 * order was filled or cancelled there (`actualQty` tells which); REJECTED is
 * the engine refusing it at trigger time (e.g. margin); EXPIRED a system cancel.
 */
export type AlgoStatus = "NEW" | "CANCELED" | "TRIGGERING" | "TRIGGERED" | "FINISHED" | "REJECTED" | "EXPIRED";

/** Where a fired algo order is held for tests to watch; null lets it run through in one move. */
export type AlgoHold = "TRIGGERING" | "TRIGGERED" | null;

export interface SimAlgoOrder {
  algoId: number;
  clientAlgoId: string;
  symbol: string;
  side: Side;
  orderType: "STOP_MARKET" | "TAKE_PROFIT_MARKET";
  quantity: string;
  triggerPrice: string;
  workingType: "MARK_PRICE" | "CONTRACT_PRICE";
  closePosition: boolean;
  reduceOnly: boolean;
  priceProtect: boolean;
  algoStatus: AlgoStatus;
  createTime: number;
  updateTime: number;
  triggerTime: number;
  actualOrderId: number | null;
  actualPrice: string;
  actualQty: string;
}

export interface SimPosition {
  /** Signed: negative is short (one-way mode). */
  amt: string;
  entryPrice: string;
  /** Margin moved into an isolated position; zero when cross. */
  isolatedWallet: string;
  updateTime: number;
}

export interface SimTrade {
  buyer: boolean;
  commission: string;
  commissionAsset: string;
  id: number;
  maker: boolean;
  orderId: number;
  price: string;
  qty: string;
  quoteQty: string;
  realizedPnl: string;
  side: Side;
  positionSide: "BOTH";
  symbol: string;
  time: number;
  marginAsset: "USDT";
}

export interface SimIncome {
  symbol: string;
  incomeType: "TRANSFER" | "REALIZED_PNL" | "COMMISSION" | "FUNDING_FEE";
  income: string;
  asset: string;
  info: string;
  time: number;
  tranId: number;
  tradeId: string;
}

export interface SimAccount {
  apiKey: string;
  apiSecret: string;
  revoked: boolean;
  /**
   * Until when the futures host answers this key -2015 although the key is
   * valid: the venue's temporary block (ccxt 4.5.84 binance.js handleErrors
   * reads a -2015 after earlier successful calls as DDoSProtection). The spot
   * host still accepts the key meanwhile.
   */
  blockedUntil: number;
  createTime: number;
  canWithdraw: boolean;
  enableFutures: boolean;
  ipRestrict: boolean;
  dualSidePosition: boolean;
  multiAssetsMargin: boolean;
  feeBurn: boolean;
  wallet: Map<string, string>;
  walletUpdated: Map<string, number>;
  symbolConfig: Map<string, { leverage: number; marginType: MarginType }>;
  positions: Map<string, SimPosition>;
  orders: SimOrder[];
  algoOrders: SimAlgoOrder[];
  trades: SimTrade[];
  income: SimIncome[];
  /** Times of recent order requests, for the X-MBX-ORDER-COUNT-* headers. */
  orderTimes: number[];
}

/**
 * A change the venue pushes to the account's user data stream, at the moment
 * the engine makes it. Listeners (user_stream.ts) serialise it at once: the
 * order or position it names keeps changing afterwards.
 */
export type SimAccountEvent =
  | {
    kind: "order";
    order: SimOrder;
    /** ORDER_TRADE_UPDATE's execution type `x`. */
    execution: "NEW" | "TRADE" | "CANCELED" | "EXPIRED" | "AMENDMENT";
    /** The fill, with execution TRADE. */
    trade?: SimTrade;
    /** ORDER_TRADE_UPDATE's expiry reason `er` (the venue's code, "0" when none). */
    expiryReason?: string;
  }
  /** Every algo status change; `reason` is ALGO_UPDATE's `rm` for a refusal. */
  | { kind: "algo"; algo: SimAlgoOrder; reason?: string }
  /** ACCOUNT_UPDATE: `reason` is its `a.m`; `changes` the assets whose balance moved, `symbols` the positions. */
  | {
    kind: "balance";
    reason: "ORDER" | "FUNDING_FEE" | "DEPOSIT" | "WITHDRAW" | "MARGIN_TYPE_CHANGE";
    /** Balance change per asset, except realized PnL and commission (ACCOUNT_UPDATE's `bc`). */
    changes: { asset: string; change: string }[];
    symbols: string[];
  }
  /** ACCOUNT_CONFIG_UPDATE: the symbol's leverage changed. */
  | { kind: "leverage"; symbol: string; leverage: number };

export type SimAccountListener = (account: SimAccount, event: SimAccountEvent) => void;

export interface SimState {
  now: () => number;
  /** Who hears every account change (the user data stream); empty until a stream server attaches. */
  listeners: SimAccountListener[];
  markets: Map<string, MarketState>;
  accounts: Map<string, SimAccount>;
  fault: { mode: FaultMode; ms: number };
  /** The futures host's REQUEST_WEIGHT pool, shared by all its routes. */
  weight: WeightPool;
  /** New orders an account may send per rolling 10 seconds and minute (exchangeInfo's ORDERS limits). */
  orderLimits: { per10Seconds: number; perMinute: number };
  /**
   * Orders an account may hold at once: open regular orders per symbol
   * (exchangeInfo's MAX_NUM_ORDERS filter, -2025 beyond it) and waiting
   * conditional orders across all symbols (200 since the change log of
   * 2025-12-29 removed MAX_NUM_ALGO_ORDERS; -4045 beyond it).
   */
  openCaps: { ordersPerSymbol: number; conditional: number };
  /** The spot host's pools: each /sapi endpoint ("GET /sapi/...") counts on its own. */
  sapiWeight: Map<string, WeightPool>;
  ids: { order: number; algo: number; trade: number; tran: number };
  /** `/_control/algo-hold`: fired algo orders stop at this stage until released. */
  algoHold: AlgoHold;
  /**
   * The IP's ban (HTTP 418) for sending on after a 429: every request of
   * either host is refused until `until`; the next ban lasts `nextMs`.
   */
  ban: { until: number; nextMs: number };
}

/** IP weight used in the current minute, against `limit`. */
export interface WeightPool {
  limit: number;
  minute: number;
  used: number;
  /** Requests refused with 429 in this minute: one more after that is the ban. */
  refused: number;
}

/**
 * Bans grow from 2 minutes to 3 days for repeat offenders (general-info,
 * LIMITS: "IP bans are tracked and scale in duration for repeat offenders,
 * from 2 minutes to 3 days"). Doubling is our choice; the venue does not
 * publish its steps.
 */
export const FIRST_BAN_MS = 120_000;
export const LONGEST_BAN_MS = 3 * 24 * 3_600_000;

/** The venue's default REQUEST_WEIGHT per minute. */
export const DEFAULT_WEIGHT_LIMIT = 2400;
/** Each IP-limited /sapi endpoint's own limit per minute. */
export const SAPI_WEIGHT_LIMIT = 12_000;
export const DEFAULT_LEVERAGE = 20;

export function createState(now: () => number): SimState {
  return {
    now,
    listeners: [],
    markets: createMarketStates(),
    accounts: new Map(),
    fault: { mode: "NONE", ms: 0 },
    weight: { limit: DEFAULT_WEIGHT_LIMIT, minute: -1, used: 0, refused: 0 },
    orderLimits: { per10Seconds: 300, perMinute: 1200 },
    openCaps: { ordersPerSymbol: 200, conditional: 200 },
    sapiWeight: new Map(),
    // Venue ids are large numbers; starting high catches adapters that assume small ones.
    ids: { order: 8_389_765_000, algo: 1_000_000_000, trade: 512_000_000, tran: 9_689_322_000 },
    algoHold: null,
    ban: { until: 0, nextMs: FIRST_BAN_MS },
  };
}

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** 64 random alphanumeric characters, the venue's key and secret format. */
export function randomKey(length = 64): string {
  // 248 = 4 * 62: rejecting bytes at or above it keeps every character equally likely.
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length))) {
      if (byte < 248 && out.length < length) out += ALPHANUMERIC[byte % 62];
    }
  }
  return out;
}

export interface AccountOptions {
  balances?: Record<string, string>;
  canWithdraw?: boolean;
  enableFutures?: boolean;
  ipRestrict?: boolean;
  dualSidePosition?: boolean;
  multiAssetsMargin?: boolean;
  feeBurn?: boolean;
}

/** A funded account whose defaults are the settings our service requires, so QA starts from "ready". */
export function createAccount(state: SimState, options: AccountOptions): SimAccount {
  const time = state.now();
  const account: SimAccount = {
    apiKey: randomKey(),
    apiSecret: randomKey(),
    revoked: false,
    blockedUntil: 0,
    createTime: time,
    canWithdraw: options.canWithdraw ?? false,
    enableFutures: options.enableFutures ?? true,
    ipRestrict: options.ipRestrict ?? true,
    dualSidePosition: options.dualSidePosition ?? false,
    multiAssetsMargin: options.multiAssetsMargin ?? false,
    feeBurn: options.feeBurn ?? false,
    wallet: new Map(),
    walletUpdated: new Map(),
    symbolConfig: new Map(),
    positions: new Map(),
    orders: [],
    algoOrders: [],
    trades: [],
    income: [],
    orderTimes: [],
  };
  for (const [asset, amount] of Object.entries(options.balances ?? { USDT: "10000" })) {
    account.wallet.set(asset, amount);
    account.walletUpdated.set(asset, time);
    account.income.push({
      symbol: "",
      incomeType: "TRANSFER",
      income: amount,
      asset,
      info: "TRANSFER",
      time,
      tranId: ++state.ids.tran,
      tradeId: "",
    });
  }
  state.accounts.set(account.apiKey, account);
  return account;
}

/** Tells every listener about a change to `account` (synchronously: they serialise it before it changes again). */
export function emitAccountEvent(state: SimState, account: SimAccount, event: SimAccountEvent): void {
  for (const listener of state.listeners) listener(account, event);
}

export function symbolConfigOf(account: SimAccount, symbol: string): { leverage: number; marginType: MarginType } {
  let config = account.symbolConfig.get(symbol);
  if (!config) {
    config = { leverage: DEFAULT_LEVERAGE, marginType: "CROSSED" };
    account.symbolConfig.set(symbol, config);
  }
  return config;
}

export function positionOf(account: SimAccount, symbol: string): SimPosition {
  let position = account.positions.get(symbol);
  if (!position) {
    position = { amt: "0", entryPrice: "0", isolatedWallet: "0", updateTime: 0 };
    account.positions.set(symbol, position);
  }
  return position;
}

export function openOrders(account: SimAccount, symbol?: string): SimOrder[] {
  return account.orders.filter((o) =>
    (o.status === "NEW" || o.status === "PARTIALLY_FILLED") && (!symbol || o.symbol === symbol)
  );
}

/**
 * Whether a query by id still finds an order (Query Order and Query Algo
 * Order pages): not once it was created over 90 days ago, whatever its
 * status, nor once it ended CANCELED or EXPIRED without any fill and was
 * created over 3 days ago. Open-order listings are not limited so.
 */
export function queryable(
  order: { created: number; ended: boolean; filled: boolean },
  now: number,
): boolean {
  if (now - order.created > QUERY_RETENTION_MS) return false;
  return !(order.ended && !order.filled && now - order.created > UNFILLED_RETENTION_MS);
}
export const QUERY_RETENTION_MS = 90 * 86_400_000;
export const UNFILLED_RETENTION_MS = 3 * 86_400_000;

/** Algo orders still waiting for their trigger: the only ones listed as open and the only ones cancellable. */
export function openAlgoOrders(account: SimAccount, symbol?: string): SimAlgoOrder[] {
  return account.algoOrders.filter((o) => o.algoStatus === "NEW" && (!symbol || o.symbol === symbol));
}

/** Algo orders that fired and are not done yet (TRIGGERING or TRIGGERED). */
export function firedAlgoOrders(account: SimAccount): SimAlgoOrder[] {
  return account.algoOrders.filter((o) => o.algoStatus === "TRIGGERING" || o.algoStatus === "TRIGGERED");
}
