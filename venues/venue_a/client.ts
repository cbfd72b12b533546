/**
 * HTTP transport of VENUE_A: signing, timeouts, the venue's clock, its
 * request-weight budget and the mapping of every answer to data or a
 * `VenueError`. Nothing here knows about orders or markets.
 */
import { DEADLINE_MIN_TIME_LEFT_MS, type RequestBudget, type RequestDeadline, type VenueError } from "../types.ts";
import { encodeParams, type Params, signRequest } from "./auth.ts";
import {
  API_KEY_HEADER,
  DEFAULT_WEIGHT_LIMIT_1M,
  MAX_RECV_WINDOW_MS,
  READ_RETRY_DELAYS_MS,
  RECV_WINDOW_MS,
  USED_WEIGHT_HEADER,
  WEIGHT_BUDGET_SHARE,
} from "./constants.ts";
import { CODES, localError, retryAfterMs, toVenueError, type VenueFailure } from "./errors.ts";
import { OrderCountBudget, type OrderLimits } from "./order_count.ts";
import { observeVenueCall } from "../../domain/telemetry/venue_calls.ts";

/** An API key with its secret, opened for the duration of one adapter call. */
export interface ApiKeyPair {
  apiKey: string;
  secret: string;
}

export interface VenueRequest {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  params?: Params;
  /** IP weight the venue charges for this call. */
  weight: number;
  /** Sends something that changes state: never retried, and an unclear answer is OUTCOME_UNKNOWN. */
  mutation?: boolean;
  /** A new or modified order: counts against the account's order limits (order_count.ts). */
  countsOrder?: boolean;
  /** Present on SIGNED calls. */
  auth?: ApiKeyPair;
  /** USER_STREAM calls (the listen key endpoints): the API key header alone, nothing signed. */
  apiKey?: string;
  /** Signed orders: the instant after which the venue must refuse it (types.ts, RequestDeadline). */
  deadline?: RequestDeadline;
  /** Names the call in error messages, in sentence case, e.g. "Placing the order". */
  action: string;
}

/**
 * Our estimate of the venue's clock. Signed calls carry the venue's time; the
 * offset is learnt from /fapi/v1/time only when the venue says our timestamp
 * is off (-1021), so a healthy setup costs no extra call.
 */
export class ServerClock {
  #offsetMs = 0;
  #syncing: Promise<void> | undefined;

  constructor(readonly localNow: () => number) {}

  now(): number {
    return this.localNow() + this.#offsetMs;
  }

  /** Concurrent callers share one measurement. */
  sync(fetchServerTime: () => Promise<number>): Promise<void> {
    this.#syncing ??= (async () => {
      const sent = this.localNow();
      const serverTime = await fetchServerTime();
      const received = this.localNow();
      this.#offsetMs = serverTime - Math.round((sent + received) / 2);
    })().finally(() => this.#syncing = undefined);
    return this.#syncing;
  }
}

/**
 * Tracks X-MBX-USED-WEIGHT-1M and refuses locally, before the venue would
 * answer 429 (and escalate to an IP ban), once the minute's budget is spent.
 */
class WeightBudget {
  #limit: number;
  #minute = -1;
  #used = 0;
  #pausedUntil = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  setLimit(limit: number): void {
    if (limit > 0) this.#limit = limit;
  }

  reserve(weight: number, now: number): void {
    if (now < this.#pausedUntil) {
      throw localError("RATE_LIMITED", "Venue asked us to back off; request not sent", this.#pausedUntil - now);
    }
    this.#roll(now);
    if (weight > 0 && this.#used + weight > Math.floor(this.#limit * WEIGHT_BUDGET_SHARE)) {
      const retryAfter = (this.#minute + 1) * 60_000 - now;
      throw localError("RATE_LIMITED", "Request weight budget of this minute is spent; request not sent", retryAfter);
    }
    this.#used += weight;
  }

  observe(header: string | null, now: number): void {
    const used = Number(header);
    if (header === null || !Number.isFinite(used)) return;
    this.#roll(now);
    // Answers can arrive out of order; the highest count seen is the truest.
    this.#used = Math.max(this.#used, used);
  }

  pause(untilMs: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, untilMs);
  }

  #roll(now: number): void {
    const minute = Math.floor(now / 60_000);
    if (minute !== this.#minute) {
      this.#minute = minute;
      this.#used = 0;
    }
  }
}

