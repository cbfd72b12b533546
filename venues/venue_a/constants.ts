/**
 * Wire constants of VENUE_A (a Binance USD-M-futures-style REST API).
 *
 * Paths are relative to the venue base URL; `/sapi` paths live on the spot
 * host, which is why the adapter takes a separate `spotBaseUrl`.
 */

export const PROVIDER_ID = "VENUE_A" as const;

/** Header that carries the API key on signed calls. */
export const API_KEY_HEADER = "X-MBX-APIKEY";
/** Header that reports the IP's request weight used in the current minute. */
export const USED_WEIGHT_HEADER = "X-MBX-USED-WEIGHT-1M";
/**
 * The spot host's (/sapi) answer to the same question: the IP weight its
 * endpoint used this minute, out of SAPI_WEIGHT_LIMIT_1M (spot docs, "LIMITS":
 * each /sapi endpoint with an IP limit has its own 12,000 per minute).
 */
export const SAPI_USED_WEIGHT_HEADER = "X-SAPI-USED-IP-WEIGHT-1M";
export const SAPI_WEIGHT_LIMIT_1M = 12_000;
/** Headers of order responses that report the account's new orders in the current windows. */
export const ORDER_COUNT_10S_HEADER = "X-MBX-ORDER-COUNT-10S";
export const ORDER_COUNT_1M_HEADER = "X-MBX-ORDER-COUNT-1M";

/** The venue's default; sent explicitly so a changed default cannot widen it silently. */
export const RECV_WINDOW_MS = 5000;
/** The longest recvWindow the venue takes. */
export const MAX_RECV_WINDOW_MS = 60_000;
export const DEFAULT_TIMEOUT_MS = 10_000;

/** Used until exchangeInfo tells us the real REQUEST_WEIGHT per minute. */
export const DEFAULT_WEIGHT_LIMIT_1M = 2400;
/**
 * Share of the weight limit we allow ourselves: the header is per IP and other
 * processes may share it, so stop before the venue starts answering 429/418.
 */
export const WEIGHT_BUDGET_SHARE = 0.9;

/**
 * How long a caller waits after a -2015 the spot host did not confirm (a
 * valid key with futures allowed: the venue's temporary block, key_refusal.ts).
 * The venue does not say how long such a block lasts; its IP bans start at
 * 2 minutes (general-info, LIMITS), so one minute between tries is cautious.
 */
export const TEMPORARY_BLOCK_RETRY_MS = 60_000;

/** Backoff between attempts of a read that failed transiently (the venue docs suggest doubling from 200 ms). */
export const READ_RETRY_DELAYS_MS = [200, 400] as const;

/**
 * exchangeInfo is static enough to cache; rounding every order needs it. A
 * minute bounds how long a new listing or a changed filter goes unseen.
 */
export const MARKETS_TTL_MS = 60_000;

/** userTrades accepts at most a 7-day range and keeps about 6 months. */
export const TRADES_WINDOW_MS = 7 * 24 * 60 * 60_000;
export const TRADES_RETENTION_MS = 180 * 24 * 60 * 60_000;
export const PAGE_LIMIT = 1000;

/** Valid `limit` values of /fapi/v1/depth. */
export const DEPTH_LIMITS = [5, 10, 20, 50, 100, 500, 1000] as const;

/** Assets whose USD value is their balance. */
export const USD_STABLE_ASSETS = new Set(["USDT", "USDC", "BUSD"]);

/** newClientOrderId / clientAlgoId rule of the venue. */
export const CLIENT_ORDER_ID_PATTERN = /^[.A-Z:/a-z0-9_-]{1,36}$/;

export const PATHS = {
  time: "/fapi/v1/time",
  exchangeInfo: "/fapi/v1/exchangeInfo",
  depth: "/fapi/v1/depth",
  premiumIndex: "/fapi/v1/premiumIndex",
  order: "/fapi/v1/order",
  openOrders: "/fapi/v1/openOrders",
  algoOrder: "/fapi/v1/algoOrder",
  openAlgoOrders: "/fapi/v1/openAlgoOrders",
  account: "/fapi/v3/account",
  positionRisk: "/fapi/v3/positionRisk",
  symbolConfig: "/fapi/v1/symbolConfig",
  accountConfig: "/fapi/v1/accountConfig",
  leverage: "/fapi/v1/leverage",
  marginType: "/fapi/v1/marginType",
  userTrades: "/fapi/v1/userTrades",
  income: "/fapi/v1/income",
  apiRestrictions: "/sapi/v1/account/apiRestrictions",
  listenKey: "/fapi/v1/listenKey",
} as const;

