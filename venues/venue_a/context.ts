/**
 * What the adapter's verbs share: the two host clients, the clock, the market
 * cache and the one place where a sealed secret is opened.
 */
import { type VenueCredentials, VenueError } from "../types.ts";
import type { ApiKeyPair, ServerClock, VenueAClient } from "./client.ts";
import { PROVIDER_ID } from "./constants.ts";
import { localError } from "./errors.ts";
import type { MarketRules } from "./mappers.ts";

export interface AdapterContext {
  /** The futures host (`/fapi/...`). */
  fapi: VenueAClient;
  /** The spot host (`/sapi/...`). */
  spot: VenueAClient;
  clock: ServerClock;
  /** exchangeInfo rules by symbol, cached for MARKETS_TTL_MS with one read in flight at a time; `refresh` forces a read. */
  markets(refresh?: boolean): Promise<Map<string, MarketRules>>;
  /** A symbol's mark price; concurrent callers, whatever their account, share the read in flight (public data). */
  markPrice(symbol: string): Promise<string>;
  /** Opens the sealed secret for the duration of one call. */
  keys(credentials: VenueCredentials): Promise<ApiKeyPair>;
}

/** The rules of `symbol`, or INVALID_ORDER when the venue does not list it. */
export async function marketRules(ctx: AdapterContext, symbol: string): Promise<MarketRules> {
  const rules = (await ctx.markets()).get(symbol);
  if (!rules) throw localError("INVALID_ORDER", `Unknown symbol "${symbol}" on ${PROVIDER_ID}`);
  return rules;
}

/** True when `error` is the venue answering `code`. */
export function hasVenueCode(error: unknown, ...codes: number[]): error is VenueError {
  return error instanceof VenueError && typeof error.detail.venueCode === "number" &&
    codes.includes(error.detail.venueCode);
}
