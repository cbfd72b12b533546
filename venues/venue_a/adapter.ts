/**
 * The VENUE_A adapter: the `VenueAdapter` interface over the venue's REST API
 * (Binance USD-M futures wire protocol), the real venue or its simulator alike.
 */
import type {
  AccountSnapshot,
  CredentialCheck,
  MarginMode,
  Market,
  OrderBook,
  RequestBudget,
  SecretOpener,
  VenueAdapter,
  VenueCredentials,
} from "../types.ts";
import { isZero } from "../decimal.ts";
import { type ApiKeyPair, createVenueAClient, ServerClock } from "./client.ts";
import {
  DEFAULT_TIMEOUT_MS,
  DEPTH_LIMITS,
  depthWeight,
  LISTEN_KEY_KEEPALIVE_MS,
  LISTEN_KEY_KEEPALIVE_RETRY_MS,
  LISTEN_KEY_RECHECK_WINDOW_MS,
  LISTEN_KEY_RETRY_DELAYS_MS,
  MARKETS_TTL_MS,
  MAX_STREAMS_PER_CONNECTION,
  PATHS,
  PROVIDER_ID,
  RECV_WINDOW_MS,
  SAPI_USED_WEIGHT_HEADER,
  SAPI_WEIGHT_LIMIT_1M,
  STREAM_ATTEMPT_WINDOW_MS,
  STREAM_ATTEMPTS_PER_WINDOW,
  STREAM_CONNECT_TIMEOUT_MS,
  STREAM_CONNECTION_REFRESH_MS,
  STREAM_EVENTS,
  STREAM_KEYS_PER_CONNECTION,
  STREAM_PROBE_INTERVAL_MS,
  STREAM_PROBE_TIMEOUT_MS,
  STREAM_RECONNECT_DELAYS_MS,
  USD_STABLE_ASSETS,
  WEIGHTS,
} from "./constants.ts";
import { type AdapterContext, hasVenueCode } from "./context.ts";
import { ALREADY_SET_CODES, localError } from "./errors.ts";
import { getFills, getFunding } from "./history.ts";
import { confirmingKeyRefusals } from "./key_refusal.ts";
import {
  type MarketRules,
  orderLimitsOf,
  toBalances,
  toCredentialCheck,
  toMarket,
  toMarketRules,
  toOrder,
  toOrderBook,
  toPositions,
  weightLimitOf,
} from "./mappers.ts";
import { createStreamHub } from "./stream_hub.ts";
import * as trading from "./trading.ts";
import { createAccountWatches } from "./user_stream.ts";
import type {
  WireAccountAsset,
  WireAccountConfig,
  WireApiRestrictions,
  WireDepth,
  WireExchangeInfo,
  WireOrder,
  WirePositionRisk,
  WireSymbolConfig,
} from "./wire.ts";

export interface VenueAAdapterDeps {
  /** Futures REST base, e.g. https://fapi.binance.com or the simulator's base. */
  baseUrl: string;
  /** Spot REST base for /sapi (apiRestrictions), e.g. https://api.binance.com or the simulator's spot host. */
  spotBaseUrl: string;
  /** User-data-stream WebSocket base, e.g. wss://fstream.binance.com; default: `baseUrl` with a ws scheme (the simulator). */
  streamUrl?: string;
  secrets: SecretOpener;
  fetch?: typeof fetch;
  now?: () => number;
  /** Per HTTP request, body included. */
  timeoutMs?: number;
  /** Request weight of this egress (both hosts count against the same IP). */
  budget?: RequestBudget;
  /** The user data stream's pacing; the defaults are the venue's (constants.ts). Tests shorten them. */
  stream?: Partial<StreamTuning>;
}

/** How the user data stream is paced (constants.ts says why each default is what it is). */
export interface StreamTuning {
  keysPerConnection: number;
  keepaliveMs: number;
  keepaliveRetryMs: number;
  recheckWindowMs: number;
  keyRetryDelaysMs: readonly number[];
  reconnectDelaysMs: readonly number[];
  probeIntervalMs: number;
  probeTimeoutMs: number;
  connectTimeoutMs: number;
  refreshAfterMs: number;
}

