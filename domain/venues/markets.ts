/**
 * A provider's market by our symbol, read through `callVenue` (an unreachable
 * venue is PROVIDER_DOWN, never a 500) and kept a minute: a fan-out's sizing
 * and every position's protection need the rules, not a venue read each.
 */
import type { Ctx } from "../context.ts";
import type { Market, ProviderId } from "../../venues/types.ts";
import { callVenue } from "./call_venue.ts";

export async function findMarket(ctx: Ctx, providerId: ProviderId, symbol: string): Promise<Market | null> {
  const markets = await ctx.caches.markets.get(
    providerId,
    () => callVenue(ctx, providerId, (venue) => venue.listMarkets()),
  );
  return markets!.find((market) => market.symbol === symbol) ?? null;
}
