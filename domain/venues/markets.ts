/** A provider's market by our symbol, read through `callVenue` (an unreachable venue is PROVIDER_DOWN, never a 500). */
import type { Ctx } from "../context.ts";
import type { Market, ProviderId } from "../../venues/types.ts";
import { callVenue } from "./call_venue.ts";

export async function findMarket(ctx: Ctx, providerId: ProviderId, symbol: string): Promise<Market | null> {
  const markets = await callVenue(ctx, providerId, (venue) => venue.listMarkets());
  return markets.find((market) => market.symbol === symbol) ?? null;
}
