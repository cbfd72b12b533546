/**
 * Public market-data endpoints (security NONE).
 */
import { errors } from "./errors.ts";
import { bookLevels, exchangeInfo, type MarketState } from "./markets.ts";
import type { RequestParams } from "./params.ts";
import type { RouteSpec } from "./route.ts";
import type { SimState } from "./state.ts";

const DEPTH_LIMITS = [5, 10, 20, 50, 100, 500, 1000];

function depthWeight(params: RequestParams): number {
  const limit = Number(params.get("limit") ?? 500);
  return limit <= 50 ? 2 : limit <= 100 ? 5 : limit <= 500 ? 10 : 20;
}

/** One market, or every market when `symbol` is absent (arrays then, like the venue). */
function selected<T>(state: SimState, params: RequestParams, view: (market: MarketState) => T): T | T[] {
  const symbol = params.get("symbol");
  if (symbol === undefined) return [...state.markets.values()].map(view);
  const market = state.markets.get(symbol);
  if (!market) throw errors.badSymbol();
  return view(market);
}

export function publicRoutes(): RouteSpec[] {
  return [
    { method: "GET", path: "/fapi/v1/ping", weight: 1, security: "NONE", handle: () => ({}) },
    {
      method: "GET",
      path: "/fapi/v1/time",
      weight: 1,
      security: "NONE",
      handle: ({ state }) => ({ serverTime: state.now() }),
    },
    {
      method: "GET",
      path: "/fapi/v1/exchangeInfo",
      weight: 1,
      security: "NONE",
      handle: ({ state }) =>
        exchangeInfo(state.now(), state.weight.limit, state.orderLimits, state.openCaps.ordersPerSymbol),
    },
    {
      method: "GET",
      path: "/fapi/v1/depth",
      weight: depthWeight,
      security: "NONE",
      handle: ({ state, params }) => {
        const market = state.markets.get(params.required("symbol"));
        if (!market) throw errors.badSymbol();
        const limit = params.get("limit") ?? "500";
        if (!DEPTH_LIMITS.includes(Number(limit))) throw errors.badDepthLimit(limit);
        const now = state.now();
        return { lastUpdateId: now, E: now, T: now, ...bookLevels(market, Number(limit)) };
      },
    },
    {
      method: "GET",
      path: "/fapi/v1/ticker/bookTicker",
      weight: (params) => params.get("symbol") ? 2 : 5,
      security: "NONE",
      handle: ({ state, params }) =>
        selected(state, params, (m) => ({
          symbol: m.def.symbol,
          bidPrice: m.bid,
          bidQty: m.depthQty,
          askPrice: m.ask,
          askQty: m.depthQty,
          time: state.now(),
        })),
    },
    {
      method: "GET",
      path: "/fapi/v1/premiumIndex",
      weight: (params) => params.get("symbol") ? 1 : 10,
      security: "NONE",
      handle: ({ state, params }) =>
        selected(state, params, (m) => ({
          symbol: m.def.symbol,
          markPrice: m.markPrice,
          indexPrice: m.markPrice,
          estimatedSettlePrice: m.markPrice,
          lastFundingRate: m.lastFundingRate,
          interestRate: "0.00010000",
          nextFundingTime: (Math.floor(state.now() / 28_800_000) + 1) * 28_800_000,
          time: state.now(),
        })),
    },
    {
      method: "GET",
      path: "/fapi/v1/ticker/price",
      weight: (params) => params.get("symbol") ? 1 : 2,
      security: "NONE",
      handle: ({ state, params }) =>
        selected(state, params, (m) => ({ symbol: m.def.symbol, price: m.markPrice, time: state.now() })),
    },
    {
      method: "GET",
      path: "/fapi/v1/ticker/24hr",
      weight: (params) => params.get("symbol") ? 1 : 40,
      security: "NONE",
      handle: ({ state, params }) =>
        selected(state, params, (m) => {
          const now = state.now();
          return {
            symbol: m.def.symbol,
            priceChange: "0",
            priceChangePercent: "0",
            weightedAvgPrice: m.markPrice,
            lastPrice: m.markPrice,
            lastQty: "0",
            openPrice: m.markPrice,
            highPrice: m.markPrice,
            lowPrice: m.markPrice,
            volume: "0",
            quoteVolume: "0",
            openTime: now - 86_400_000,
            closeTime: now,
            firstId: 0,
            lastId: 0,
            count: 0,
          };
        }),
    },
  ];
}
