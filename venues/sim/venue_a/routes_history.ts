/**
 * Trade and income history (USER_DATA, signed), with the venue's time-range
 * rules: no range means the last 7 days, userTrades spans at most 7 days.
 */
import { errors } from "./errors.ts";
import type { RequestParams } from "./params.ts";
import type { RouteSpec } from "./route.ts";

const WEEK_MS = 7 * 24 * 60 * 60_000;

function timeRange(params: RequestParams, now: number, maxSpanMs?: number): [number, number] {
  const start = params.int("startTime");
  const end = params.int("endTime");
  if (start === undefined && end === undefined) return [now - WEEK_MS, now];
  if (start === undefined) return [end! - WEEK_MS, end!];
  if (end === undefined) return [start, maxSpanMs ? Math.min(start + maxSpanMs, now) : now];
  if (start > end) throw errors.startAfterEnd();
  if (maxSpanMs !== undefined && end - start > maxSpanMs) throw errors.lookupTooLong(maxSpanMs / 3_600_000);
  return [start, end];
}

function limitOf(params: RequestParams, fallback: number): number {
  const limit = params.int("limit") ?? fallback;
  if (limit < 1 || limit > 1000) throw errors.invalidParam("limit");
  return limit;
}

export function historyRoutes(): RouteSpec[] {
  return [
    {
      method: "GET",
      path: "/fapi/v1/userTrades",
      weight: 5,
      security: "SIGNED",
      handle: ({ state, account, params }) => {
        const symbol = params.required("symbol");
        if (!state.markets.has(symbol)) throw errors.badSymbol();
        const orderId = params.int("orderId");
        const fromId = params.int("fromId");
        const limit = limitOf(params, 500);
        const ranged = params.get("startTime") !== undefined || params.get("endTime") !== undefined;
        if (fromId !== undefined && ranged) throw errors.badCombination();
        const [start, end] = fromId === undefined ? timeRange(params, state.now(), WEEK_MS) : [0, Infinity];
        return account.trades
          .filter((t) =>
            t.symbol === symbol && (orderId === undefined || t.orderId === orderId) &&
            (fromId === undefined || t.id >= fromId) && t.time >= start && t.time <= end
          )
          .slice(0, limit);
      },
    },
    {
      method: "GET",
      path: "/fapi/v1/income",
      weight: 30,
      security: "SIGNED",
      handle: ({ state, account, params }) => {
        const symbol = params.get("symbol");
        const incomeType = params.get("incomeType");
        const limit = limitOf(params, 100);
        const page = params.int("page") ?? 1;
        const [start, end] = timeRange(params, state.now());
        return account.income
          .filter((row) =>
            (!symbol || row.symbol === symbol) && (!incomeType || row.incomeType === incomeType) &&
            row.time >= start && row.time <= end
          )
          .slice((page - 1) * limit, page * limit);
      },
    },
  ];
}
