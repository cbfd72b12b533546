/**
 * How every venue route of the simulator runs: fault injection, the IP weight
 * counter, signature checks, then the handler, answered in the venue's shapes
 * with its headers. Routes are declared as data so weight and security sit
 * next to the path, as in the venue docs.
 */
import type { Context } from "hono";
import { authenticate, rawParts } from "./auth.ts";
import { errors, SERVICE_UNAVAILABLE, SimError, unknownOutcome } from "./errors.ts";
import { RequestParams } from "./params.ts";
import type { SimAccount, SimState } from "./state.ts";

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
  /** Counts as an order request and is what LOSE_RESPONSE swallows the answer of. */
  orderMutation?: boolean;
  handle(input: { state: SimState; params: RequestParams; account: SimAccount }): unknown;
}

export type RouteSpec = PublicRoute | SignedRoute;

export const WEIGHT_HEADER = "X-MBX-USED-WEIGHT-1M";

function chargeWeight(state: SimState, weight: number): { retryAfterS?: number } {
  const now = state.now();
  const minute = Math.floor(now / 60_000);
  if (minute !== state.weight.minute) {
    state.weight.minute = minute;
    state.weight.used = 0;
  }
  if (state.weight.used + weight > state.weight.limit) {
    return { retryAfterS: Math.ceil(((minute + 1) * 60_000 - now) / 1000) };
  }
  state.weight.used += weight;
  return {};
}

function orderCountHeaders(state: SimState, account: SimAccount): Record<string, string> {
  const now = state.now();
  account.orderTimes = account.orderTimes.filter((time) => now - time < 60_000);
  account.orderTimes.push(now);
  const last10s = account.orderTimes.filter((time) => now - time < 10_000).length;
  return { "X-MBX-ORDER-COUNT-10S": String(last10s), "X-MBX-ORDER-COUNT-1M": String(account.orderTimes.length) };
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
  const lost = mode === "LOSE_RESPONSE" && spec.security !== "NONE" && spec.orderMutation === true;
  try {
    const params = new RequestParams(query, body);
    const weight = typeof spec.weight === "number" ? spec.weight : spec.weight(params);
    const { retryAfterS } = chargeWeight(state, weight);
    headers[WEIGHT_HEADER] = String(state.weight.used);
    if (retryAfterS !== undefined) {
      headers["Retry-After"] = String(retryAfterS);
      throw errors.tooManyRequests(state.weight.limit);
    }
    let data: unknown;
    if (spec.security === "NONE") {
      data = spec.handle({ state, params });
    } else {
      const apiKey = c.req.header("X-MBX-APIKEY") ?? null;
      const { account } = authenticate(state, { apiKey, query, body }, spec.security === "SIGNED");
      if (spec.orderMutation) Object.assign(headers, orderCountHeaders(state, account));
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