export interface VenueAClient {
  request<T>(request: VenueRequest): Promise<T>;
  /** The REQUEST_WEIGHT per minute the venue announced in exchangeInfo. */
  setWeightLimit(limit: number): void;
  /** The per-account ORDERS limits the venue announced in exchangeInfo. */
  setOrderLimits(limits: Partial<OrderLimits>): void;
}

export interface VenueAClientOptions {
  baseUrl: string;
  /** Where /fapi/v1/time lives (the futures host, also for spot-host calls). */
  timeUrl: string;
  fetch: typeof fetch;
  clock: ServerClock;
  timeoutMs: number;
  /** The egress's request weight, shared with other instances, spent before each request. */
  budget?: RequestBudget;
  /** The header reporting the IP's used weight, and the limit it counts against; the futures host's by default. */
  usedWeight?: { header: string; limit: number };
}

type Outcome =
  | { ok: true; data: unknown }
  | { ok: false; failure: VenueFailure; transport?: "TIMEOUT" | "NETWORK" };

/**
 * A request with a deadline is valid at the venue until then and no longer
 * (the venue refuses it once its timestamp is older than recvWindow), up to
 * the venue's ceiling; without one, the usual window.
 */
function recvWindowOf(request: VenueRequest, localNow: number): number {
  if (request.deadline === undefined) return RECV_WINDOW_MS;
  return Math.min(MAX_RECV_WINDOW_MS, request.deadline - localNow);
}

