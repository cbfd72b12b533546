/**
 * The VENUE_B market catalogue: the perp universe (cached briefly, since
 * every order needs the asset index and szDecimals), books and mids.
 */
import type { Market, OrderBook } from "../types.ts";
import type { VenueBClient } from "./client.ts";
import { META_TTL_MS } from "./constants.ts";
import { venueError } from "./errors.ts";
import { findAsset, toMarket, toSymbol, wireDecimal } from "./mappers.ts";
import type { WireAsset, WireAssetCtx, WireL2Book, WireMeta } from "./wire.ts";

/** A coin of the universe and its asset index. */
export interface ResolvedAsset {
  /** The asset index the venue's actions use. */
  index: number;
  asset: WireAsset;
}

/** Market data reads and the symbol -> asset resolution every order needs. */
export interface MarketCatalog {
  resolve(symbolOrCoin: string): Promise<ResolvedAsset>;
  listMarkets(): Promise<Market[]>;
  getOrderBook(symbolOrCoin: string, depth?: number): Promise<OrderBook>;
  /** The current mid price of a coin, as the venue's allMids reports it. */
  mid(coin: string): Promise<string>;
}

const MAX_BOOK_DEPTH = 20;

/** A catalogue that caches the universe for META_TTL_MS. */
export function createMarketCatalog(client: VenueBClient, now: () => number): MarketCatalog {
  type Universe = { at: number; meta: WireMeta; ctxs: WireAssetCtx[] };
  let cache: Universe | null = null;
  let loading: Promise<Universe> | undefined;

  /** A fresh read; concurrent callers (a fan-out's first orders on a cold cache) share the one in flight. */
  function load(): Promise<Universe> {
    loading ??= (async () => {
      const [meta, ctxs] = await client.info<[WireMeta, WireAssetCtx[]]>({ type: "metaAndAssetCtxs" });
      cache = { at: now(), meta, ctxs };
      return cache;
    })().finally(() => loading = undefined);
    return loading;
  }

  async function resolve(symbolOrCoin: string): Promise<ResolvedAsset> {
    const cached = cache && now() - cache.at < META_TTL_MS ? cache : null;
    // A miss in the cache may be a listing newer than it: look once more before refusing.
    const found = (cached && findAsset(cached.meta.universe, symbolOrCoin)) ??
      findAsset((await load()).meta.universe, symbolOrCoin);
    if (!found) throw venueError("INVALID_ORDER", `Unknown VENUE_B market "${symbolOrCoin}"`);
    return found;
  }

  return {
    resolve,

    async listMarkets() {
      const { meta, ctxs } = await load();
      return meta.universe.map((asset, index) => toMarket(asset, ctxs[index]));
    },

    async getOrderBook(symbolOrCoin, depth = MAX_BOOK_DEPTH) {
      const { asset } = await resolve(symbolOrCoin);
      const book = await client.info<WireL2Book | null>({ type: "l2Book", coin: asset.name });
      if (!book) throw venueError("INVALID_ORDER", `VENUE_B has no book for "${asset.name}"`);
      const levels = (side: WireL2Book["levels"][number]) =>
        side.slice(0, depth).map((level) => ({ price: wireDecimal(level.px), quantity: wireDecimal(level.sz) }));
      return {
        symbol: toSymbol(asset.name),
        bids: levels(book.levels[0]),
        asks: levels(book.levels[1]),
        time: book.time,
      };
    },

    async mid(coin) {
      const mids = await client.info<Record<string, string>>({ type: "allMids" });
      const mid = mids[coin];
      if (!mid) throw venueError("INVALID_ORDER", `VENUE_B has no price for "${coin}"`);
      return mid;
    },
  };
}
