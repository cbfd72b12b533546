/**
 * `GET /ws` of the VENUE_B simulator: the venue's WebSocket for the channels
 * account watching uses (orderUpdates, userEvents, userFills, userFundings,
 * trades), fed by the simulator's own engine (feed.ts), with the venue's
 * per-IP limits and refusal texts, its ping/pong and its idle timeout.
 *
 * Like the venue, `orderUpdates` and `userEvents` messages do not name the
 * user: a client that puts several users' subscriptions on one connection
 * cannot tell whose change a message is. `userFills`, `userFundings` and
 * `trades` do name them.
 */
import type { Context, Hono } from "hono";
import { getConnInfo } from "hono/deno";
import type { HexAddress } from "../../types.ts";
import {
  STREAM_GREETING,
  STREAM_IDLE_TIMEOUT_MS,
  STREAM_LIMITS,
  STREAM_REFUSALS,
  type StreamLimits,
  subscriptionKey,
  type WsServerMessage,
  type WsSubscription,
} from "../../venue_b/stream_wire.ts";
import type { SimEvent } from "./feed.ts";
import { findUser, marketByCoin, type SimState } from "./state.ts";

/** The stream's limits and timeout; tests shorten them. */
export interface VenueBStreamOptions {
  limits?: Partial<StreamLimits>;
  /** A connection that sends nothing for this long is closed (the venue: 60 s). */
  idleTimeoutMs?: number;
}

/** How many fills a `userFills` snapshot carries at most (as the `userFills` info request). */
const FILLS_SNAPSHOT = 2000;
/** How many payments a `userFundings` snapshot carries at most (as the `userFunding` info request). */
const FUNDINGS_SNAPSHOT = 500;
const MINUTE_MS = 60_000;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

interface Peer {
  id: number;
  ip: string;
  socket: WebSocket;
  /** By subscriptionKey. */
  subscriptions: Map<string, WsSubscription>;
  idle?: ReturnType<typeof setTimeout>;
}

/** Times within the last minute, oldest first. */
class MinuteWindow {
  readonly #times = new Map<string, number[]>();

  count(key: string, now: number): number {
    const times = (this.#times.get(key) ?? []).filter((time) => time > now - MINUTE_MS);
    if (times.length) this.#times.set(key, times);
    else this.#times.delete(key);
    return times.length;
  }

  add(key: string, now: number): void {
    this.#times.set(key, [...(this.#times.get(key) ?? []), now]);
  }
}

/** A subscription the simulator serves, from a client's JSON; null when it cannot be read as one. */
function readSubscription(value: unknown): WsSubscription | null {
  if (typeof value !== "object" || value === null) return null;
  const { type, user, coin, aggregateByTime } = value as Record<string, unknown>;
  const address = typeof user === "string" && ADDRESS.test(user) ? user.toLowerCase() as HexAddress : null;
  switch (type) {
    case "orderUpdates":
    case "userEvents":
    case "userFundings":
      return address ? { type, user: address } : null;
    case "userFills":
      if (!address || (aggregateByTime !== undefined && typeof aggregateByTime !== "boolean")) return null;
      return aggregateByTime === undefined ? { type, user: address } : { type, user: address, aggregateByTime };
    case "trades":
      return typeof coin === "string" ? { type, coin } : null;
    default:
      return null;
  }
}

function userOf(subscription: WsSubscription): HexAddress | null {
  return "user" in subscription ? subscription.user : null;
}

/** The WebSocket side of one simulator instance. */
export class SimStream {
  readonly #state: SimState;
  readonly #limits: StreamLimits;
  readonly #idleMs: number;
  readonly #peers = new Set<Peer>();
  /** Peers by the subscriptionKey they hold, for delivery. */
  readonly #bySubscription = new Map<string, Set<Peer>>();
  readonly #opened = new MinuteWindow();
  readonly #received = new MinuteWindow();
  #nextId = 1;
  /** A fault: the venue keeps the connections open and reads them, but sends nothing (a half-open link). */
  #muted = false;

