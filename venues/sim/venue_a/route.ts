/**
 * How every venue route of the simulator runs: fault injection, IP weight (one
 * pool for the futures host, one per /sapi endpoint as on the spot host),
 * signature checks, then the handler, answered in the venue's shapes
 * with its headers. Routes are declared as data so weight and security sit
 * next to the path, as in the venue docs.
 */
import type { Context } from "hono";
import { authenticate, authenticateKey, rawParts } from "./auth.ts";
import { errors, SERVICE_UNAVAILABLE, SimError, unknownOutcome } from "./errors.ts";
import { RequestParams } from "./params.ts";
import { LONGEST_BAN_MS, SAPI_WEIGHT_LIMIT, type SimAccount, type SimState, type WeightPool } from "./state.ts";

type Method = "GET" | "POST" | "PUT" | "DELETE";

interface RouteBase {
  method: Method;
  /** Path relative to the simulator base, e.g. "/fapi/v1/order". */
  path: string;
  /** IP weight; a function when it depends on the parameters (e.g. with or without `symbol`). */
  weight: number | ((params: RequestParams) => number);
}

export interface PublicRoute extends RouteBase {
  security: "NONE";
  handle(input: { state: SimState; params: RequestParams }): unknown;
}

export interface SignedRoute extends RouteBase {
  /** SIGNED_SPOT: a /sapi endpoint, callable by a key without the futures permission. */
  security: "SIGNED" | "SIGNED_SPOT";
  /** Changes orders: what LOSE_RESPONSE swallows the answer of. */
  orderMutation?: boolean;
  /** A new or modified order: counts against the account's ORDERS limits (cancels do not). */
  countsOrder?: boolean;
  handle(input: { state: SimState; params: RequestParams; account: SimAccount }): unknown;
}

/** USER_STREAM: the listen key endpoints, authorised by the API key header alone. */
export interface KeyRoute extends RouteBase {
  security: "USER_STREAM";
  handle(input: { state: SimState; params: RequestParams; account: SimAccount }): unknown;
}

export type RouteSpec = PublicRoute | SignedRoute | KeyRoute;

export const WEIGHT_HEADER = "X-MBX-USED-WEIGHT-1M";
export const SAPI_WEIGHT_HEADER = "X-SAPI-USED-IP-WEIGHT-1M";

/** `/sapi` endpoints live on the spot host (api.binance.com), everything else on the futures host. */
export function isSpotPath(path: string): boolean {
  return path.startsWith("/sapi/");
}

/** The pool a route's weight counts in, and the header that reports it. */
function weightPool(state: SimState, spec: RouteSpec): { pool: WeightPool; header: string } {
  if (!isSpotPath(spec.path)) return { pool: state.weight, header: WEIGHT_HEADER };
  const key = `${spec.method} ${spec.path}`;
  let pool = state.sapiWeight.get(key);
  if (!pool) state.sapiWeight.set(key, pool = { limit: SAPI_WEIGHT_LIMIT, minute: -1, used: 0, refused: 0 });
  return { pool, header: SAPI_WEIGHT_HEADER };
}

/**
 * Charges `weight` to `pool`, or says how the venue refuses it: 429 with
 * Retry-After until the minute turns; a request sent over the limit again
 * after that 429 bans the IP (418, "IP banned until", Retry-After) for the
 * ban's length, which doubles for the next one.
 */
function chargeWeight(
  state: SimState,
  pool: WeightPool,
  now: number,
  weight: number,
): { retryAfterS?: number; banned?: boolean } {
  if (now < state.ban.until) return { retryAfterS: Math.ceil((state.ban.until - now) / 1000), banned: true };
  const minute = Math.floor(now / 60_000);
  if (minute !== pool.minute) {
    pool.minute = minute;
    pool.used = 0;
    pool.refused = 0;
  }
  if (pool.used + weight > pool.limit) {
    if (pool.refused++ === 0) return { retryAfterS: Math.ceil(((minute + 1) * 60_000 - now) / 1000) };
    state.ban = { until: now + state.ban.nextMs, nextMs: Math.min(state.ban.nextMs * 2, LONGEST_BAN_MS) };
    return { retryAfterS: Math.ceil((state.ban.until - now) / 1000), banned: true };
  }
  pool.used += weight;
  return {};
}

/**
 * Counts a new order against the account's ORDERS limits and answers the
 * X-MBX-ORDER-COUNT-* headers; over either limit it is refused with -1015
 * (429), uncounted and without the headers.
 */
function admitOrder(state: SimState, account: SimAccount): Record<string, string> {
  const now = state.now();
  account.orderTimes = account.orderTimes.filter((time) => now - time < 60_000);
  const last10s = account.orderTimes.filter((time) => now - time < 10_000).length;
  const { per10Seconds, perMinute } = state.orderLimits;
  if (last10s >= per10Seconds) throw errors.tooManyOrders(per10Seconds, "10 SECOND");
  if (account.orderTimes.length >= perMinute) throw errors.tooManyOrders(perMinute, "1 MINUTE");
  account.orderTimes.push(now);
  return {
    "X-MBX-ORDER-COUNT-10S": String(last10s + 1),
    "X-MBX-ORDER-COUNT-1M": String(account.orderTimes.length),
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Answers one request to `spec`. */
export async function runRoute(c: Context, state: SimState, spec: RouteSpec): Promise<Response> {
  const mode = state.fault.mode;
  if (mode === "DOWN") return c.json(SERVICE_UNAVAILABLE, 503);
  if (mode === "SLOW") await delay(state.fault.ms);
  const { query, body } = await rawParts(c.req.raw);
  const headers: Record<string, string> = {};
  const lost = mode === "LOSE_RESPONSE" && spec.security !== "NONE" && spec.security !== "USER_STREAM" &&
    spec.orderMutation === true;
  try {
    const params = new RequestParams(query, body);
    const weight = typeof spec.weight === "number" ? spec.weight : spec.weight(params);
    const { pool, header } = weightPool(state, spec);
    const { retryAfterS, banned } = chargeWeight(state, pool, state.now(), weight);
    headers[header] = String(pool.used);
    if (retryAfterS !== undefined) {
      headers["Retry-After"] = String(retryAfterS);
      throw banned ? errors.ipBanned(state.ban.until) : errors.tooManyRequests(pool.limit);
    }
    let data: unknown;
    if (spec.security === "NONE") {
      data = spec.handle({ state, params });
    } else if (spec.security === "USER_STREAM") {
      data = spec.handle({ state, params, account: authenticateKey(state, c.req.header("X-MBX-APIKEY") ?? null) });
    } else {
      const apiKey = c.req.header("X-MBX-APIKEY") ?? null;
      const { account } = authenticate(state, { apiKey, query, body }, spec.security === "SIGNED");
      if (spec.countsOrder) Object.assign(headers, admitOrder(state, account));
      data = spec.handle({ state, params, account });
    }
    // The venue did the work; only the answer goes missing, as when its gateway times out.
    if (lost) return c.json(unknownOutcome(spec.path, state.now()), 503, headers);
    return c.json(data as object, 200, headers);
  } catch (error) {
    if (lost) return c.json(unknownOutcome(spec.path, state.now()), 503, headers);
    if (error instanceof SimError) {
      return c.json({ code: error.code, msg: error.message }, error.status as 400, headers);
    }
    return c.json({ code: -1000, msg: "An unknown error occured while processing the request." }, 500, headers);
  }
}