const STREAM_DEFAULTS: StreamTuning = {
  keysPerConnection: STREAM_KEYS_PER_CONNECTION,
  keepaliveMs: LISTEN_KEY_KEEPALIVE_MS,
  keepaliveRetryMs: LISTEN_KEY_KEEPALIVE_RETRY_MS,
  recheckWindowMs: LISTEN_KEY_RECHECK_WINDOW_MS,
  keyRetryDelaysMs: LISTEN_KEY_RETRY_DELAYS_MS,
  reconnectDelaysMs: STREAM_RECONNECT_DELAYS_MS,
  probeIntervalMs: STREAM_PROBE_INTERVAL_MS,
  probeTimeoutMs: STREAM_PROBE_TIMEOUT_MS,
  connectTimeoutMs: STREAM_CONNECT_TIMEOUT_MS,
  refreshAfterMs: STREAM_CONNECTION_REFRESH_MS,
};

/** Builds the VENUE_A adapter. Each call opens the sealed API secret itself and drops it when done. */
export function createVenueAAdapter(deps: VenueAAdapterDeps): VenueAdapter {
  const clock = new ServerClock(deps.now ?? (() => Date.now()));
  const transport = {
    fetch: deps.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init)),
    clock,
    timeoutMs: deps.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    timeUrl: `${deps.baseUrl.replace(/\/+$/, "")}${PATHS.time}`,
    budget: deps.budget,
  };
  const spot = createVenueAClient({
    ...transport,
    baseUrl: deps.spotBaseUrl,
    usedWeight: { header: SAPI_USED_WEIGHT_HEADER, limit: SAPI_WEIGHT_LIMIT_1M },
  });
  const fapi = confirmingKeyRefusals(createVenueAClient({ ...transport, baseUrl: deps.baseUrl }), spot);

  // exchangeInfo is read at most once per MARKETS_TTL_MS, whatever the number of orders: every placement
  // needs the rules, and concurrent callers on a cold or stale cache (a fan-out's first orders) share one read.
  let cached: { at: number; rules: Map<string, MarketRules> } | undefined;
  let loading: Promise<Map<string, MarketRules>> | undefined;
  function markets(refresh = false): Promise<Map<string, MarketRules>> {
    if (!refresh && cached && clock.now() - cached.at < MARKETS_TTL_MS) return Promise.resolve(cached.rules);
    loading ??= (async () => {
      const info = await fapi.request<WireExchangeInfo>({
        method: "GET",
        path: PATHS.exchangeInfo,
        weight: WEIGHTS.exchangeInfo,
        action: "Reading exchange info",
      });
      const limit = weightLimitOf(info);
      if (limit) fapi.setWeightLimit(limit);
      fapi.setOrderLimits(orderLimitsOf(info));
      cached = { at: clock.now(), rules: new Map(toMarketRules(info).map((rules) => [rules.symbol, rules])) };
      return cached.rules;
    })().finally(() => loading = undefined);
    return loading;
  }

  // A conditional placement checks its trigger against the mark price (trading.ts). The price is public and the same
  // for every account: placements waiting for a symbol's mark join the read already in flight (a fan-out's thousands
  // of stops then cost a few reads, not one each). Nothing is kept once the read answers: a placement that starts
  // after a price move always reads after it.
  const markReads = new Map<string, Promise<string>>();
  function markPrice(symbol: string): Promise<string> {
    const inFlight = markReads.get(symbol);
    if (inFlight) return inFlight;
    const price = fapi.request<{ markPrice: string }>({
      method: "GET",
      path: PATHS.premiumIndex,
      params: { symbol },
      weight: WEIGHTS.premiumIndexSymbol,
      action: "Reading the mark price",
    }).then((index) => index.markPrice).finally(() => markReads.delete(symbol));
    markReads.set(symbol, price);
    return price;
  }

  async function keys(credentials: VenueCredentials): Promise<ApiKeyPair> {
    if (credentials.scheme !== "API_KEY") {
      throw localError("CREDENTIAL_REJECTED", `${PROVIDER_ID} needs API key credentials`);
    }
    try {
      return { apiKey: credentials.apiKey, secret: await deps.secrets.open(credentials.sealedApiSecret) };
    } catch {
      // The cause is deliberately dropped: a crypto error says nothing useful and must not carry key material.
      throw localError("CREDENTIAL_REJECTED", "The stored API secret could not be opened");
    }
  }

  const ctx: AdapterContext = { fapi, spot, clock, markets, markPrice, keys };

  const tuning: StreamTuning = { ...STREAM_DEFAULTS, ...deps.stream };
  const hub = createStreamHub({
    baseUrl: deps.streamUrl ?? deps.baseUrl.replace(/^http/, "ws"),
    events: STREAM_EVENTS,
    keysPerConnection: Math.min(tuning.keysPerConnection, MAX_STREAMS_PER_CONNECTION),
    reconnectDelaysMs: tuning.reconnectDelaysMs,
    probeIntervalMs: tuning.probeIntervalMs,
    probeTimeoutMs: tuning.probeTimeoutMs,
    connectTimeoutMs: tuning.connectTimeoutMs,
    refreshAfterMs: tuning.refreshAfterMs,
    attempts: { max: STREAM_ATTEMPTS_PER_WINDOW, windowMs: STREAM_ATTEMPT_WINDOW_MS },
  });
  const watchAccount = createAccountWatches({
    fapi,
    hub,
    keepaliveMs: tuning.keepaliveMs,
    keepaliveRetryMs: tuning.keepaliveRetryMs,
    recheckWindowMs: tuning.recheckWindowMs,
    keyRetryDelaysMs: tuning.keyRetryDelaysMs,
  });

  const signedGet = <T>(auth: ApiKeyPair, path: string, weight: number, action: string, params = {}) =>
    fapi.request<T>({ method: "GET", path, params, weight, auth, action });

  return {
    providerId: PROVIDER_ID,
    name: "Venue A",
    kind: "PERP_CEX",
    scheme: "API_KEY",
    capabilities: { builderFee: false, agentWallet: false, feeInOtherAsset: true, paymentLedger: false },
    // The venue refuses a request whose timestamp is older than its recvWindow.
    requestTtlMs: RECV_WINDOW_MS,
    placementWeight: WEIGHTS.orderMutation,

    // From the same cache as placements: a listing at most MARKETS_TTL_MS old costs nothing to callers.
    async listMarkets(): Promise<Market[]> {
      return [...(await markets()).values()].map(toMarket);
    },

    async getOrderBook(symbol: string, depth = 20): Promise<OrderBook> {
      const limit = DEPTH_LIMITS.find((candidate) => candidate >= depth) ?? DEPTH_LIMITS[DEPTH_LIMITS.length - 1];
      const wire = await fapi.request<WireDepth>({
        method: "GET",
        path: PATHS.depth,
        params: { symbol, limit },
        weight: depthWeight(limit),
        action: "Reading the order book",
      });
      return toOrderBook(symbol, wire, depth, clock.now());
    },

    async testCredentials(credentials): Promise<CredentialCheck> {
      const auth = await keys(credentials);
      const restrictions = await spot.request<WireApiRestrictions>({
        method: "GET",
        path: PATHS.apiRestrictions,
        weight: WEIGHTS.apiRestrictions,
        auth,
        action: "Reading API key restrictions",
      });
      // Without futures access every /fapi call answers -2015; the restriction itself is the finding.
      const config = restrictions.enableFutures
        ? await signedGet<WireAccountConfig>(auth, PATHS.accountConfig, WEIGHTS.accountConfig, "Reading account modes")
        : null;
      return toCredentialCheck(restrictions, config, credentials.scheme === "API_KEY" ? credentials.apiKey : "");
    },

    async getAccount(credentials): Promise<AccountSnapshot> {
      const auth = await keys(credentials);
      const [account, risks, configs, open] = await Promise.all([
        signedGet<{ assets: WireAccountAsset[] }>(auth, PATHS.account, WEIGHTS.account, "Reading the account"),
        signedGet<WirePositionRisk[]>(auth, PATHS.positionRisk, WEIGHTS.positionRisk, "Reading positions"),
        signedGet<WireSymbolConfig[]>(auth, PATHS.symbolConfig, WEIGHTS.symbolConfig, "Reading symbol settings"),
        signedGet<WireOrder[]>(auth, PATHS.openOrders, WEIGHTS.openOrdersAll, "Listing open orders"),
      ]);
      const needsPrices = account.assets.some((a) => !USD_STABLE_ASSETS.has(a.asset) && !isZero(a.walletBalance));
      const marks = new Map<string, string>();
      if (needsPrices) {
        const index = await fapi.request<{ symbol: string; markPrice: string }[]>({
          method: "GET",
          path: PATHS.premiumIndex,
          weight: WEIGHTS.premiumIndexAll,
          action: "Reading mark prices",
        });
        for (const row of index) marks.set(row.symbol, row.markPrice);
      }
      return {
        balances: toBalances(account.assets, marks),
        positions: toPositions(risks, configs),
        openOrders: open.map(toOrder),
      };
    },

    async getPositionSizes(credentials) {
      const risks = await signedGet<WirePositionRisk[]>(
        await keys(credentials),
        PATHS.positionRisk,
        WEIGHTS.positionRisk,
        "Reading positions",
      );
      return toPositions(risks, []).map(({ symbol, side, quantity }) => ({ symbol, side, quantity }));
    },

    async placeOrder(credentials, order) {
      return trading.placeOrder(ctx, await keys(credentials), order);
    },
    async getOrder(credentials, symbol, clientOrderId) {
      return trading.getOrder(ctx, await keys(credentials), symbol, clientOrderId);
    },
    async cancelOrder(credentials, symbol, clientOrderId) {
      return trading.cancelOrder(ctx, await keys(credentials), symbol, clientOrderId);
    },
    async modifyOrder(credentials, request) {
      return trading.modifyOrder(ctx, await keys(credentials), request);
    },

    async setLeverage(credentials, symbol, leverage): Promise<void> {
      if (!Number.isInteger(leverage) || leverage < 1 || leverage > 125) {
        throw localError("INVALID_ORDER", `Leverage must be a whole number from 1 to 125, got "${leverage}"`);
      }
      await fapi.request({
        method: "POST",
        path: PATHS.leverage,
        params: { symbol, leverage },
        weight: WEIGHTS.configMutation,
        mutation: true,
        auth: await keys(credentials),
        action: "Setting the leverage",
      });
    },

    async setMarginMode(credentials, symbol, mode: MarginMode): Promise<void> {
      try {
        await fapi.request({
          method: "POST",
          path: PATHS.marginType,
          params: { symbol, marginType: mode },
          weight: WEIGHTS.configMutation,
          mutation: true,
          auth: await keys(credentials),
          action: "Setting the margin mode",
        });
      } catch (error) {
        // -4046 "No need to change margin type.": already in the asked mode.
        if (!hasVenueCode(error, ...ALREADY_SET_CODES)) throw error;
      }
    },

    async placeProtection(credentials, request) {
      return trading.placeProtection(ctx, await keys(credentials), request);
    },
    async cancelProtection(credentials, _symbol, clientOrderId) {
      return trading.cancelProtection(ctx, await keys(credentials), clientOrderId);
    },
    async listProtections(credentials, symbol) {
      return trading.listProtections(ctx, await keys(credentials), symbol);
    },

    async getFills(credentials, query) {
      return getFills(ctx, await keys(credentials), query);
    },
    async getFunding(credentials, query) {
      return getFunding(ctx, await keys(credentials), query);
    },

    watchAccount,
  };
}
