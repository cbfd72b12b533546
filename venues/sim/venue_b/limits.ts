/**
 * The venue's rate limits, as its "Rate limits and user limits" page
 * (hyperliquid-docs for-developers/api/rate-limits-and-user-limits) states them:
 *
 * - Per IP, REST requests share 1,200 weight a minute. An /exchange action
 *   weighs 1 + floor(batch length / 40); info requests weigh 2 (l2Book,
 *   allMids, clearinghouseState, orderStatus, spotClearinghouseState,
 *   exchangeStatus), 60 (userRole) or 20 (every other); the history reads
 *   (userFills, userFillsByTime, userFunding, historicalOrders, …) weigh 1
 *   more per 20 items they return. Over it the venue answers HTTP 429; the
 *   body is JSON `null` (what SDKs that read `.code` of a 429's body choke on,
 *   nomeida/hyperliquid#55). Kept over a rolling minute; one simulator stands
 *   for one IP, every caller of it sharing the count.
 * - An action whose `expiresAfter` has passed weighs 5 times its weight
 *   (exchange endpoint, expiresAfter: "increases rate limit weight by 5x if
 *   the request expires").
 * - Per address, L1 actions (not info requests) are limited to a buffer of
 *   10,000 requests plus 1 per USDC the address traded since inception; a
 *   batch of n orders or cancels counts n. Cancels may go on to
 *   min(limit + 100,000, 2 × limit). An address over its limit may still send
 *   one request every 10 seconds; the others are refused with the venue's
 *   text ("Too many cumulative requests sent (…)").
 *
 * All of it is on by default, at the published values; `PUT /_control/limits`
 * turns it off or moves the values (a bench that needs room, a test that
 * needs a small limit).
 */
import type { Hono } from "hono";
import type { HexAddress } from "../../types.ts";
import type { SimState, SimUser } from "./state.ts";

/** What `/_control/limits` sets. */
export interface SimLimits {
  enabled: boolean;
  ipWeightPerMinute: number;
  addressRequestBuffer: number;
}

export const PUBLISHED_LIMITS: SimLimits = { enabled: true, ipWeightPerMinute: 1200, addressRequestBuffer: 10_000 };

const MINUTE_MS = 60_000;
/** An address over its limit may still send one request this often. */
const THROTTLED_EVERY_MS = 10_000;
const EXPIRED_MULTIPLIER = 5;
const LIGHT_INFO = new Set([
  "l2Book",
  "allMids",
  "clearinghouseState",
  "orderStatus",
  "spotClearinghouseState",
  "exchangeStatus",
]);
/** Info requests that weigh 1 more per 20 items returned (those the simulator answers, and the rest of the list). */
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
const CANCEL_TYPES = new Set(["cancel", "cancelByCloid"]);

interface LimitState {
  limits: SimLimits;
  /** Weight charged to the IP, with when: the rolling minute is what is younger than a minute. */
  charges: { at: number; weight: number }[];
  /** Requests each address has used, and when it last used its throttled one. */
  addresses: Map<HexAddress, { used: number; throttledAt: number }>;
}

const limitStates = new WeakMap<SimState, LimitState>();

function limitsOf(state: SimState): LimitState {
  let found = limitStates.get(state);
  if (!found) {
    found = { limits: { ...PUBLISHED_LIMITS }, charges: [], addresses: new Map() };
    limitStates.set(state, found);
  }
  return found;
}

/** Sets some of the limits; what was counted under the old ones is forgotten. */
export function setLimits(state: SimState, limits: Partial<SimLimits>): void {
  const limit = limitsOf(state);
  limit.limits = { ...limit.limits, ...limits };
  limit.charges = [];
  limit.addresses.clear();
}

/** The weight of an /info body before its answer (history reads add per item afterwards). */
export function infoRequestWeight(type: unknown): number {
  return LIGHT_INFO.has(String(type)) ? 2 : type === "userRole" ? 60 : 20;
}

/** What an answer to a history read adds: 1 per 20 items returned. */
export function infoAnswerWeight(type: unknown, answer: unknown): number {
  return PER_20_ITEMS.has(String(type)) && Array.isArray(answer) ? Math.floor(answer.length / 20) : 0;
}

/** The weight of an /exchange body: 1 + 1 per 40 in the batch, five times that once expired. */
export function exchangeRequestWeight(state: SimState, body: unknown): number {
  const envelope = (body ?? {}) as { action?: Record<string, unknown>; expiresAfter?: unknown };
  const weight = 1 + Math.floor(batchLength(envelope.action) / 40);
  const expired = typeof envelope.expiresAfter === "number" && envelope.expiresAfter < state.now();
  return expired ? weight * EXPIRED_MULTIPLIER : weight;
}

