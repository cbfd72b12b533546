/**
 * One WebSocket connection to VENUE_B carrying a fixed set of subscriptions:
 * it subscribes on every (re)connection and says when all are acknowledged
 * (live), pings so the venue does not close it as idle, treats a ping left
 * unanswered as a dead connection, and reconnects with backoff after any
 * drop. `close()` unsubscribes and closes; after it no event is reported.
 */
import {
  STREAM_IDLE_TIMEOUT_MS,
  STREAM_LIMITS,
  subscriptionKey,
  type WsServerMessage,
  type WsSubscription,
} from "./stream_wire.ts";

/** The connection's clocks; tests shorten them. */
export interface StreamTiming {
  /** Between pings; under the venue's 60 s idle close (the Python SDK pings every 50 s). */
  pingIntervalMs: number;
  /** A ping unanswered this long means the connection is dead (the @nktkas SDK: 10 s). */
  pongTimeoutMs: number;
  /** Subscriptions not all acknowledged this long after connecting: the attempt failed. */
  subscribeTimeoutMs: number;
  /** First delay before reconnecting; it doubles per failed attempt up to `reconnectMaxMs`. */
  reconnectMinMs: number;
  reconnectMaxMs: number;
}

export const STREAM_TIMING: StreamTiming = {
  pingIntervalMs: STREAM_IDLE_TIMEOUT_MS - 10_000,
  pongTimeoutMs: 10_000,
  subscribeTimeoutMs: 10_000,
  reconnectMinMs: 500,
  reconnectMaxMs: 30_000,
};

/** New connections left to this process per minute: the venue allows 30 per IP; a few stay spare. */
const NEW_CONNECTIONS_PER_MINUTE = STREAM_LIMITS.newConnectionsPerMinute - 6;

/**
 * Paces new connections (first ones and reconnections alike) under the
 * venue's new-connections-per-minute limit, across every connection of one
 * adapter: a burst of drops does not turn into a burst of refused upgrades.
 */
export class ConnectionPacer {
  readonly #starts: number[] = [];
  readonly #now: () => number;
  readonly #perMinute: number;

  constructor(now: () => number = () => Date.now(), perMinute = NEW_CONNECTIONS_PER_MINUTE) {
    this.#now = now;
    this.#perMinute = perMinute;
  }

