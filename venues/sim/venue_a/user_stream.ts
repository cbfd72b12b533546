/**
 * The venue's user data stream: listen keys and the WebSocket connections
 * that carry their events, as the venue documents them.
 *
 * Facts (developers.binance.com, USDⓈ-M Futures, read from the 2026-05-28
 * scrape in shubhamtaywade82/binance-docs-scraper unless said otherwise):
 * - "User Data Streams Connect": a listenKey is valid for 60 minutes after
 *   creation; PUT extends it by 60 minutes, or answers -1125 "This listenKey
 *   does not exist." (then POST a new one); DELETE closes the stream and
 *   invalidates the key; POST on an account with an active key returns that
 *   key and extends it (one key per account, shared by whoever asks). A
 *   connection is valid for 24 hours.
 * - "Start/Keepalive User Data Stream": POST/PUT /fapi/v1/listenKey, weight 1,
 *   no parameters, security USER_STREAM (the X-MBX-APIKEY header alone, no
 *   signature); both answer {"listenKey": ...}. DELETE answers {} (SDKs; the
 *   WebSocket-API twin userDataStream.stop answers result {}).
 * - "Important WebSocket Change Notice" (2026-03-05, legacy decommissioned
 *   2026-04-23): user data moved to the routed base wss://fstream.binance.com
 *   /private: `ws` mode /private/ws?listenKey=K&events=A/B (or /private/ws/K),
 *   `stream` mode /private/stream?listenKey=K1&events=A&listenKey=K2&events=B
 *   for several keys on one connection. Unrouted /ws and /stream connections
 *   "will ONLY be able to receive data from /public": they open and stay
 *   silent for user data. ccxt 4.5.84 connects to /private/ws?listenKey=K.
 * - "Websocket Market Streams" (Connect): combined (`stream` mode) events are
 *   wrapped {"stream": <name>, "data": <event>}; at most 1024 streams per
 *   connection; 10 incoming messages per second, beyond which the connection
 *   is cut; a ping frame every 3 minutes, cut after 10 minutes without pong.
 *   The docs show no /private/stream payload: the wrapper's name is the
 *   listen key here, as it was for user data on the legacy /stream.
 * - "Live Subscribing/Unsubscribing": SUBSCRIBE, UNSUBSCRIBE,
 *   LIST_SUBSCRIPTIONS, SET_PROPERTY/GET_PROPERTY ("combined") with an
 *   unsigned `id`, answered {"result": ..., "id": ...} or {"code", "msg"}.
 *   The change notice says SUBSCRIBE "may include listenKey event items"
 *   without showing their form; the simulator takes a bare listen key.
 * - "Event: User Data Stream Expired": listenKeyExpired {e, E, listenKey} is
 *   pushed on connections carrying a key that expires; nothing more follows
 *   for it. Observed by others (notes in public repositories, 2026-07/10):
 *   DELETE pushes it too; with an `events` filter only the events named are
 *   pushed (listenKeyExpired included); an unknown key is accepted at the
 *   handshake and stays silent.
 * - Connection attempts: 300 per 5 minutes per IP is documented for the spot
 *   WebSocket API (binance-spot-api-docs, rate limits); the futures pages
 *   give none, so the simulator applies the spot figure and refuses the
 *   handshake with 429 beyond it (how the venue refuses is not documented).
 *
 * The venue's clock (`state.now`) runs key expiry and the 24-hour cut, so tests
 * move them with the test clock; a sweep runs before every request to the
 * futures host and once a second while any connection is open.
 */
import { SERVICE_UNAVAILABLE, SimError } from "./errors.ts";
import { randomKey, type SimAccount, type SimAccountEvent, type SimState } from "./state.ts";
import { listenKeyExpired, type UserEvent, userEventsOf } from "./user_events.ts";

export const LISTEN_KEY_VALIDITY_MS = 60 * 60_000;
export const CONNECTION_LIFETIME_MS = 24 * 60 * 60_000;
/** Deno pings an idle connection after this many seconds and cuts it without a pong (the venue: ping 3 min, cut 10). */
const PING_IDLE_SECONDS = 180;
const ATTEMPT_WINDOW_MS = 5 * 60_000;
const SWEEP_INTERVAL_MS = 1000;
/** How long a shutdown waits for a socket's closing handshake before it stops waiting. */
const CLOSE_WAIT_MS = 2000;