function batchLength(action: Record<string, unknown> | undefined): number {
  const batch = action?.orders ?? action?.cancels ?? action?.modifies;
  return Array.isArray(batch) ? batch.length : 0;
}

function ipWeightUsed(state: SimState): number {
  const limit = limitsOf(state);
  const since = state.now() - MINUTE_MS;
  limit.charges = limit.charges.filter((charge) => charge.at > since);
  return limit.charges.reduce((sum, charge) => sum + charge.weight, 0);
}

/** Charges `weight` to the IP when the minute has room for it; false is the venue's 429 (nothing charged). */
export function admitIpWeight(state: SimState, weight: number): boolean {
  const limit = limitsOf(state);
  if (!limit.limits.enabled) return true;
  if (ipWeightUsed(state) + weight > limit.limits.ipWeightPerMinute) return false;
  limit.charges.push({ at: state.now(), weight });
  return true;
}

/** Charges weight the answer itself adds (history items): never refused, the request was served. */
export function chargeIpWeight(state: SimState, weight: number): void {
  const limit = limitsOf(state);
  if (limit.limits.enabled && weight > 0) limit.charges.push({ at: state.now(), weight });
}

function cumulativeVolume(user: SimUser): number {
  return user.fills.reduce((sum, fill) => sum + Number(fill.px) * Number(fill.sz), 0);
}

/**
 * Counts an L1 action against its user's address limit; the venue's refusal
 * text when the address is over it and its throttled request is not due.
 */
export function chargeAddress(state: SimState, user: SimUser, action: { type: string }): string | null {
  const limit = limitsOf(state);
  if (!limit.limits.enabled) return null;
  const requests = Math.max(1, batchLength(action as Record<string, unknown>));
  const volume = cumulativeVolume(user);
  const base = limit.limits.addressRequestBuffer + Math.floor(volume);
  const cap = CANCEL_TYPES.has(action.type) ? Math.min(base + 100_000, base * 2) : base;
  const entry = limit.addresses.get(user.address) ?? { used: 0, throttledAt: -Infinity };
  limit.addresses.set(user.address, entry);
  const after = entry.used + requests;
  if (after > cap) {
    if (state.now() - entry.throttledAt < THROTTLED_EVERY_MS) {
      return `Too many cumulative requests sent (${after} > ${cap}) for cumulative volume traded ` +
        `$${volume.toFixed(2)}. Place taker orders to free up 1 request per USDC traded.`;
    }
    entry.throttledAt = state.now();
  }
  entry.used = after;
  return null;
}

/** `userRateLimit`: the address's volume, what it used and its cap (no requests bought here: no surplus). */
export function addressRateLimit(state: SimState, user: SimUser | undefined) {
  const limit = limitsOf(state);
  const volume = user ? cumulativeVolume(user) : 0;
  return {
    cumVlm: String(Number(volume.toFixed(6))),
    nRequestsUsed: user ? limit.addresses.get(user.address)?.used ?? 0 : 0,
    nRequestsCap: limit.limits.addressRequestBuffer + Math.floor(volume),
    nRequestsSurplus: 0,
  };
}

/** `PUT /_control/limits` (each field optional) and `GET /_control/limits` (what is set and used). */
export function registerLimitRoutes(app: Hono, state: SimState): void {
  const view = (user?: string) => {
    const limit = limitsOf(state);
    const address = user?.toLowerCase() as HexAddress | undefined;
    return {
      ...limit.limits,
      ipWeightUsed: ipWeightUsed(state),
      ...(address ? { address, requestsUsed: limit.addresses.get(address)?.used ?? 0 } : {}),
    };
  };
  app.get("/_control/limits", (c) => c.json(view(c.req.query("user"))));
  app.put("/_control/limits", async (c) => {
    const body = await c.req.json().catch(() => null) as Record<string, unknown> | null;
    if (typeof body !== "object" || body === null) return c.json({ error: "body must be a JSON object" }, 400);
    const { enabled, ipWeightPerMinute, addressRequestBuffer } = body;
    if (enabled !== undefined && typeof enabled !== "boolean") {
      return c.json({ error: "enabled must be a boolean" }, 400);
    }
    for (const [name, value] of Object.entries({ ipWeightPerMinute, addressRequestBuffer })) {
      if (value !== undefined && (!Number.isInteger(value) || (value as number) < 0)) {
        return c.json({ error: `${name} must be a whole number, 0 or more` }, 400);
      }
    }
    setLimits(state, {
      ...(enabled === undefined ? {} : { enabled: enabled as boolean }),
      ...(ipWeightPerMinute === undefined ? {} : { ipWeightPerMinute: ipWeightPerMinute as number }),
      ...(addressRequestBuffer === undefined ? {} : { addressRequestBuffer: addressRequestBuffer as number }),
    });
    return c.json(view());
  });
}
