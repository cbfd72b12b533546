/**
 * VENUE_A JSON answers as the adapter reads them: only the fields we use,
 * decimals as strings and ids/times as numbers, exactly as the venue sends.
 */

export interface WireFilter {
  filterType: string;
  [field: string]: unknown;
}

export interface WireSymbol {
  symbol: string;
  contractType: string;
  status: string;
  baseAsset: string;
  quoteAsset: string;
  requiredMarginPercent: string;
  filters: WireFilter[];
}

export interface WireExchangeInfo {
  rateLimits?: { rateLimitType: string; interval: string; intervalNum: number; limit: number }[];
  symbols: WireSymbol[];
}

export interface WireDepth {
  E?: number;
  T?: number;
  bids: [string, string][];
  asks: [string, string][];
}

export interface WireOrder {
  orderId: number;
  clientOrderId: string;
  symbol: string;
  side: "BUY" | "SELL";
  type: string;
  status: string;
  origQty: string;
  executedQty: string;
  price: string;
  avgPrice: string;
  stopPrice?: string;
  reduceOnly: boolean;
  closePosition?: boolean;
  timeInForce: string;
  time?: number;
  updateTime: number;
}

export interface WireAlgoOrder {
  algoId: number;
  clientAlgoId: string;
  symbol: string;
  side: "BUY" | "SELL";
  orderType: string;
  algoStatus: string;
  quantity: string;
  triggerPrice: string;
  price?: string;
  reduceOnly: boolean;
  closePosition?: boolean;
  timeInForce?: string;
  createTime: number;
  actualPrice?: string;
  actualQty?: string;
  /** The regular order placed when it triggered ("" before). */
  actualOrderId?: string | number;
}

export interface WireAccountAsset {
  asset: string;
  walletBalance: string;
  availableBalance: string;
}

export interface WirePositionRisk {
  symbol: string;
  positionAmt: string;
  entryPrice: string;
  markPrice: string;
  unRealizedProfit: string;
  liquidationPrice: string;
}

export interface WireSymbolConfig {
  symbol: string;
  marginType: string;
  leverage: number;
}

export interface WireUserTrade {
  id: number;
  orderId: number;
  symbol: string;
  side: "BUY" | "SELL";
  price: string;
  qty: string;
  realizedPnl: string;
  commission: string;
  commissionAsset: string;
  time: number;
}

export interface WireIncome {
  symbol: string;
  incomeType: string;
  income: string;
  asset: string;
  time: number;
  tranId: number;
}

export interface WireApiRestrictions {
  ipRestrict: boolean;
  enableReading: boolean;
  enableWithdrawals: boolean;
  enableInternalTransfer?: boolean;
  enableFutures: boolean;
}

export interface WireAccountConfig {
  dualSidePosition: boolean;
  multiAssetsMargin: boolean;
}

// ---------------------------------------------------------------- user data stream

/** ORDER_TRADE_UPDATE's order: symbol, client order id, execution type and status. */
export interface WireStreamOrder {
  s: string;
  c: string;
  x: string;
  X: string;
}

/** ALGO_UPDATE's order: symbol, client algo id, algo status, quantity and executed quantity. */
export interface WireStreamAlgo {
  s: string;
  caid: string;
  X: string;
  q?: string;
  aq?: string;
}

/** A user data stream event, read only for what a push names (the facts are read by REST). */
export type WireUserEvent =
  | { e: "ORDER_TRADE_UPDATE"; E: number; o: WireStreamOrder }
  | { e: "ALGO_UPDATE"; E: number; o: WireStreamAlgo }
  | { e: "ACCOUNT_UPDATE"; E: number; a: { m: string } }
  | { e: "listenKeyExpired"; E: number; listenKey?: string }
  | { e: string; E: number };
