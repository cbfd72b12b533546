/**
 * VENUE_A account watches over its user data stream: one listen key per
 * watched account (the venue keeps one per account and hands the same key to
 * whoever asks), obtained and kept alive over REST through the adapter's
 * request budget (POST/PUT/DELETE /fapi/v1/listenKey, weight 1 each), carried
 * by the shared connections of stream_hub.ts.
 *
 * - A key lives 60 minutes past its last POST or PUT: it is kept alive every
 *   30 (wall clock; a failed keepalive is retried within a minute).
 * - A key dies (listenKeyExpired on its connection, or -1125 on keepalive):
 *   the watchers hear onLost, a new key is asked for and joins a connection,
 *   and onLive follows once it flows.
 * - A connection drops: onLost, then onLive when the hub has reopened it. The
 *   venue takes a dead key at the handshake and stays silent, so the key is
 *   checked by a keepalive soon after (at a random moment of a window, so a
 *   reconnection of every connection does not spend the weight at once).
 * - The last watch of an account closes: keepalive stops, the key leaves its
 *   connection and is deleted at the venue. Another process watching the
 *   same account shares that key; it hears listenKeyExpired and renews.
 */
import type { AccountPush, AccountWatch, AccountWatcher, PushCoverage, VenueCredentials } from "../types.ts";
import { VenueError } from "../types.ts";
import type { VenueAClient } from "./client.ts";
import { PATHS, PROVIDER_ID, WEIGHTS } from "./constants.ts";
import { hasVenueCode } from "./context.ts";
import { CODES } from "./errors.ts";
import { toAccountPush } from "./mappers.ts";
import type { StreamHub } from "./stream_hub.ts";
import type { WireUserEvent } from "./wire.ts";

/** Every order change and every funding payment is pushed, for every account watched. */
const COVERAGE: PushCoverage = { orders: true, funding: true };

export interface AccountWatchesOptions {
  fapi: VenueAClient;
  hub: StreamHub;
  keepaliveMs: number;
  keepaliveRetryMs: number;
  /** After a reconnection, the key is kept alive (proving it alive) within this window. */
  recheckWindowMs: number;
  /** Waits before asking again for a key the venue did not give, growing to the last. */
  keyRetryDelaysMs: readonly number[];
}

type Timer = ReturnType<typeof setTimeout>;

function tell(run: () => void): void {
  try {
    run();
  } catch {
    // A watcher's failure is its own; the others are still told.
  }
}

/** One watched account: its listen key and the watchers it feeds. */
class Lease {
  readonly watchers = new Set<AccountWatcher>();
  #listenKey: string | null = null;
  #live = false;
  #lostTold = false;
  /** It flowed before: the next live is a reconnection. */
  #flowed = false;
  #closed = false;
  #failures = 0;
  #timer?: Timer;
  #wake?: () => void;
  #queue: Promise<void>;

  constructor(readonly apiKey: string, readonly options: AccountWatchesOptions, after: Promise<void>) {
    // Start, renewals, keepalives and stop run one at a time, in order; the first waits for a previous lease's stop.
    this.#queue = after;
    this.#enqueue(() => this.#obtain());
  }

  add(watcher: AccountWatcher): void {
    this.watchers.add(watcher);
    if (this.#live) queueMicrotask(() => this.watchers.has(watcher) && tell(() => watcher.onLive(COVERAGE)));
  }

  stop(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#wake?.();
    return this.#enqueue(async () => {
      clearTimeout(this.#timer);
      const key = this.#listenKey;
      this.#listenKey = null;
      this.#live = false;
      if (!key) return;
      await this.options.hub.leave(key);
      // Best effort: a key left alive expires within the hour on its own.
      await this.#request("DELETE", "Closing the user data stream").catch(() => {});
    });
  }

