/**
 * The simulated perpetual markets: filters close to the real venue's, a
 * synthetic book one tick around the mark, and the exchangeInfo document.
 */
import { add, mul, roundToStep, sub, toFixed } from "../../decimal.ts";

export interface Bracket {
  bracket: number;
  initialLeverage: number;
  notionalCap: number;
  notionalFloor: number;
  maintMarginRatio: number;
  cum: number;
}

export interface MarketDef {
  symbol: string;
  baseAsset: string;
  pricePrecision: number;
  quantityPrecision: number;
  tickSize: string;
  minPrice: string;
  maxPrice: string;
  stepSize: string;
  minQty: string;
  maxQty: string;
  marketMaxQty: string;
  minNotional: string;
  /**
   * exchangeInfo's legacy margin fields, as the venue publishes them: "2.5000"
   * and "5.0000" (i.e. 20x) whatever the symbol's real brackets allow (ccxt
   * 4.5.84 binance.js fetchMarkets comment, lines 3576-3577, BTCUSDT). The
   * leverage a symbol allows is in `brackets` (leverageBracket, signed).
   */
  maintMarginPercent: string;
  requiredMarginPercent: string;
  brackets: Bracket[];
  markPrice: string;
  depthQty: string;
}

/** Tiers from [initialLeverage, notionalCap, maintMarginRatio]; `cum` is the venue's maintenance amount. */
function brackets(rows: [number, number, string][]): Bracket[] {
  let floor = 0;
  let cum = "0";
  let previousRatio = "0";
  return rows.map(([initialLeverage, notionalCap, ratio], i) => {
    cum = add(cum, mul(floor, sub(ratio, previousRatio)));
    const bracket = {
      bracket: i + 1,
      initialLeverage,
      notionalCap,
      notionalFloor: floor,
      maintMarginRatio: Number(ratio),
      cum: Number(cum),
    };
    floor = notionalCap;
    previousRatio = ratio;
    return bracket;
  });
}

export const MARKET_DEFS: readonly MarketDef[] = [
  {
    symbol: "BTCUSDT",
    baseAsset: "BTC",
    pricePrecision: 2,
    quantityPrecision: 3,
    tickSize: "0.10",
    minPrice: "556.80",
    maxPrice: "4529764",
    stepSize: "0.001",
    minQty: "0.001",
    maxQty: "1000",
    marketMaxQty: "120",
    minNotional: "100",
    maintMarginPercent: "2.5000",
    requiredMarginPercent: "5.0000",
    brackets: brackets([[125, 50_000, "0.004"], [100, 600_000, "0.005"], [50, 3_000_000, "0.01"], [
      20,
      12_000_000,
      "0.025",
    ]]),
    markPrice: "65000.00",
    depthQty: "2.000",
  },
  {
    symbol: "ETHUSDT",
    baseAsset: "ETH",
    pricePrecision: 2,
    quantityPrecision: 3,
    tickSize: "0.01",
    minPrice: "39.86",
    maxPrice: "306177",
    stepSize: "0.001",
    minQty: "0.001",
    maxQty: "10000",
    marketMaxQty: "2000",
    minNotional: "20",
    maintMarginPercent: "2.5000",
    requiredMarginPercent: "5.0000",
    brackets: brackets([[100, 100_000, "0.005"], [75, 500_000, "0.0065"], [50, 1_000_000, "0.01"], [
      20,
      5_000_000,
      "0.025",
    ]]),
    markPrice: "3200.00",
    depthQty: "50.000",
  },
  {
    symbol: "SOLUSDT",
    baseAsset: "SOL",
    pricePrecision: 4,
    quantityPrecision: 0,
    tickSize: "0.0100",
    minPrice: "0.4200",
    maxPrice: "6857",
    stepSize: "1",
    minQty: "1",
    maxQty: "1000000",
    marketMaxQty: "5000",
    minNotional: "5",
    maintMarginPercent: "2.5000",
    requiredMarginPercent: "5.0000",
    brackets: brackets([[50, 10_000, "0.01"], [25, 50_000, "0.02"], [20, 200_000, "0.025"]]),
    markPrice: "150.0000",
    depthQty: "500",
  },
  {
    symbol: "BNBUSDT",
    baseAsset: "BNB",
    pricePrecision: 3,
    quantityPrecision: 2,
    tickSize: "0.010",
    minPrice: "6.600",
    maxPrice: "100000",
    stepSize: "0.01",
    minQty: "0.01",
    maxQty: "100000",
    marketMaxQty: "2000",
    minNotional: "5",
    maintMarginPercent: "2.5000",
    requiredMarginPercent: "5.0000",
    brackets: brackets([[50, 10_000, "0.01"], [25, 50_000, "0.02"], [20, 200_000, "0.025"]]),
    markPrice: "600.000",
    depthQty: "100.00",
  },
];