export interface StreamLimits {
  /** Streams (listen keys) one connection may carry. */
  streamsPerConnection: number;
  /** Messages a client may send per second on one connection before it is cut. */
  messagesPerSecond: number;
  /** Connection attempts per 5 minutes from the (one) IP the simulator sees. */
  connectionsPer5Minutes: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  streamsPerConnection: 1024,
  messagesPerSecond: 10,
  connectionsPer5Minutes: 300,
};

interface ListenKey {
  listenKey: string;
  account: SimAccount;
  expiresAt: number;
}

/** Which events a stream asked for: null is every event. */
type EventFilter = ReadonlySet<string> | null;

interface Connection {
  id: number;
  socket: WebSocket;
  path: string;
  /** Events arrive wrapped {stream, data} (`stream` mode). */
  combined: boolean;
  /** Listen key -> its event filter. Always empty on the unrouted legacy paths. */
  streams: Map<string, EventFilter>;
  /** Routed to /private: only those connections carry user data. */
  routed: boolean;
  openedAt: number;
  /** Frames held until the socket is open. */
  pending: string[] | null;
  /** Wall-clock times of the client's messages in the last second. */
  received: number[];
  closed: Promise<void>;
}

/** A connection request: which keys on which path, as read from the URL. */
export interface StreamRequest {
  path: string;
  routed: boolean;
  combined: boolean;
  streams: [string, EventFilter][];
}

export interface StreamView {
  connections: { id: number; path: string; streams: number; openedAt: number }[];
  listenKeys: { apiKey: string; listenKey: string; expiresAt: number }[];
}

export interface UserStreams {
  limits: StreamLimits;
  /** POST /fapi/v1/listenKey. */
  start(account: SimAccount): { listenKey: string };
  /** PUT /fapi/v1/listenKey. */
  keepAlive(account: SimAccount): { listenKey: string };
  /** DELETE /fapi/v1/listenKey. */
  stop(account: SimAccount): Record<string, never>;
  /** The WebSocket handshake of a stream request. */
  accept(request: Request, stream: StreamRequest): Response;
  /** Cuts every connection carrying the account's key (every connection without one); the count cut. */
  drop(account?: SimAccount): number;
  /** Expires the account's key now, as if its hour had run out; false when it has none. */
  expire(account: SimAccount): boolean;
  view(): StreamView;
  /** Expires keys past their hour and cuts connections past 24 hours, on the venue's clock. */
  sweep(): void;
  /** Closes every connection (a simulator shutting down). */
  close(): Promise<void>;
}

const COMBINED_PROPERTY = "combined";

/** Reads `events=A/B` (a missing or empty list is every event). */
export function eventFilter(value: string | null | undefined): EventFilter {
  if (!value) return null;
  return new Set(value.split("/").filter(Boolean));
}

function allows(filter: EventFilter, event: string): boolean {
  return filter === null || filter.has(event);
}

const invalidListenKey = () => new SimError(-1125, "This listenKey does not exist.");