  #enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => {});
    return run;
  }

  #request<T>(method: "POST" | "PUT" | "DELETE", action: string): Promise<T> {
    return this.options.fapi.request<T>({
      method,
      path: PATHS.listenKey,
      weight: WEIGHTS.listenKey,
      apiKey: this.apiKey,
      action,
    });
  }

  /** Asks for the account's key until the venue gives one (or the lease stops), then joins a connection. */
  async #obtain(): Promise<void> {
    while (!this.#closed) {
      try {
        const answer = await this.#request<{ listenKey?: unknown }>("POST", "Opening the user data stream");
        if (typeof answer.listenKey !== "string" || !answer.listenKey) throw new Error("no listenKey in the answer");
        this.#failures = 0;
        this.#listenKey = answer.listenKey;
        // Stopped while asking: the stop that follows deletes the key.
        if (this.#closed) return;
        this.options.hub.join(answer.listenKey, this.#sink(answer.listenKey));
        this.#keepAliveIn(this.options.keepaliveMs);
        return;
      } catch (error) {
        this.#lost(`the venue gave no listen key: ${error instanceof Error ? error.message : String(error)}`);
        const asked = error instanceof VenueError ? error.detail.retryAfterMs : undefined;
        // This egress's own budget refused before asking the venue: try again when its window turns, no backoff
        // (thousands of accounts asking at a keeper's start are paced by the budget, not pushed minutes away).
        const ownBudget = error instanceof VenueError && error.kind === "RATE_LIMITED" &&
          error.detail.venueCode === undefined;
        const delays = this.options.keyRetryDelaysMs;
        const backoff = ownBudget ? 0 : delays[Math.min(this.#failures++, delays.length - 1)];
        await this.#sleep(Math.max(backoff, asked ?? 0, 1));
      }
    }
  }

  #sink(listenKey: string) {
    return {
      event: (event: Record<string, unknown>) => {
        if (listenKey !== this.#listenKey) return;
        if (event.e === "listenKeyExpired") {
          void this.#enqueue(() => this.#renew(listenKey, "the listen key expired"));
          return;
        }
        const push = toAccountPush(event as WireUserEvent);
        if (push) this.#push(push);
      },
      live: () => {
        if (listenKey !== this.#listenKey || this.#closed) return;
        if (this.#flowed) {
          this.#keepAliveIn(Math.random() * Math.min(this.options.recheckWindowMs, this.options.keepaliveMs));
        }
        this.#flowed = true;
        this.#live = true;
        this.#lostTold = false;
        for (const watcher of this.watchers) tell(() => watcher.onLive(COVERAGE));
      },
      lost: (reason: string) => {
        if (listenKey === this.#listenKey) this.#lost(reason);
      },
    };
  }

  #push(push: AccountPush): void {
    for (const watcher of this.watchers) tell(() => watcher.onPush(push));
  }

  /** Pushes stopped: told once per outage (and once before the first onLive when the key cannot be had). */
  #lost(reason: string): void {
    if (this.#closed || (!this.#live && this.#lostTold)) return;
    this.#live = false;
    this.#lostTold = true;
    for (const watcher of this.watchers) tell(() => watcher.onLost(reason));
  }

  /** The key died: a new one replaces it on the stream. */
  async #renew(listenKey: string, reason: string): Promise<void> {
    if (this.#closed || this.#listenKey !== listenKey) return;
    this.#lost(reason);
    clearTimeout(this.#timer);
    this.#listenKey = null;
    this.#flowed = false;
    await this.options.hub.leave(listenKey);
    await this.#obtain();
  }

  #keepAliveIn(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#enqueue(() => this.#keepAlive()), ms);
  }

  async #keepAlive(): Promise<void> {
    const listenKey = this.#listenKey;
    if (this.#closed || !listenKey) return;
    try {
      const answer = await this.#request<{ listenKey?: unknown }>("PUT", "Keeping the user data stream alive");
      // Another process may have replaced the account's key; ours no longer streams.
      if (typeof answer.listenKey === "string" && answer.listenKey !== listenKey) {
        return await this.#renew(listenKey, "the account's listen key changed");
      }
      this.#keepAliveIn(this.options.keepaliveMs);
    } catch (error) {
      if (hasVenueCode(error, CODES.invalidListenKey)) return await this.#renew(listenKey, "the listen key expired");
      this.#keepAliveIn(this.options.keepaliveRetryMs);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }
}

/** `watchAccount` of the VENUE_A adapter. */
export function createAccountWatches(
  options: AccountWatchesOptions,
): (credentials: VenueCredentials, watcher: AccountWatcher) => AccountWatch {
  const leases = new Map<string, Lease>();
  // A lease stopping (DELETE in flight) finishes before a new lease of the same account asks for its key.
  const stopping = new Map<string, Promise<void>>();

  return (credentials, watcher) => {
    if (credentials.scheme !== "API_KEY") {
      queueMicrotask(() => tell(() => watcher.onLost(`${PROVIDER_ID} pushes account updates for API keys only`)));
      return { close: () => Promise.resolve() };
    }
    const { apiKey } = credentials;
    let lease = leases.get(apiKey);
    if (!lease) {
      lease = new Lease(apiKey, options, stopping.get(apiKey) ?? Promise.resolve());
      leases.set(apiKey, lease);
    }
    const held = lease;
    held.add(watcher);
    let closed: Promise<void> | undefined;
    return {
      close() {
        closed ??= (async () => {
          held.watchers.delete(watcher);
          if (held.watchers.size > 0 || leases.get(apiKey) !== held) return;
          leases.delete(apiKey);
          const stopped = held.stop();
          stopping.set(apiKey, stopped);
          await stopped;
          if (stopping.get(apiKey) === stopped) stopping.delete(apiKey);
        })();
        return closed;
      },
    };
  };
}