/** PERCENT_PRICE multipliers: a limit may sit at most 5% through the mark. */
export const MULTIPLIER_UP = "1.0500";
export const MULTIPLIER_DOWN = "0.9500";

export interface MarketState {
  def: MarketDef;
  markPrice: string;
  bid: string;
  ask: string;
  depthQty: string;
  lastFundingRate: string;
}

/** One tick either side of the mark, unless the control route set the touch explicitly. */
export function defaultTouch(def: MarketDef, markPrice: string): { bid: string; ask: string } {
  return {
    bid: roundToStep(sub(markPrice, def.tickSize), def.tickSize, "DOWN"),
    ask: roundToStep(add(markPrice, def.tickSize), def.tickSize, "UP"),
  };
}

export function createMarketStates(): Map<string, MarketState> {
  return new Map(MARKET_DEFS.map((def) => [def.symbol, {
    def,
    markPrice: def.markPrice,
    ...defaultTouch(def, def.markPrice),
    depthQty: def.depthQty,
    lastFundingRate: "0.00010000",
  }]));
}

/** `levels` price levels per side, one tick apart, each holding `depthQty`. */
export function bookLevels(
  market: MarketState,
  levels: number,
): { bids: [string, string][]; asks: [string, string][] } {
  const { tickSize, pricePrecision } = market.def;
  const bids: [string, string][] = [];
  const asks: [string, string][] = [];
  for (let i = 0; i < levels; i++) {
    const offset = mul(tickSize, i);
    const bid = sub(market.bid, offset);
    if (bid.startsWith("-") || bid === "0") break;
    bids.push([toFixed(bid, pricePrecision), market.depthQty]);
  }
  for (let i = 0; i < levels; i++) {
    asks.push([toFixed(add(market.ask, mul(tickSize, i)), pricePrecision), market.depthQty]);
  }
  return { bids, asks };
}

function symbolInfo(def: MarketDef, maxOpenOrders: number) {
  return {
    symbol: def.symbol,
    pair: def.symbol,
    contractType: "PERPETUAL",
    deliveryDate: 4133404800000,
    onboardDate: 1569398400000,
    status: "TRADING",
    maintMarginPercent: def.maintMarginPercent,
    requiredMarginPercent: def.requiredMarginPercent,
    baseAsset: def.baseAsset,
    quoteAsset: "USDT",
    marginAsset: "USDT",
    pricePrecision: def.pricePrecision,
    quantityPrecision: def.quantityPrecision,
    baseAssetPrecision: 8,
    quotePrecision: 8,
    underlyingType: "COIN",
    underlyingSubType: ["Layer-1"],
    settlePlan: 0,
    triggerProtect: "0.0500",
    liquidationFee: "0.012500",
    marketTakeBound: "0.05",
    maxMoveOrderLimit: 10000,
    filters: [
      { filterType: "PRICE_FILTER", minPrice: def.minPrice, maxPrice: def.maxPrice, tickSize: def.tickSize },
      { filterType: "LOT_SIZE", minQty: def.minQty, maxQty: def.maxQty, stepSize: def.stepSize },
      { filterType: "MARKET_LOT_SIZE", minQty: def.minQty, maxQty: def.marketMaxQty, stepSize: def.stepSize },
      { filterType: "MAX_NUM_ORDERS", limit: maxOpenOrders },
      { filterType: "MIN_NOTIONAL", notional: def.minNotional },
      {
        filterType: "PERCENT_PRICE",
        multiplierUp: MULTIPLIER_UP,
        multiplierDown: MULTIPLIER_DOWN,
        multiplierDecimal: "4",
      },
    ],
    orderTypes: ["LIMIT", "MARKET", "STOP", "STOP_MARKET", "TAKE_PROFIT", "TAKE_PROFIT_MARKET", "TRAILING_STOP_MARKET"],
    timeInForce: ["GTC", "IOC", "FOK", "GTX", "GTD"],
  };
}

/** The /fapi/v1/exchangeInfo document. */
export function exchangeInfo(
  now: number,
  weightLimit: number,
  orderLimits: { per10Seconds: number; perMinute: number },
  maxOpenOrders: number,
) {
  return {
    timezone: "UTC",
    serverTime: now,
    futuresType: "U_MARGINED",
    rateLimits: [
      { rateLimitType: "REQUEST_WEIGHT", interval: "MINUTE", intervalNum: 1, limit: weightLimit },
      { rateLimitType: "ORDERS", interval: "MINUTE", intervalNum: 1, limit: orderLimits.perMinute },
      { rateLimitType: "ORDERS", interval: "SECOND", intervalNum: 10, limit: orderLimits.per10Seconds },
    ],
    exchangeFilters: [],
    assets: ["USDT", "USDC", "BNB"].map((asset) => ({ asset, marginAvailable: true, autoAssetExchange: "-10000" })),
    symbols: MARKET_DEFS.map((def) => symbolInfo(def, maxOpenOrders)),
  };
}
