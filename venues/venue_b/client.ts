/**
 * HTTP transport of VENUE_B: `POST /info` (reads) and `POST /exchange`
 * (signed actions), with per-request timeouts.
 *
 * The one asymmetry that matters: a read that fails is simply UNAVAILABLE,
 * but an /exchange request that may have reached the venue and got no
 * trustworthy answer is OUTCOME_UNKNOWN — the caller must look the order up,
 * never send it again as new.
 */
import { type HexAddress, type RequestBudget, VenueError } from "../types.ts";
import { errorFromVenueMessage, venueError } from "./errors.ts";
import type { Signature } from "./signing.ts";
import { observeVenueCall } from "../../domain/telemetry/venue_calls.ts";

/** Transport settings of the VENUE_B client. */
export interface VenueBClientDeps {
  baseUrl: string;
  fetch: typeof fetch;
  now: () => number;
  timeoutMs: number;
  /** The egress's request weight, spent before each request. */
  budget?: RequestBudget;
}

/** The signed envelope posted to /exchange. */
export interface ExchangeRequest {
  action: unknown;
  nonce: number;
  signature: Signature;
  vaultAddress?: HexAddress;
  expiresAfter?: number;
}

/** The `response` of a `{"status":"ok"}` reply. */
export interface ExchangeResponse {
  type: string;
  data?: { statuses: unknown[] };
}

/** The two VENUE_B endpoints. */
export interface VenueBClient {
  info<T>(body: Record<string, unknown>): Promise<T>;
  exchange(body: ExchangeRequest): Promise<ExchangeResponse>;
}

/** Info requests the venue weighs 2 (the cheap, frequent ones); `userRole` 60; every other 20. */
const LIGHT_INFO = new Set([
  "l2Book",
  "allMids",
  "clearinghouseState",
  "orderStatus",
  "spotClearinghouseState",
  "exchangeStatus",
]);

export function infoWeight(type: string): number {
  return LIGHT_INFO.has(type) ? 2 : type === "userRole" ? 60 : 20;
}

/** Info requests the venue weighs 1 more per 20 items they return (rate-limits page). */
const PER_20_ITEMS = new Set([
  "recentTrades",
  "historicalOrders",
  "userFills",
  "userFillsByTime",
  "fundingHistory",
  "userFunding",
  "nonUserFundingUpdates",
  "twapHistory",
  "userTwapSliceFills",
  "userTwapSliceFillsByTime",
  "delegatorHistory",
  "delegatorRewards",
  "validatorStats",
]);

/** What an answer adds to its request's weight: 1 per 20 items of a history read, else nothing. */
export function infoAnswerWeight(type: string, answer: unknown): number {
  return PER_20_ITEMS.has(type) && Array.isArray(answer) ? Math.floor(answer.length / 20) : 0;
}

/** An exchange action weighs 1, plus 1 per 40 orders or cancels it carries. */
export function exchangeWeight(action: unknown): number {
  const { orders, cancels } = action as { orders?: unknown[]; cancels?: unknown[] };
  return 1 + Math.floor((orders?.length ?? cancels?.length ?? 0) / 40);
}

// Deno reports a refused or unresolvable connection this way: nothing was sent.
const NOT_SENT = /client error \(Connect\)|tcp connect error|connection refused|dns error/i;

/** A client bound to one base URL (the venue, or a simulator mounted anywhere). */
export function createVenueBClient(deps: VenueBClientDeps): VenueBClient {
  const base = deps.baseUrl.replace(/\/+$/, "");

  async function post(path: string, body: unknown): Promise<Response> {
    return await deps.fetch(`${base}${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(deps.timeoutMs),
    });
  }

  function describe(error: unknown): string {
    if (error instanceof DOMException && error.name === "TimeoutError") return `no answer within ${deps.timeoutMs} ms`;
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : "";
    return `${error instanceof Error ? error.message : String(error)} ${cause}`.trim();
  }

  function rateLimited(response: Response) {
    const seconds = Number(response.headers.get("Retry-After"));
    return venueError("RATE_LIMITED", "VENUE_B rate limit reached", {
      venueCode: 429,
      retryAfterMs: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined,
    });
  }

  async function refused(response: Response) {
    const text = (await response.text().catch(() => "")).slice(0, 200);
    return venueError("INVALID_ORDER", `VENUE_B refused the request (HTTP ${response.status}): "${text}"`, {
      venueCode: response.status,
    });
  }

  return {
    info<T>(body: Record<string, unknown>): Promise<T> {
      const type = String(body.type);
      return observeVenueCall(
        { venue: "VENUE_B", endpoint: "/info", weight: infoWeight(type), type },
        () => info(body),
      );
    },

    exchange(body: ExchangeRequest): Promise<ExchangeResponse> {
      const call = { venue: "VENUE_B" as const, endpoint: "/exchange", weight: exchangeWeight(body.action) };
      return observeVenueCall({ ...call, type: actionType(body.action) }, () => exchange(body));
    },
  };

  async function info<T>(body: Record<string, unknown>): Promise<T> {
    await deps.budget?.spend(infoWeight(String(body.type)));
    let response: Response;
    let parsed: unknown;
    try {
      response = await post("/info", body);
      if (response.status === 429) throw rateLimited(response);
      if (response.status >= 500) {
        await response.body?.cancel();
        throw venueError("UNAVAILABLE", `VENUE_B is unavailable (HTTP ${response.status})`, {
          venueCode: response.status,
        });
      }
      if (!response.ok) throw await refused(response);
      parsed = await response.json();
    } catch (error) {
      if (error instanceof VenueError) throw error;
      throw venueError("UNAVAILABLE", `VENUE_B could not be read: ${describe(error)}`);
    }
    // A history read costs more the more it returns: known only now, and counted though already served.
    const extra = infoAnswerWeight(String(body.type), parsed);
    if (extra > 0) await deps.budget?.charge?.(extra);
    return parsed as T;
  }

  async function exchange(body: ExchangeRequest): Promise<ExchangeResponse> {
    await deps.budget?.spend(exchangeWeight(body.action));
    let reply: { status?: unknown; response?: unknown };
    try {
      const response = await post("/exchange", body);
      if (response.status === 429) throw rateLimited(response);
      if (response.status >= 500) {
        await response.body?.cancel();
        throw venueError("OUTCOME_UNKNOWN", `VENUE_B answered HTTP ${response.status} after the action was sent`, {
          venueCode: response.status,
        });
      }
      if (!response.ok) throw await refused(response);
      reply = await response.json();
    } catch (error) {
      if (error instanceof VenueError) throw error;
      const detail = describe(error);
      if (NOT_SENT.test(detail)) throw venueError("UNAVAILABLE", `VENUE_B could not be reached: ${detail}`);
      throw venueError("OUTCOME_UNKNOWN", `VENUE_B gave no usable answer to a sent action: ${detail}`);
    }
    if (reply.status === "ok" && reply.response && typeof reply.response === "object") {
      return reply.response as ExchangeResponse;
    }
    if (reply.status === "err" && typeof reply.response === "string") throw errorFromVenueMessage(reply.response);
    throw venueError("OUTCOME_UNKNOWN", "VENUE_B answered a sent action with an unrecognised body");
  }
}

/** An exchange action's `type` (`order`, `cancel`, ...), for the call's span. */
function actionType(action: unknown): string | undefined {
  const type = (action as { type?: unknown } | null)?.type;
  return typeof type === "string" ? type : undefined;
}