/** Builds the transport for one venue host. */
export function createVenueAClient(options: VenueAClientOptions): VenueAClient {
  const { clock, timeoutMs } = options;
  const usedWeight = options.usedWeight ?? { header: USED_WEIGHT_HEADER, limit: DEFAULT_WEIGHT_LIMIT_1M };
  const budget = new WeightBudget(usedWeight.limit);
  const orders = new OrderCountBudget();
  const baseUrl = options.baseUrl.replace(/\/+$/, "");

  async function send(request: VenueRequest): Promise<Outcome> {
    let query = "";
    let body = "";
    const headers = new Headers();
    if (request.auth) {
      ({ query, body } = signRequest({
        method: request.method,
        params: request.params ?? {},
        secret: request.auth.secret,
        timestamp: clock.now(),
        recvWindow: recvWindowOf(request, clock.localNow()),
      }));
      headers.set(API_KEY_HEADER, request.auth.apiKey);
    } else {
      query = encodeParams(request.params ?? {});
      if (request.apiKey) headers.set(API_KEY_HEADER, request.apiKey);
    }
    if (body) headers.set("Content-Type", "application/x-www-form-urlencoded");
    const url = `${baseUrl}${request.path}${query ? `?${query}` : ""}`;
    const answer = await timedFetch(url, { method: request.method, headers, body: body || undefined });
    if ("transport" in answer) return { ok: false, failure: { status: 0 }, transport: answer.transport };
    return interpret(request, answer.response, answer.text);
  }

  /** A manual timer rather than AbortSignal.timeout, so no timer outlives the call. */
  async function timedFetch(
    url: string,
    init: RequestInit,
  ): Promise<{ response: Response; text: string } | { transport: "TIMEOUT" | "NETWORK" }> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const response = await options.fetch(url, { ...init, signal: controller.signal });
      return { response, text: await response.text() };
    } catch {
      return { transport: controller.signal.aborted ? "TIMEOUT" : "NETWORK" };
    } finally {
      clearTimeout(timer);
    }
  }

  function interpret(request: VenueRequest, response: Response, text: string): Outcome {
    const now = clock.now();
    budget.observe(response.headers.get(usedWeight.header), now);
    if (request.countsOrder && request.auth) orders.observe(request.auth.apiKey, response.headers, now);
    const data = parseJson(text);
    const record = isRecord(data) ? data : {};
    // Success bodies may carry code 200 or "200"; only a negative code is an error.
    const code = record.code === undefined ? undefined : Number(record.code);
    const msg = typeof record.msg === "string" ? record.msg : undefined;
    const failed = response.status >= 400 || (code !== undefined && code < 0) || data === undefined;
    if (!failed) return { ok: true, data };
    const failure: VenueFailure = {
      status: response.status,
      code: code !== undefined && code < 0 ? code : undefined,
      msg,
      retryAfterMs: retryAfterMs(response.headers, msg, now),
    };
    if (response.status === 429 || response.status === 418) {
      const wait = failure.retryAfterMs ?? 60_000 - (now % 60_000);
      failure.retryAfterMs = wait;
      // Too many orders is the account's limit, not the IP's: only that account's orders wait.
      if (failure.code === CODES.tooManyOrders && request.auth) orders.pause(request.auth.apiKey, now + wait, now);
      else budget.pause(now + wait);
    }
    return { ok: false, failure };
  }

  async function fetchServerTime(): Promise<number> {
    const answer = await timedFetch(options.timeUrl, { method: "GET" });
    const body = "text" in answer ? parseJson(answer.text) : undefined;
    const serverTime = isRecord(body) ? Number(body.serverTime) : NaN;
    if (!Number.isFinite(serverTime)) throw new Error("Venue time answer had no serverTime");
    return serverTime;
  }

  function transportError(request: VenueRequest, transport: "TIMEOUT" | "NETWORK"): VenueError {
    const what = transport === "TIMEOUT" ? `timed out after ${timeoutMs} ms` : "could not reach the venue";
    if (!request.mutation) return localError("UNAVAILABLE", `${request.action} ${what}`);
    return localError(
      "OUTCOME_UNKNOWN",
      `${request.action} ${what}; query the order by its client order id before any retry`,
    );
  }

  function request<T>(request: VenueRequest): Promise<T> {
    const call = { venue: "VENUE_A" as const, endpoint: `${request.method} ${request.path}`, weight: request.weight };
    return observeVenueCall(call, () => requestOnce<T>(request));
  }

  async function requestOnce<T>(request: VenueRequest): Promise<T> {
    let resynced = false;
    let retries = 0;
    for (;;) {
      if (request.countsOrder && request.auth) orders.reserve(request.auth.apiKey, clock.now());
      await options.budget?.spend(request.weight);
      budget.reserve(request.weight, clock.now());
      if (recvWindowOf(request, clock.localNow()) < DEADLINE_MIN_TIME_LEFT_MS) {
        throw localError("UNAVAILABLE", `${request.action}: not sent, its deadline passed while it waited to be sent`);
      }
      const outcome = await send(request);
      if (outcome.ok) return outcome.data as T;
      const { failure, transport } = outcome;
      const clockRejected = failure.code === CODES.invalidTimestamp || failure.code === CODES.meRecvWindow;
      // A timestamp rejection is definite (nothing executed), so resending after a resync is safe even for orders.
      if (request.auth && clockRejected && !resynced) {
        resynced = true;
        try {
          await clock.sync(fetchServerTime);
        } catch {
          throw localError("UNAVAILABLE", `${request.action} failed: the venue clock could not be read`);
        }
        continue;
      }
      const error = transport
        ? transportError(request, transport)
        : toVenueError(request.action, failure, request.mutation === true);
      const retryable = !request.mutation && transport !== "TIMEOUT" && error.kind === "UNAVAILABLE" &&
        !clockRejected;
      if (retryable && retries < READ_RETRY_DELAYS_MS.length) {
        await delay(READ_RETRY_DELAYS_MS[retries++]);
        continue;
      }
      throw error;
    }
  }

  return {
    request,
    setWeightLimit: (limit) => budget.setLimit(limit),
    setOrderLimits: (limits) => orders.setLimits(limits),
  };
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
