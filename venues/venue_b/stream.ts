/**
 * Account pushes from VENUE_B's WebSocket, within the venue's per-IP limits.
 *
 * The venue pushes everything about a user (orderUpdates: every order
 * status; userEvents: fills, funding, liquidations, cancels it made) but for
 * at most 10 users per IP, and those two channels do not name the user, so
 * each such user needs a connection of its own. So:
 * - the first `maxOwnUsers` watched users (8: two spare of the venue's 10)
 *   each get a connection with their orderUpdates and userEvents: full
 *   coverage;
 * - every other watch rides on one shared connection subscribed to the public
 *   `trades` of every listed coin, whose `users` name both sides: a trade
 *   naming a watched address is a TRADE push for it. Only fills are pushed
 *   then; the consumer polls the rest (PushCoverage);
 * - closing a watch that held a user slot frees it for the oldest watch
 *   without one (after its unsubscribes reached the venue).
 * That is at most 8 + 1 connections of the venue's 10 per IP. Several
 * processes behind one egress IP share those limits: give each a part
 * (`maxOwnUsers`). A user the venue refuses anyway (its count is per IP, not
 * ours) rides on the trades until a slot frees.
 */
import type { AccountPush, AccountWatch, AccountWatcher, HexAddress, PushCoverage } from "../types.ts";
import { toOrderStatus, toSymbol } from "./mappers.ts";
import {
  ConnectionPacer,
  StreamConnection,
  type StreamConnectionEvents,
  type StreamTiming,
} from "./stream_connection.ts";
import {
  STREAM_LIMITS,
  STREAM_PATH,
  type WsOrder,
  type WsServerMessage,
  type WsSubscription,
  type WsTrade,
  type WsUserEvent,
} from "./stream_wire.ts";

/** Users given their own subscriptions: the venue's 10 per IP, less two spare. */
export const MAX_OWN_USERS = STREAM_LIMITS.users - 2;