  constructor(state: SimState, options: VenueBStreamOptions = {}) {
    this.#state = state;
    this.#limits = { ...STREAM_LIMITS, ...options.limits };
    this.#idleMs = options.idleTimeoutMs ?? STREAM_IDLE_TIMEOUT_MS;
    state.feed.add((event) => this.#deliver(event));
  }

  /** Answers `GET /ws`: the upgrade, or the refusal of a connection over the IP's limits. */
  upgrade(c: Context): Response {
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket") return c.text("Expected a WebSocket upgrade", 400);
    if (this.#state.faults.mode === "DOWN") return c.text("Service unavailable", 503);
    const ip = remoteIp(c);
    const now = Date.now();
    // The venue documents these limits but not its answer when a connection exceeds them: a 429 is assumed.
    if ([...this.#peers].filter((peer) => peer.ip === ip).length >= this.#limits.connections) {
      return c.text(`Cannot open more than ${this.#limits.connections} websocket connections.`, 429);
    }
    if (this.#opened.count(ip, now) >= this.#limits.newConnectionsPerMinute) {
      return c.text(
        `Cannot open more than ${this.#limits.newConnectionsPerMinute} websocket connections per minute.`,
        429,
      );
    }
    this.#opened.add(ip, now);
    const { socket, response } = Deno.upgradeWebSocket(c.req.raw);
    const peer: Peer = { id: this.#nextId++, ip, socket, subscriptions: new Map() };
    this.#peers.add(peer);
    socket.onopen = () => {
      if (!this.#muted) socket.send(STREAM_GREETING);
      this.#arm(peer);
    };
    socket.onmessage = (event) => this.#receive(peer, event.data);
    socket.onclose = () => this.#forget(peer);
    socket.onerror = () => this.#forget(peer);
    return response;
  }

  /** Every open connection and what it holds (`GET /_control/ws`). */
  describe() {
    return {
      connections: [...this.#peers].map((peer) => ({
        id: peer.id,
        ip: peer.ip,
        subscriptions: [...peer.subscriptions.values()],
      })),
      usersByIp: Object.fromEntries(
        [...new Set([...this.#peers].map((peer) => peer.ip))].map((ip) => [ip, [...this.#usersOf(ip)]]),
      ),
    };
  }

  /** Closes the connections holding a subscription of `user` (all when none is named), as the venue may at any time. */
  drop(user?: HexAddress): number {
    const dropped = [...this.#peers].filter((peer) =>
      !user || [...peer.subscriptions.values()].some((subscription) => userOf(subscription) === user)
    );
    for (const peer of dropped) this.#close(peer);
    return dropped.length;
  }

  /** (Re)starts the idle countdown: the venue closes a connection that sent nothing for a minute. */
  #arm(peer: Peer): void {
    clearTimeout(peer.idle);
    peer.idle = setTimeout(() => this.#close(peer), this.#idleMs);
  }

  #close(peer: Peer): void {
    this.#forget(peer);
    peer.socket.close();
  }

  #forget(peer: Peer): void {
    clearTimeout(peer.idle);
    if (!this.#peers.delete(peer)) return;
    for (const key of peer.subscriptions.keys()) this.#bySubscription.get(key)?.delete(peer);
    peer.subscriptions.clear();
  }

  /** Mutes or unmutes every connection (`PUT /_control/ws` `{muted}`). */
  mute(muted: boolean): void {
    this.#muted = muted;
  }

  #send(peer: Peer, message: WsServerMessage): void {
    if (!this.#muted && peer.socket.readyState === WebSocket.OPEN) peer.socket.send(JSON.stringify(message));
  }

  #error(peer: Peer, text: string): void {
    this.#send(peer, { channel: "error", data: text });
  }

  #usersOf(ip: string): Set<HexAddress> {
    const users = new Set<HexAddress>();
    for (const peer of this.#peers) {
      if (peer.ip !== ip) continue;
      for (const subscription of peer.subscriptions.values()) {
        const user = userOf(subscription);
        if (user) users.add(user);
      }
    }
    return users;
  }

  #subscriptionsOf(ip: string): number {
    let count = 0;
    for (const peer of this.#peers) if (peer.ip === ip) count += peer.subscriptions.size;
    return count;
  }

  #receive(peer: Peer, data: unknown): void {
    if (!this.#peers.has(peer)) return;
    this.#arm(peer);
    const now = Date.now();
    if (this.#received.count(peer.ip, now) >= this.#limits.messagesPerMinute) {
      return this.#error(peer, STREAM_REFUSALS.messages(this.#limits.messagesPerMinute));
    }
    this.#received.add(peer.ip, now);
    const text = typeof data === "string" ? data : "";
    let message: Record<string, unknown> | null = null;
    try {
      const parsed = JSON.parse(text);
      if (typeof parsed === "object" && parsed !== null) message = parsed;
    } catch {
      // answered below
    }
    if (message?.method === "ping") return this.#send(peer, { channel: "pong" });
    const method = message?.method;
    const subscription = readSubscription(message?.subscription);
    // `post` requests are not modelled: they read as any message the venue cannot parse.
    if ((method !== "subscribe" && method !== "unsubscribe") || !subscription) {
      return this.#error(peer, STREAM_REFUSALS.unparsable(text));
    }
    if (subscription.type === "trades" && !marketByCoin(this.#state, subscription.coin)) {
      return this.#error(peer, STREAM_REFUSALS.invalid(subscription));
    }
    if (method === "subscribe") this.#subscribe(peer, subscription);
    else this.#unsubscribe(peer, subscription);
  }

  #subscribe(peer: Peer, subscription: WsSubscription): void {
    const key = subscriptionKey(subscription);
    if (peer.subscriptions.has(key)) return this.#error(peer, STREAM_REFUSALS.alreadySubscribed(subscription));
    if (this.#subscriptionsOf(peer.ip) >= this.#limits.subscriptions) {
      return this.#error(peer, STREAM_REFUSALS.subscriptions(this.#limits.subscriptions));
    }
    const user = userOf(subscription);
    const users = this.#usersOf(peer.ip);
    if (user && !users.has(user) && users.size >= this.#limits.users) {
      return this.#error(peer, STREAM_REFUSALS.users(this.#limits.users));
    }
    peer.subscriptions.set(key, subscription);
    let holders = this.#bySubscription.get(key);
    if (!holders) this.#bySubscription.set(key, holders = new Set());
    holders.add(peer);
    this.#send(peer, { channel: "subscriptionResponse", data: { method: "subscribe", subscription } });
    this.#snapshot(peer, subscription);
  }

  #unsubscribe(peer: Peer, subscription: WsSubscription): void {
    const key = subscriptionKey(subscription);
    if (!peer.subscriptions.delete(key)) return this.#error(peer, STREAM_REFUSALS.alreadyUnsubscribed(subscription));
    this.#bySubscription.get(key)?.delete(peer);
    this.#send(peer, { channel: "subscriptionResponse", data: { method: "unsubscribe", subscription } });
  }

  /** The venue's snapshot of a time series, right after its ack (userFills, userFundings); none for the others. */
  #snapshot(peer: Peer, subscription: WsSubscription): void {
    if (subscription.type !== "userFills" && subscription.type !== "userFundings") return;
    const user = findUser(this.#state, subscription.user);
    if (subscription.type === "userFills") {
      const fills = (user?.fills ?? []).slice(-FILLS_SNAPSHOT);
      return this.#send(peer, { channel: "userFills", data: { isSnapshot: true, user: subscription.user, fills } });
    }
    const fundings = (user?.funding ?? []).slice(-FUNDINGS_SNAPSHOT).map(({ time, delta }) => {
      const { type: _type, ...funding } = delta;
      return { time, ...funding };
    });
    this.#send(peer, { channel: "userFundings", data: { isSnapshot: true, user: subscription.user, fundings } });
  }

  #to(subscription: WsSubscription, message: WsServerMessage): void {
    for (const peer of this.#bySubscription.get(subscriptionKey(subscription)) ?? []) this.#send(peer, message);
  }

  #deliver(event: SimEvent): void {
    const user = event.user;
    switch (event.kind) {
      case "order":
        return this.#to({ type: "orderUpdates", user }, { channel: "orderUpdates", data: [event.update] });
      case "fill":
        this.#to({ type: "userFills", user }, { channel: "userFills", data: { user, fills: [event.fill] } });
        this.#to({ type: "userEvents", user }, { channel: "user", data: { fills: [event.fill] } });
        return this.#to({ type: "trades", coin: event.trade.coin }, { channel: "trades", data: [event.trade] });
      case "funding":
        this.#to(
          { type: "userFundings", user },
          { channel: "userFundings", data: { user, fundings: [event.funding] } },
        );
        return this.#to({ type: "userEvents", user }, { channel: "user", data: { funding: event.funding } });
    }
  }
}

/** The caller's IP as Deno.serve saw it; "unknown" where the app is called without a connection (app.request). */
function remoteIp(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? "unknown";
  } catch {
    return "unknown";
  }
}

/**
 * `GET /_control/ws` (connections and the users each IP holds),
 * `POST /_control/ws/drop` `{user?}` and `PUT /_control/ws` `{muted}`.
 */
export function registerStreamControlRoutes(app: Hono, stream: SimStream): void {
  app.get("/_control/ws", (c) => c.json(stream.describe()));
  app.put("/_control/ws", async (c) => {
    const { muted } = await c.req.json().catch(() => ({})) as { muted?: unknown };
    if (typeof muted !== "boolean") return c.json({ error: "muted must be true or false" }, 400);
    stream.mute(muted);
    return c.json({ muted });
  });
  app.post("/_control/ws/drop", async (c) => {
    const body = await c.req.json().catch(() => ({})) as { user?: unknown };
    if (body.user !== undefined && (typeof body.user !== "string" || !ADDRESS.test(body.user))) {
      return c.json({ error: "user must be a 0x-prefixed 20-byte hex address" }, 400);
    }
    const user = typeof body.user === "string" ? body.user.toLowerCase() as HexAddress : undefined;
    return c.json({ dropped: stream.drop(user) });
  });
}
