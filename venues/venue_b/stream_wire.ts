/**
 * VENUE_B's WebSocket as the venue documents it: the frames each side sends,
 * the channels account watching uses, and the per-IP limits with the venue's
 * own refusal texts. Shared by the adapter (reading) and the simulator
 * (writing); the facts and their sources are in docs/venues.md
 * (docs: websocket, subscriptions, timeouts and heartbeats,
 * rate limits and user limits; the @nktkas/hyperliquid and Python SDKs).
 */
import type { HexAddress } from "../types.ts";
import type { WireFill } from "./wire.ts";

/** Path of the WebSocket below the API's base URL (wss://api.hyperliquid.xyz/ws). */
export const STREAM_PATH = "/ws";

/**
 * The first frame the venue sends on a new connection: plain text, not JSON
 * (the Python SDK skips it by this exact text).
 */
export const STREAM_GREETING = "Websocket connection established.";

// ---------------------------------------------------------------- limits (per IP)

/** The venue's WebSocket limits per IP address, from "Rate limits and user limits". */
export interface StreamLimits {
  /** Open connections. */
  connections: number;
  /** New connections in any minute. */
  newConnectionsPerMinute: number;
  /** Subscriptions across all connections. */
  subscriptions: number;
  /** Distinct users named by user-specific subscriptions, across all connections. */
  users: number;
  /** Messages received from the IP in any minute, across all connections. */
  messagesPerMinute: number;
}

export const STREAM_LIMITS: StreamLimits = {
  connections: 10,
  newConnectionsPerMinute: 30,
  subscriptions: 1000,
  users: 10,
  messagesPerMinute: 2000,
};

/** The server closes a connection that sent it nothing for this long; `{"method":"ping"}` keeps it open. */
export const STREAM_IDLE_TIMEOUT_MS = 60_000;

/**
 * The venue's refusals, each sent as `{"channel":"error","data":<text>}`. The
 * limits' texts as quoted from the venue in nktkas/hyperliquid#78; the others
 * as the venue's own order_book_server (hyperliquid-dex) words them, with the
 * subscription or the message echoed as JSON.
 */
export const STREAM_REFUSALS = {
  users: (limit: number) => `Cannot track more than ${limit} total users.`,
  subscriptions: (limit: number) => `Cannot subscribe to more than ${limit} channels.`,
  messages: (limit: number) => `Cannot send more than ${limit} messages per minute.`,
  alreadySubscribed: (subscription: unknown) => `Already subscribed: ${JSON.stringify(subscription)}`,
  alreadyUnsubscribed: (subscription: unknown) => `Already unsubscribed: ${JSON.stringify(subscription)}`,
  invalid: (subscription: unknown) => `Invalid subscription: ${JSON.stringify(subscription)}`,
  unparsable: (text: string) => `Error parsing JSON into valid websocket request: ${text}`,
} as const;

// ---------------------------------------------------------------- client -> venue

/** The subscriptions account watching uses (the venue has more: books, candles, mids...). */
export type WsSubscription =
  | { type: "orderUpdates"; user: HexAddress }
  /** Its messages come on channel "user". */
  | { type: "userEvents"; user: HexAddress }
  | { type: "userFills"; user: HexAddress; aggregateByTime?: boolean }
  | { type: "userFundings"; user: HexAddress }
  | { type: "trades"; coin: string };

/** What a client sends. */
export type WsClientMessage =
  | { method: "subscribe" | "unsubscribe"; subscription: WsSubscription }
  | { method: "ping" };

/** A subscription's identity: its type and the user or coin it names (users compare in lowercase). */
export function subscriptionKey(subscription: { type: string; user?: string; coin?: string }): string {
  return `${subscription.type}:${subscription.user?.toLowerCase() ?? subscription.coin ?? ""}`;
}

// ---------------------------------------------------------------- venue -> client

/** An order as `orderUpdates` carries it (the `openOrders` item shape). */
export interface WsBasicOrder {
  coin: string;
  side: "B" | "A";
  limitPx: string;
  /** Remaining size. */
  sz: string;
  oid: number;
  timestamp: number;
  origSz: string;
  cloid?: HexAddress;
  reduceOnly?: true;
}

/**
 * One order's new status. `status` is one of the venue's order statuses
 * (open, filled, canceled, triggered, rejected, marginCanceled, ...). The
 * message does not name the user: a connection carrying `orderUpdates` of
 * several users cannot tell them apart.
 */
export interface WsOrder {
  order: WsBasicOrder;
  status: string;
  statusTimestamp: number;
}

/** A funding payment as `userEvents` and `userFundings` carry it; negative `usdc` = paid. */
export interface WsUserFunding {
  time: number;
  coin: string;
  usdc: string;
  szi: string;
  fundingRate: string;
  nSamples: number | null;
}

/** A message of `userEvents` (channel "user"): one kind per message, no user named. */
export type WsUserEvent =
  | { fills: WireFill[] }
  | { funding: WsUserFunding }
  | {
    liquidation: {
      lid: number;
      liquidator: HexAddress;
      liquidated_user: HexAddress;
      liquidated_ntl_pos: string;
      liquidated_account_value: string;
    };
  }
  | { nonUserCancel: { coin: string; oid: number }[] };

/** A message of `userFills`; the first after subscribing is the snapshot of recent fills. */
export interface WsUserFills {
  isSnapshot?: true;
  user: HexAddress;
  fills: WireFill[];
}

/** A message of `userFundings`; the first after subscribing is the snapshot. */
export interface WsUserFundings {
  isSnapshot?: true;
  user: HexAddress;
  fundings: WsUserFunding[];
}

/** A public trade; `users` names both sides, buyer first. `side` is the taker's. */
export interface WsTrade {
  coin: string;
  side: "B" | "A";
  px: string;
  sz: string;
  hash: HexAddress;
  time: number;
  tid: number;
  users: [HexAddress, HexAddress];
}

/** Every JSON frame the venue sends on the channels above. */
export type WsServerMessage =
  | { channel: "subscriptionResponse"; data: WsClientMessage & { method: "subscribe" | "unsubscribe" } }
  | { channel: "pong" }
  | { channel: "error"; data: string }
  | { channel: "orderUpdates"; data: WsOrder[] }
  | { channel: "user"; data: WsUserEvent }
  | { channel: "userFills"; data: WsUserFills }
  | { channel: "userFundings"; data: WsUserFundings }
  | { channel: "trades"; data: WsTrade[] };