/** Request weights from the venue docs; order mutations cost no IP weight. */
export const WEIGHTS = {
  time: 1,
  exchangeInfo: 1,
  premiumIndexAll: 10,
  premiumIndexSymbol: 1,
  order: 1,
  orderMutation: 0,
  openOrdersAll: 40,
  openOrdersSymbol: 1,
  account: 5,
  positionRisk: 5,
  symbolConfig: 5,
  accountConfig: 5,
  configMutation: 1,
  userTrades: 5,
  income: 30,
  apiRestrictions: 1,
  listenKey: 1,
} as const;

/** Depth weight by requested limit. */
export function depthWeight(limit: number): number {
  if (limit <= 50) return 2;
  if (limit <= 100) return 5;
  if (limit <= 500) return 10;
  return 20;
}

// ---------------------------------------------------------------- user data stream

/**
 * The user data stream (facts and sources in venues/sim/venue_a/user_stream.ts):
 * user data moved to the routed `/private` base in 2026 (the unrouted `/ws`
 * and `/stream` stopped pushing it on 2026-04-23); `stream` mode carries
 * several listen keys on one connection, each with the events it wants.
 */
export const STREAM_PATH = "/private/stream";

/** What a watch needs: orders, algo (stop and target) orders, balances and positions, and the key's death. */
export const STREAM_EVENTS = ["ORDER_TRADE_UPDATE", "ALGO_UPDATE", "ACCOUNT_UPDATE", "listenKeyExpired"] as const;

/** A listen key lives 60 minutes past its last POST or PUT; keeping it alive every 30 leaves one miss of slack. */
export const LISTEN_KEY_KEEPALIVE_MS = 30 * 60_000;
/** After a failed keepalive, try again this soon (the key still has about half an hour). */
export const LISTEN_KEY_KEEPALIVE_RETRY_MS = 60_000;
/**
 * After a reconnection the key is proved alive by a keepalive within this
 * window (the venue accepts a dead key silently): an account is blind for at
 * most this long, and a reconnection of 5,000 keys spends 1,000 weight a minute.
 */
export const LISTEN_KEY_RECHECK_WINDOW_MS = 5 * 60_000;

/**
 * Listen keys per connection. The venue allows 1024 streams on one, but the
 * keys travel in the URL (about 140 characters each with their events), and
 * 50 keep it near 7 KB, under the 8 KB request line common HTTP front ends
 * take; 10,000 accounts then need 200 connections, within the connection budget.
 */
export const STREAM_KEYS_PER_CONNECTION = 50;
/** The venue's own ceiling of streams per connection. */
export const MAX_STREAMS_PER_CONNECTION = 1024;

/** The venue cuts a connection at 24 hours; it is replaced before then, the new one opening before the old one closes. */
export const STREAM_CONNECTION_REFRESH_MS = 23 * 60 * 60_000 + 50 * 60_000;

/**
 * Connection attempts per IP: 300 per 5 minutes (the venue's spot WebSocket
 * figure; the futures pages give none). We allow ourselves 250 of them.
 */
export const STREAM_ATTEMPTS_PER_WINDOW = 250;
export const STREAM_ATTEMPT_WINDOW_MS = 5 * 60_000;

/** Waits before reconnecting after a drop or a failed attempt, growing to the last (plus up to 20% jitter). */
export const STREAM_RECONNECT_DELAYS_MS = [250, 1000, 2000, 5000, 10_000, 30_000] as const;
/** Waits before asking for a listen key again after the venue refused one, growing to the last. */
export const LISTEN_KEY_RETRY_DELAYS_MS = [1000, 5000, 30_000, 120_000, 300_000] as const;

/**
 * A quiet connection is asked LIST_SUBSCRIPTIONS this often; any answer
 * within the timeout proves it alive, none proves it dead (the client cannot
 * see the venue's pings, so a silently dead connection would look like a
 * quiet account). One message a minute is far within 10 a second.
 */
export const STREAM_PROBE_INTERVAL_MS = 60_000;
export const STREAM_PROBE_TIMEOUT_MS = 10_000;
/** How long opening a connection may take before it counts as failed. */
export const STREAM_CONNECT_TIMEOUT_MS = 10_000;