/** The WebSocket beside a REST base URL: https://api.hyperliquid.xyz -> wss://api.hyperliquid.xyz/ws. */
export function streamUrlOf(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, "").replace(/^http/, "ws")}${STREAM_PATH}`;
}

const FULL: PushCoverage = { orders: true, funding: true };
const FILLS_ONLY: PushCoverage = { orders: false, funding: false };

export interface AccountStreamsDeps {
  /** The venue's WebSocket, e.g. wss://api.hyperliquid.xyz/ws. */
  url: string;
  /** The coins whose trades the shared connection follows (the listed markets). */
  coins: () => Promise<string[]>;
  maxOwnUsers: number;
  timing: StreamTiming;
}

interface Watch {
  address: HexAddress;
  watcher: AccountWatcher;
  /** What was last reported: null before the first report. */
  reported: "live" | "lost" | null;
  closed: boolean;
}

/** A user with its own connection. */
interface Slot {
  address: HexAddress;
  watches: Set<Watch>;
  connection: StreamConnection;
  live: boolean;
}

// ---------------------------------------------------------------- messages -> pushes

/** The pushes one message of a user's own subscriptions means for that user. */
export function pushesOfUserMessage(message: WsServerMessage): AccountPush[] {
  if (message.channel === "orderUpdates") return message.data.map(orderPush);
  if (message.channel === "user") return pushesOfUserEvent(message.data);
  return [];
}

function orderPush({ order, status, statusTimestamp }: WsOrder): AccountPush {
  return {
    kind: "ORDER",
    symbol: toSymbol(order.coin),
    clientOrderId: order.cloid ?? null,
    status: toOrderStatus(status, order),
    at: statusTimestamp,
  };
}

function pushesOfUserEvent(event: WsUserEvent): AccountPush[] {
  if ("fills" in event) return tradePushes(event.fills.map((fill) => ({ coin: fill.coin, time: fill.time })));
  if ("funding" in event) return [{ kind: "FUNDING", at: event.funding.time }];
  if ("nonUserCancel" in event) {
    // The venue cancelled these itself; the order's own update tells its status too.
    return event.nonUserCancel.map(({ coin }) => ({
      kind: "ORDER",
      symbol: toSymbol(coin),
      clientOrderId: null,
      status: "CANCELED",
      at: Date.now(),
    }));
  }
  if ("liquidation" in event) return [{ kind: "ACCOUNT", at: Date.now() }];
  return [];
}

/** One TRADE push per coin, at its latest trade. */
function tradePushes(trades: { coin: string; time: number }[]): AccountPush[] {
  const latest = new Map<string, number>();
  for (const { coin, time } of trades) latest.set(coin, Math.max(time, latest.get(coin) ?? 0));
  return [...latest].map(([coin, at]) => ({ kind: "TRADE", symbol: toSymbol(coin), at }));
}

/** The TRADE pushes public trades mean, by the address of either side. */
export function tradePushesByUser(trades: WsTrade[]): Map<HexAddress, AccountPush[]> {
  const byUser = new Map<HexAddress, WsTrade[]>();
  for (const trade of trades) {
    for (const user of new Set(trade.users.map((address) => address.toLowerCase() as HexAddress))) {
      byUser.set(user, [...(byUser.get(user) ?? []), trade]);
    }
  }
  return new Map([...byUser].map(([user, traded]) => [user, tradePushes(traded)]));
}

// ---------------------------------------------------------------- the watches

/** Every watch of one adapter, over as few connections as the venue's limits allow. */
export class AccountStreams {
  readonly #deps: AccountStreamsDeps;
  readonly #pacer = new ConnectionPacer();
  readonly #slots = new Map<HexAddress, Slot>();
  /** Watches covered by the public trades (no live slot of their own), by address, oldest first. */
  readonly #shared = new Map<HexAddress, Set<Watch>>();
  #trades: StreamConnection | null = null;
  #tradesLive = false;
  /** Slots this adapter may hold now: lowered when the venue refuses a user, restored when one frees. */
  #capacity: number;
  /** Connections being closed. */
  readonly #closing = new Set<Promise<void>>();

  constructor(deps: AccountStreamsDeps) {
    this.#deps = deps;
    this.#capacity = deps.maxOwnUsers;
  }

  watch(address: HexAddress, watcher: AccountWatcher): AccountWatch {
    const watch: Watch = { address: address.toLowerCase() as HexAddress, watcher, reported: null, closed: false };
    const slot = this.#slots.get(watch.address);
    if (slot) {
      slot.watches.add(watch);
      if (slot.live) queueMicrotask(() => this.#live(watch, FULL));
      // A slot still coming up for a watch that rode on the trades: ride with it until then.
      else if (this.#shared.has(watch.address)) this.#share(watch);
    } else if (this.#slots.size < this.#capacity) {
      this.#openSlot(watch.address, [watch]);
    } else {
      this.#share(watch);
    }
    return { close: () => this.#unwatch(watch) };
  }

  #connection(subscriptions: () => Promise<WsSubscription[]>, events: StreamConnectionEvents): StreamConnection {
    const connection = new StreamConnection({
      url: this.#deps.url,
      subscriptions,
      timing: this.#deps.timing,
      pacer: this.#pacer,
      events,
    });
    connection.start();
    return connection;
  }

  #openSlot(address: HexAddress, watches: Watch[]): void {
    const slot: Slot = {
      address,
      watches: new Set(watches),
      live: false,
      connection: this.#connection(
        () => Promise.resolve([{ type: "orderUpdates", user: address }, { type: "userEvents", user: address }]),
        {
          onLive: () => {
            slot.live = true;
            this.#unshare(address);
            for (const watch of slot.watches) this.#live(watch, FULL);
          },
          onLost: (reason) => {
            slot.live = false;
            // A watch still riding on the trades (its slot not yet live) is as covered as before.
            for (const watch of slot.watches) if (!this.#isShared(watch)) this.#lost(watch, reason);
          },
          onRefused: () => this.#refused(slot),
          onMessage: (message) => {
            const pushes = pushesOfUserMessage(message);
            for (const watch of slot.watches) for (const push of pushes) this.#push(watch, push);
          },
        },
      ),
    };
    this.#slots.set(address, slot);
  }

  /** The venue tracks as many users from this IP as it will: this one rides on the trades until a slot frees. */
  #refused(slot: Slot): void {
    if (this.#slots.get(slot.address) !== slot) return;
    this.#slots.delete(slot.address);
    this.#capacity = this.#slots.size;
    this.#background(slot.connection.close());
    for (const watch of slot.watches) if (!this.#isShared(watch)) this.#share(watch);
  }

  #isShared(watch: Watch): boolean {
    return this.#shared.get(watch.address)?.has(watch) ?? false;
  }

  #share(watch: Watch): void {
    let watches = this.#shared.get(watch.address);
    if (!watches) this.#shared.set(watch.address, watches = new Set());
    watches.add(watch);
    if (this.#tradesLive) queueMicrotask(() => this.#live(watch, FILLS_ONLY));
    this.#trades ??= this.#connection(
      async () => (await this.#deps.coins()).map((coin): WsSubscription => ({ type: "trades", coin })),
      {
        onLive: () => {
          this.#tradesLive = true;
          for (const watches of this.#shared.values()) for (const watch of watches) this.#live(watch, FILLS_ONLY);
        },
        onLost: (reason) => {
          this.#tradesLive = false;
          for (const watches of this.#shared.values()) for (const watch of watches) this.#lost(watch, reason);
        },
        onRefused: () => {},
        onMessage: (message) => {
          if (message.channel !== "trades") return;
          for (const [address, pushes] of tradePushesByUser(message.data)) {
            for (const watch of this.#shared.get(address) ?? []) for (const push of pushes) this.#push(watch, push);
          }
        },
      },
    );
  }

  /** An address whose own slot is live no longer needs the trades; nobody left on them: that connection ends. */
  #unshare(address: HexAddress): void {
    this.#shared.delete(address);
    if (this.#shared.size || !this.#trades) return;
    this.#background(this.#trades.close());
    this.#trades = null;
    this.#tradesLive = false;
  }

  async #unwatch(watch: Watch): Promise<void> {
    if (watch.closed) return;
    watch.closed = true;
    const shared = this.#shared.get(watch.address);
    if (shared?.delete(watch) && !shared.size) this.#unshare(watch.address);
    const slot = this.#slots.get(watch.address);
    if (slot?.watches.delete(watch) && !slot.watches.size) {
      this.#slots.delete(watch.address);
      this.#capacity = this.#deps.maxOwnUsers;
      // The next user is subscribed once this one's unsubscribes reached the venue, not before.
      this.#background(slot.connection.close().then(() => this.#promote()));
    }
    // Whatever this adapter is still closing, so that a caller awaiting the last close leaves nothing open.
    while (this.#closing.size) await Promise.all(this.#closing);
  }

  #background(closing: Promise<void>): void {
    const settled = closing.catch(() => {});
    this.#closing.add(settled);
    settled.then(() => this.#closing.delete(settled));
  }

  /** Gives free slots to the watches riding on the trades, oldest first. */
  #promote(): void {
    for (const [address, watches] of this.#shared) {
      if (this.#slots.size >= this.#capacity) return;
      if (!this.#slots.has(address)) this.#openSlot(address, [...watches]);
    }
  }

  #live(watch: Watch, coverage: PushCoverage): void {
    if (watch.closed) return;
    watch.reported = "live";
    report(() => watch.watcher.onLive(coverage));
  }

  #lost(watch: Watch, reason: string): void {
    if (watch.closed || watch.reported === "lost") return;
    watch.reported = "lost";
    report(() => watch.watcher.onLost(reason));
  }

  #push(watch: Watch, push: AccountPush): void {
    if (!watch.closed) report(() => watch.watcher.onPush(push));
  }
}

/** A watcher that throws must not stop the pushes of the others. */
function report(call: () => void): void {
  try {
    call();
  } catch {
    // the watcher's own failure; nothing here can handle it
  }
}