  /** Reserves the next start a new connection may take; answers how long to wait for it. */
  reserve(): number {
    const now = this.#now();
    while (this.#starts.length && this.#starts[0] <= now - 60_000) this.#starts.shift();
    const at = this.#starts.length < this.#perMinute
      ? now
      : Math.max(now, this.#starts[this.#starts.length - this.#perMinute] + 60_000);
    this.#starts.push(at);
    this.#starts.sort((a, b) => a - b);
    return at - now;
  }
}

/** What a connection reports to its owner. */
export interface StreamConnectionEvents {
  /** Every subscription is acknowledged: from here on its messages flow. */
  onLive(): void;
  /** The connection stopped carrying its subscriptions; it reconnects on its own. */
  onLost(reason: string): void;
  /**
   * The venue refused a subscription over one of its limits (its text). The
   * owner may `close()` the connection; otherwise it is lost and retried
   * after the longest backoff.
   */
  onRefused(text: string): void;
  /** A JSON message of a subscribed channel (acks, pongs and refusals are the connection's own). */
  onMessage(message: WsServerMessage): void;
}

export interface StreamConnectionOptions {
  url: string;
  /** What to subscribe, asked at every connection (the listed coins may change). */
  subscriptions: () => Promise<WsSubscription[]>;
  timing: StreamTiming;
  pacer: ConnectionPacer;
  events: StreamConnectionEvents;
}

const LIMIT_REFUSAL = /^Cannot (track|subscribe to) more than/;

type Timer = ReturnType<typeof setTimeout>;

export class StreamConnection {
  readonly #options: StreamConnectionOptions;
  #socket: WebSocket | null = null;
  /** Sockets given up on (dead or failed) whose closing is still under way. */
  readonly #closing = new Set<Promise<void>>();
  #connecting: Promise<void> | null = null;
  #subscriptions: WsSubscription[] = [];
  readonly #acked = new Set<string>();
  #live = false;
  #lostReported = false;
  #closed = false;
  #attempt = 0;
  #retry?: Timer;
  #ping?: ReturnType<typeof setInterval>;
  #pong?: Timer;
  #subscribeDeadline?: Timer;

  constructor(options: StreamConnectionOptions) {
    this.#options = options;
  }

  start(): void {
    this.#schedule(0);
  }

  /** Unsubscribes, closes the socket and stops every timer; nothing is reported afterwards. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#stopTimers();
    await this.#connecting;
    const socket = this.#socket;
    this.#socket = null;
    if (socket) {
      if (socket.readyState === WebSocket.OPEN) {
        // The venue frees the user slots when the connection ends anyway; saying so first is its documented way.
        for (const subscription of this.#subscriptions) {
          if (this.#acked.has(subscriptionKey(subscription))) {
            socket.send(JSON.stringify({ method: "unsubscribe", subscription }));
          }
        }
      }
      this.#abandon(socket);
    }
    await Promise.all(this.#closing);
  }

  #schedule(delayMs: number): void {
    if (this.#closed) return;
    this.#retry = setTimeout(() => {
      this.#connecting = this.#connect().finally(() => this.#connecting = null);
    }, delayMs + this.#options.pacer.reserve());
  }

  async #connect(): Promise<void> {
    let subscriptions: WsSubscription[];
    try {
      subscriptions = await this.#options.subscriptions();
    } catch (error) {
      return this.#lost(`VENUE_B stream: subscriptions unknown (${(error as Error).message})`);
    }
    if (this.#closed) return;
    this.#subscriptions = subscriptions;
    this.#acked.clear();
    let socket: WebSocket;
    try {
      socket = new WebSocket(this.#options.url);
    } catch (error) {
      return this.#lost(`VENUE_B stream: cannot connect (${(error as Error).message})`);
    }
    this.#socket = socket;
    socket.onopen = () => this.#opened(socket);
    socket.onmessage = (event) => this.#received(socket, event.data);
    socket.onclose = (event) => {
      if (socket !== this.#socket) return;
      this.#socket = null;
      this.#lost(`VENUE_B stream closed (code ${event.code}${event.reason ? `, ${event.reason}` : ""})`);
    };
  }

  #opened(socket: WebSocket): void {
    if (socket !== this.#socket) return;
    for (const subscription of this.#subscriptions) {
      socket.send(JSON.stringify({ method: "subscribe", subscription }));
    }
    this.#subscribeDeadline = setTimeout(
      () => this.#giveUp(socket, "VENUE_B stream: subscriptions not acknowledged in time"),
      this.#options.timing.subscribeTimeoutMs,
    );
    this.#ping = setInterval(() => {
      if (socket.readyState !== WebSocket.OPEN) return;
      socket.send(JSON.stringify({ method: "ping" }));
      this.#pong ??= setTimeout(
        () => this.#giveUp(socket, "VENUE_B stream: a ping went unanswered"),
        this.#options.timing.pongTimeoutMs,
      );
    }, this.#options.timing.pingIntervalMs);
  }

  #received(socket: WebSocket, data: unknown): void {
    if (socket !== this.#socket) return;
    // Anything the venue sends proves the connection alive.
    clearTimeout(this.#pong);
    this.#pong = undefined;
    let message: WsServerMessage;
    try {
      message = JSON.parse(String(data));
    } catch {
      return; // the venue's plain-text greeting
    }
    switch (message.channel) {
      case "pong":
        return;
      case "subscriptionResponse":
        if (message.data.method !== "subscribe") return;
        this.#acked.add(subscriptionKey(message.data.subscription));
        if (!this.#live && this.#subscriptions.every((s) => this.#acked.has(subscriptionKey(s)))) {
          clearTimeout(this.#subscribeDeadline);
          this.#live = true;
          this.#lostReported = false;
          this.#attempt = 0;
          this.#options.events.onLive();
        }
        return;
      case "error":
        if (!LIMIT_REFUSAL.test(message.data)) return;
        this.#options.events.onRefused(message.data);
        if (!this.#closed) {
          this.#attempt = Math.max(this.#attempt, 32);
          this.#giveUp(socket, `VENUE_B refused a subscription: ${message.data}`);
        }
        return;
      default:
        this.#options.events.onMessage(message);
    }
  }

  /** Drops a socket that no longer serves (dead, refused, too slow) and reconnects. */
  #giveUp(socket: WebSocket, reason: string): void {
    if (socket !== this.#socket) return;
    this.#socket = null;
    this.#abandon(socket);
    this.#lost(reason);
  }

  /**
   * Closes a socket no longer listened to, keeping its closing for `close()`
   * to wait on, but not for ever: a dead peer never answers the close.
   */
  #abandon(socket: WebSocket): void {
    socket.onopen = socket.onmessage = null;
    if (socket.readyState === WebSocket.CLOSED) return;
    let timer: Timer | undefined;
    const closed = new Promise<void>((resolve) => {
      socket.onclose = () => resolve();
      timer = setTimeout(resolve, this.#options.timing.pongTimeoutMs);
    }).then(() => {
      clearTimeout(timer);
      this.#closing.delete(closed);
    });
    this.#closing.add(closed);
    socket.close();
  }

  #stopTimers(): void {
    clearInterval(this.#ping);
    clearTimeout(this.#pong);
    clearTimeout(this.#subscribeDeadline);
    this.#ping = this.#pong = this.#subscribeDeadline = undefined;
  }

  #lost(reason: string): void {
    this.#stopTimers();
    this.#live = false;
    if (this.#closed) return;
    if (!this.#lostReported) {
      this.#lostReported = true;
      this.#options.events.onLost(reason);
    }
    if (this.#closed) return;
    const { reconnectMinMs, reconnectMaxMs } = this.#options.timing;
    const backoff = Math.min(reconnectMaxMs, reconnectMinMs * 2 ** Math.min(this.#attempt, 30));
    this.#attempt++;
    // Jitter: connections dropped together do not all come back in the same instant.
    this.#schedule(backoff * (0.5 + Math.random() / 2));
  }
}
