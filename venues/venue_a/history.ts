/**
 * Fills and funding from VENUE_A's history endpoints, paged so nothing is
 * silently cut at the venue's 1000-row limit.
 *
 * userTrades needs a symbol and a range of at most 7 days, so fills without a
 * symbol first find the symbols that traded (from income rows and open
 * positions) and then walk 7-day windows per symbol.
 */
import { isZero } from "../decimal.ts";
import type { Fill, FundingPayment } from "../types.ts";
import type { Params } from "./auth.ts";
import type { ApiKeyPair } from "./client.ts";
import { PAGE_LIMIT, PATHS, TRADES_RETENTION_MS, TRADES_WINDOW_MS, WEIGHTS } from "./constants.ts";
import type { AdapterContext } from "./context.ts";
import { toFill, toFunding } from "./mappers.ts";
import type { WireIncome, WirePositionRisk, WireUserTrade } from "./wire.ts";

/**
 * Rows of one time range, oldest first. When a page is full the next one
 * starts at the last row's time (rows of that same millisecond come again and
 * are dropped by `key`), so a burst at one instant cannot be skipped.
 */
async function pagedByTime<T extends { time: number }>(
  fetchPage: (startTime: number, endTime: number) => Promise<T[]>,
  key: (row: T) => string,
  startTime: number,
  endTime: number,
): Promise<T[]> {
  const seen = new Map<string, T>();
  let from = startTime;
  for (;;) {
    const page = await fetchPage(from, endTime);
    let added = 0;
    for (const row of page) {
      if (!seen.has(key(row))) added++;
      seen.set(key(row), row);
    }
    if (page.length < PAGE_LIMIT || added === 0) break;
    from = Math.max(page[page.length - 1].time, from + 1);
  }
  return [...seen.values()];
}

function incomePages(ctx: AdapterContext, keys: ApiKeyPair, params: Params, startTime: number, endTime: number) {
  return pagedByTime<WireIncome>(
    (from, to) =>
      ctx.fapi.request<WireIncome[]>({
        method: "GET",
        path: PATHS.income,
        params: { ...params, startTime: from, endTime: to, limit: PAGE_LIMIT },
        weight: WEIGHTS.income,
        auth: keys,
        action: "Reading income history",
      }),
    (row) => `${row.incomeType}:${row.tranId}`,
    startTime,
    endTime,
  );
}

async function tradedSymbols(ctx: AdapterContext, keys: ApiKeyPair, since: number, now: number): Promise<string[]> {
  const [income, positions] = await Promise.all([
    incomePages(ctx, keys, {}, since, now),
    ctx.fapi.request<WirePositionRisk[]>({
      method: "GET",
      path: PATHS.positionRisk,
      weight: WEIGHTS.positionRisk,
      auth: keys,
      action: "Reading positions",
    }),
  ]);
  const symbols = new Set(income.map((row) => row.symbol).filter((symbol) => symbol !== ""));
  for (const position of positions) if (!isZero(position.positionAmt)) symbols.add(position.symbol);
  return [...symbols].sort();
}

export async function getFills(
  ctx: AdapterContext,
  keys: ApiKeyPair,
  query: { symbol?: string; since: number },
): Promise<Fill[]> {
  const now = ctx.clock.now();
  // Older trades are gone from the venue; asking for them only costs weight.
  const start = Math.max(query.since, now - TRADES_RETENTION_MS);
  const symbols = query.symbol ? [query.symbol] : await tradedSymbols(ctx, keys, start, now);
  const trades: WireUserTrade[] = [];
  for (const symbol of symbols) {
    for (let windowStart = start; windowStart <= now; windowStart += TRADES_WINDOW_MS) {
      const windowEnd = Math.min(windowStart + TRADES_WINDOW_MS - 1, now);
      const rows = await pagedByTime<WireUserTrade>(
        (from, to) =>
          ctx.fapi.request<WireUserTrade[]>({
            method: "GET",
            path: PATHS.userTrades,
            params: { symbol, startTime: from, endTime: to, limit: PAGE_LIMIT },
            weight: WEIGHTS.userTrades,
            auth: keys,
            action: "Reading trades",
          }),
        (row) => String(row.id),
        windowStart,
        windowEnd,
      );
      trades.push(...rows);
    }
  }
  return trades.sort((a, b) => a.time - b.time || a.id - b.id).map(toFill);
}

export async function getFunding(
  ctx: AdapterContext,
  keys: ApiKeyPair,
  query: { since: number },
): Promise<FundingPayment[]> {
  const rows = await incomePages(ctx, keys, { incomeType: "FUNDING_FEE" }, query.since, ctx.clock.now());
  return rows.sort((a, b) => a.time - b.time || a.tranId - b.tranId).map(toFunding);
}
