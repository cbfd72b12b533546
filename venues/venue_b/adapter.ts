/**
 * The VENUE_B adapter: a Hyperliquid-style perps DEX reached through an agent
 * wallet the client's principal wallet approved. Reads use the principal's
 * address; trading actions are signed by the agent key, opened from the secret
 * box inside each call.
 *
 * Client order ids become cloids (cloidFromClientOrderId). Where the venue
 * only reports the cloid (open-order listings, fills), `clientOrderId` holds
 * the cloid.
 */
import type { RequestBudget, SecretOpener, VenueAdapter } from "../types.ts";
import * as account from "./account.ts";
import { createVenueBClient, exchangeWeight } from "./client.ts";
import { ACTION_TTL_MS, DEFAULT_TIMEOUT_MS, PROVIDER_ID, VENUE_NAME } from "./constants.ts";
import { agentCredentials, principal, type VenueBContext } from "./context.ts";
import { createMarketCatalog } from "./markets.ts";
import { inProcessSignerNonces, type SignerNonces } from "./nonces.ts";
import * as trading from "./trading.ts";
import { walletApprovals } from "./wallet_approvals.ts";
import { builderStandingReader } from "./builder_standing.ts";
import { AccountStreams, MAX_OWN_USERS, streamUrlOf } from "./stream.ts";
import { STREAM_TIMING, type StreamTiming } from "./stream_connection.ts";

/** What the VENUE_B adapter is built from; everything else has a default. */
export interface VenueBAdapterDeps {
  /** e.g. https://api.hyperliquid.xyz, or the simulator's /sim/venue-b. */
  baseUrl: string;
  /** The WebSocket, e.g. wss://api.hyperliquid.xyz/ws; default: `baseUrl` with a ws scheme, plus `/ws`. */
  streamUrl?: string;
  /** Selects the signing network (source "a"/"b", hyperliquidChain); defaults to mainnet. */
  isMainnet?: boolean;
  secrets: SecretOpener;
  /**
   * Where the agents' nonces come from. A service passes one shared by all
   * its instances; absent, nonces are kept in this process only (one process
   * signing alone, as in the venue tests).
   */
  nonces?: SignerNonces;
  fetch?: typeof fetch;
  now?: () => number;
  timeoutMs?: number;
  budget?: RequestBudget;
  /**
   * Account pushes: how many users get subscriptions of their own (default 8
   * of the venue's 10 per IP; processes sharing an egress IP split them) and
   * the connections' clocks (tests shorten them).
   */
  stream?: { maxOwnUsers?: number; timing?: Partial<StreamTiming> };
}

/** Builds the VENUE_B adapter. One instance per venue URL; it keeps only the market cache. */
export function createVenueBAdapter(deps: VenueBAdapterDeps): VenueAdapter {
  const now = deps.now ?? (() => Date.now());
  const client = createVenueBClient({
    baseUrl: deps.baseUrl,
    fetch: deps.fetch ?? fetch,
    now,
    timeoutMs: deps.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    budget: deps.budget,
  });
  const ctx: VenueBContext = {
    client,
    markets: createMarketCatalog(client, now),
    secrets: deps.secrets,
    nonces: deps.nonces ?? inProcessSignerNonces(now),
    isMainnet: deps.isMainnet ?? true,
    now,
  };
  const streams = new AccountStreams({
    url: deps.streamUrl ?? streamUrlOf(deps.baseUrl),
    coins: async () => (await ctx.markets.listMarkets()).filter((m) => m.active).map((m) => m.providerSymbol),
    maxOwnUsers: deps.stream?.maxOwnUsers ?? MAX_OWN_USERS,
    timing: { ...STREAM_TIMING, ...deps.stream?.timing },
  });
  return {
    providerId: PROVIDER_ID,
    name: VENUE_NAME,
    kind: "PERP_DEX",
    scheme: "AGENT_WALLET",
    capabilities: { builderFee: true, agentWallet: true, feeInOtherAsset: false, paymentLedger: true },
    // Actions carry expiresAfter, ACTION_TTL_MS after signing.
    requestTtlMs: ACTION_TTL_MS,
    placementWeight: exchangeWeight({ orders: [{}] }),

    listMarkets: () => ctx.markets.listMarkets(),
    getOrderBook: (symbol, depth) => ctx.markets.getOrderBook(symbol, depth),

    testCredentials: (credentials) => account.testCredentials(ctx, credentials),
    getAccount: (credentials) => account.getAccount(ctx, credentials),
    getPositionSizes: (credentials) => account.getPositionSizes(ctx, credentials),

    placeOrder: (credentials, order) => trading.placeOrder(ctx, credentials, order),
    getOrder: (credentials, symbol, clientOrderId) => trading.getOrder(ctx, credentials, symbol, clientOrderId),
    cancelOrder: (credentials, symbol, clientOrderId) => trading.cancelOrder(ctx, credentials, symbol, clientOrderId),
    modifyOrder: (credentials, request) => trading.modifyOrder(ctx, credentials, request),
    setLeverage: (credentials, symbol, leverage) => trading.setLeverage(ctx, credentials, symbol, leverage),
    setMarginMode: (credentials, symbol, mode) => trading.setMarginMode(ctx, credentials, symbol, mode),

    placeProtection: (credentials, request) => trading.placeProtection(ctx, credentials, request),
    placeProtections: (credentials, requests) => trading.placeProtections(ctx, credentials, requests),
    cancelProtection: (credentials, symbol, clientOrderId) =>
      trading.cancelProtection(ctx, credentials, symbol, clientOrderId),
    listProtections: (credentials, symbol) => account.listProtections(ctx, credentials, symbol),

    getFills: (credentials, query) => account.getFills(ctx, credentials, query),
    getFunding: (credentials, query) => account.getFunding(ctx, credentials, query),

    walletApprovals: walletApprovals(ctx.isMainnet, now, (user) => account.accountMode(ctx, user)),
    getMaxBuilderFee: (user, builder) => account.getMaxBuilderFee(ctx, user, builder),
    getBuilderStanding: builderStandingReader((builder) => account.accountMode(ctx, builder), now),
    isAgentApproved: (user, agent) => account.isAgentApproved(ctx, user, agent),
    submitUserSignedAction: (signed) => account.submitUserSignedAction(ctx, signed),
    getLedger: (user, since) => account.getLedger(ctx, user, since),

    // The principal's address: the venue knows the account by it, never by the agent.
    watchAccount: (credentials, watcher) => streams.watch(principal(agentCredentials(credentials)), watcher),
  };
}