/** The user data stream of one simulator; it hears every account change through `state.listeners`. */
export function createUserStreams(state: SimState): UserStreams {
  const limits: StreamLimits = { ...DEFAULT_STREAM_LIMITS };
  const keys = new Map<string, ListenKey>();
  const keyOfAccount = new Map<SimAccount, ListenKey>();
  const connections = new Set<Connection>();
  const subscribers = new Map<string, Set<Connection>>();
  const attempts: number[] = [];
  let nextId = 1;
  let sweeper: ReturnType<typeof setInterval> | undefined;

  function activeKey(account: SimAccount): ListenKey | undefined {
    sweep();
    return keyOfAccount.get(account);
  }

  function subscribe(connection: Connection, listenKey: string, filter: EventFilter): void {
    connection.streams.set(listenKey, filter);
    let set = subscribers.get(listenKey);
    if (!set) subscribers.set(listenKey, set = new Set());
    set.add(connection);
  }

  function unsubscribe(connection: Connection, listenKey: string): void {
    connection.streams.delete(listenKey);
    const set = subscribers.get(listenKey);
    set?.delete(connection);
    if (set?.size === 0) subscribers.delete(listenKey);
  }

  function send(connection: Connection, listenKey: string, event: UserEvent): void {
    const frame = JSON.stringify(connection.combined ? { stream: listenKey, data: event } : event);
    if (connection.pending) connection.pending.push(frame);
    else if (connection.socket.readyState === WebSocket.OPEN) connection.socket.send(frame);
  }

  function push(listenKey: string, events: UserEvent[]): void {
    for (const connection of subscribers.get(listenKey) ?? []) {
      const filter = connection.streams.get(listenKey) ?? null;
      for (const event of events) if (allows(filter, event.e)) send(connection, listenKey, event);
    }
  }

  /** The key dies: its connections hear listenKeyExpired (if they asked for it) and nothing more. */
  function kill(key: ListenKey): void {
    keys.delete(key.listenKey);
    if (keyOfAccount.get(key.account) === key) keyOfAccount.delete(key.account);
    push(key.listenKey, [listenKeyExpired(state.now(), key.listenKey)]);
    for (const connection of [...(subscribers.get(key.listenKey) ?? [])]) unsubscribe(connection, key.listenKey);
  }

  function sweep(): void {
    const now = state.now();
    for (const key of [...keys.values()]) if (key.expiresAt <= now) kill(key);
    for (const connection of connections) {
      if (now - connection.openedAt >= CONNECTION_LIFETIME_MS) cut(connection, 1001, "24-hour connection limit");
    }
  }

  function cut(connection: Connection, code: number, reason: string): void {
    forget(connection);
    try {
      connection.socket.close(code, reason);
    } catch {
      // Already closing.
    }
  }

  function forget(connection: Connection): void {
    if (!connections.delete(connection)) return;
    for (const listenKey of [...connection.streams.keys()]) unsubscribe(connection, listenKey);
    if (connections.size === 0 && sweeper !== undefined) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  }

  function publish(account: SimAccount, change: SimAccountEvent): void {
    const key = keyOfAccount.get(account);
    if (!key || !subscribers.has(key.listenKey)) return;
    if (key.expiresAt <= state.now()) return kill(key);
    push(key.listenKey, userEventsOf(state, account, change));
  }
  state.listeners.push(publish);

  function answer(connection: Connection, reply: Record<string, unknown>): void {
    if (connection.socket.readyState === WebSocket.OPEN) connection.socket.send(JSON.stringify(reply));
  }

  /** A client message: the live-subscription methods, within the message rate. */
  function receive(connection: Connection, text: string): void {
    const now = performance.now();
    connection.received = connection.received.filter((time) => now - time < 1000);
    connection.received.push(now);
    if (connection.received.length > limits.messagesPerSecond) return cut(connection, 1008, "Too many requests");
    let request: { method?: unknown; params?: unknown; id?: unknown };
    try {
      request = JSON.parse(text);
    } catch {
      return answer(connection, { code: 3, msg: "Invalid JSON: expected value at line 1 column 1" });
    }
    const { method, id } = request;
    const params = Array.isArray(request.params) ? request.params : [];
    if (typeof id !== "number" || !Number.isInteger(id) || id < 0) {
      return answer(connection, { code: 2, msg: "Invalid request: request ID must be an unsigned integer" });
    }
    switch (method) {
      case "LIST_SUBSCRIPTIONS":
        return answer(connection, { result: [...connection.streams.keys()], id });
      case "SUBSCRIBE":
      case "UNSUBSCRIBE":
        for (const item of params) {
          if (typeof item !== "string" || !connection.routed) continue;
          if (method === "UNSUBSCRIBE") unsubscribe(connection, item);
          else if (keys.has(item) && connection.streams.size < limits.streamsPerConnection) {
            subscribe(connection, item, null);
          }
        }
        return answer(connection, { result: null, id });
      case "SET_PROPERTY":
        if (params[0] !== COMBINED_PROPERTY) return answer(connection, { code: 0, msg: "Unknown property", id });
        if (typeof params[1] !== "boolean") {
          return answer(connection, { code: 1, msg: "Invalid value type: expected Boolean" });
        }
        connection.combined = params[1];
        return answer(connection, { result: null, id });
      case "GET_PROPERTY":
        if (params[0] !== COMBINED_PROPERTY) return answer(connection, { code: 0, msg: "Unknown property", id });
        return answer(connection, { result: connection.combined, id });
      default:
        return answer(connection, {
          code: 2,
          msg: `Invalid request: unknown variant ${
            JSON.stringify(method)
          }, expected one of \`SUBSCRIBE\`, \`UNSUBSCRIBE\`, \`LIST_SUBSCRIPTIONS\`, \`SET_PROPERTY\`, \`GET_PROPERTY\``,
        });
    }
  }

  function accept(request: Request, stream: StreamRequest): Response {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return Response.json({ code: -1000, msg: "Expected a WebSocket upgrade." }, { status: 400 });
    }
    if (state.fault.mode === "DOWN") return Response.json(SERVICE_UNAVAILABLE, { status: 503 });
    sweep();
    const now = state.now();
    while (attempts.length > 0 && now - attempts[0] >= ATTEMPT_WINDOW_MS) attempts.shift();
    if (attempts.length >= limits.connectionsPer5Minutes) {
      return Response.json({ code: -1003, msg: "Too many connection attempts." }, { status: 429 });
    }
    attempts.push(now);
    if (stream.streams.length > limits.streamsPerConnection) {
      return Response.json(
        { code: -1130, msg: `Too many streams: at most ${limits.streamsPerConnection} per connection.` },
        { status: 400 },
      );
    }
    const { socket, response } = Deno.upgradeWebSocket(request, { idleTimeout: PING_IDLE_SECONDS });
    let closed!: () => void;
    const connection: Connection = {
      id: nextId++,
      socket,
      path: stream.path,
      combined: stream.combined,
      streams: new Map(),
      routed: stream.routed,
      openedAt: now,
      pending: [],
      received: [],
      closed: new Promise((resolve) => closed = resolve),
    };
    // Known keys only: the venue takes an unknown one at the handshake and never pushes for it.
    if (stream.routed) {
      for (const [listenKey, filter] of stream.streams) {
        if (keys.has(listenKey)) subscribe(connection, listenKey, filter);
      }
    }
    connections.add(connection);
    sweeper ??= setInterval(sweep, SWEEP_INTERVAL_MS);
    socket.onopen = () => {
      const frames = connection.pending ?? [];
      connection.pending = null;
      for (const frame of frames) socket.send(frame);
    };
    socket.onmessage = (message) => receive(connection, String(message.data));
    socket.onclose = () => {
      forget(connection);
      closed();
    };
    socket.onerror = () => {};
    return response;
  }

  return {
    limits,
    start(account) {
      const now = state.now();
      const current = activeKey(account);
      if (current) {
        current.expiresAt = now + LISTEN_KEY_VALIDITY_MS;
        return { listenKey: current.listenKey };
      }
      const key = { listenKey: randomKey(), account, expiresAt: now + LISTEN_KEY_VALIDITY_MS };
      keys.set(key.listenKey, key);
      keyOfAccount.set(account, key);
      return { listenKey: key.listenKey };
    },
    keepAlive(account) {
      const current = activeKey(account);
      if (!current) throw invalidListenKey();
      current.expiresAt = state.now() + LISTEN_KEY_VALIDITY_MS;
      return { listenKey: current.listenKey };
    },
    stop(account) {
      const current = activeKey(account);
      if (!current) throw invalidListenKey();
      kill(current);
      return {};
    },
    accept,
    drop(account) {
      const target = account ? keyOfAccount.get(account)?.listenKey : undefined;
      if (account && !target) return 0;
      let dropped = 0;
      for (const connection of [...connections]) {
        if (target && !connection.streams.has(target)) continue;
        cut(connection, 1001, "Connection dropped");
        dropped++;
      }
      return dropped;
    },
    expire(account) {
      const current = keyOfAccount.get(account);
      if (!current) return false;
      kill(current);
      return true;
    },
    view() {
      return {
        connections: [...connections].map((c) => ({
          id: c.id,
          path: c.path,
          streams: c.streams.size,
          openedAt: c.openedAt,
        })),
        listenKeys: [...keys.values()].map((k) => ({
          apiKey: k.account.apiKey,
          listenKey: k.listenKey,
          expiresAt: k.expiresAt,
        })),
      };
    },
    sweep,
    async close() {
      const open = [...connections];
      for (const connection of open) cut(connection, 1001, "Simulator shutting down");
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = new Promise<void>((resolve) => timer = setTimeout(resolve, CLOSE_WAIT_MS));
      await Promise.race([Promise.all(open.map((c) => c.closed)), waited]);
      clearTimeout(timer);
    },
  };
}
