/**
 * VENUE_A failures mapped to our small `VenueErrorKind` set.
 *
 * The one distinction that matters for money: after a mutation was sent, an
 * answer that does not prove rejection is OUTCOME_UNKNOWN (the order may
 * exist), never UNAVAILABLE (which callers may simply retry).
 */
import { VenueError, type VenueErrorKind } from "../types.ts";
import { PROVIDER_ID } from "./constants.ts";

/** Codes the adapter branches on. */
export const CODES = {
  tooManyOrders: -1015,
  /** "This listenKey does not exist.": the account's user data stream key expired or was closed. */
  invalidListenKey: -1125,
  invalidTimestamp: -1021,
  meRecvWindow: -5028,
  /** "Invalid API-key, IP, or permissions for action.": confirmed before it counts (key_refusal.ts). */
  rejectedKey: -2015,
  cancelRejected: -2011,
  noSuchOrder: -2013,
  duplicatedClientOrderId: -4116,
  stopOrderTriggering: -4117,
  sameOrder: -5027,
} as const;

/** "No need to change ..." answers: the account is already as asked, so the call succeeded. */
export const ALREADY_SET_CODES: ReadonlySet<number> = new Set([-4046, -4059, -4171]);

/** UNKNOWN_IF_MUTATION: the venue itself says the execution status is unknown. */
type Mapping = VenueErrorKind | "UNKNOWN_IF_MUTATION";

/** Every code of the facts file's error table, plus the neighbours the venue really sends for the same causes. */
const KIND_BY_CODE: ReadonlyMap<number, Mapping> = new Map<number, Mapping>([
  [-1000, "UNKNOWN_IF_MUTATION"],
  [-1001, "UNAVAILABLE"],
  [-1002, "CREDENTIAL_REJECTED"],
  [-1003, "RATE_LIMITED"],
  [-1006, "UNKNOWN_IF_MUTATION"],
  [-1007, "UNKNOWN_IF_MUTATION"],
  [-1008, "RATE_LIMITED"],
  [-1015, "RATE_LIMITED"],
  [-1016, "UNAVAILABLE"],
  // Only reached when a resync with /fapi/v1/time did not help: a definite rejection.
  [-1021, "UNAVAILABLE"],
  [-1022, "CREDENTIAL_REJECTED"],
  [-1099, "CREDENTIAL_REJECTED"],
  [-1102, "INVALID_ORDER"],
  [-1106, "INVALID_ORDER"],
  [-1111, "INVALID_ORDER"],
  [-1121, "INVALID_ORDER"],
  [-2010, "INVALID_ORDER"],
  [-2011, "INVALID_ORDER"],
  [-2013, "INVALID_ORDER"],
  [-2014, "CREDENTIAL_REJECTED"],
  [-2015, "CREDENTIAL_REJECTED"],
  [-2017, "CREDENTIAL_REJECTED"],
  [-2018, "INSUFFICIENT_MARGIN"],
  [-2019, "INSUFFICIENT_MARGIN"],
  [-2021, "TRIGGER_CROSSED"],
  [-2022, "INVALID_ORDER"],
  // "Reach max open order limit.": the symbol's MAX_NUM_ORDERS open orders; another must go first.
  [-2025, "INVALID_ORDER"],
  [-2027, "INSUFFICIENT_MARGIN"],
  [-2028, "INSUFFICIENT_MARGIN"],
  [-4003, "INVALID_ORDER"],
  [-4014, "INVALID_ORDER"],
  [-4015, "INVALID_ORDER"],
  [-4023, "INVALID_ORDER"],
  // "Reach max stop order limit.": 200 waiting conditional orders across all symbols (change log 2025-12-29).
  [-4045, "INVALID_ORDER"],
  [-4046, "INVALID_ORDER"],
  [-4050, "INSUFFICIENT_MARGIN"],
  [-4051, "INSUFFICIENT_MARGIN"],
  [-4056, "CREDENTIAL_REJECTED"],
  [-4057, "CREDENTIAL_REJECTED"],
  [-4059, "INVALID_ORDER"],
  [-4061, "INVALID_ORDER"],
  [-4116, "INVALID_ORDER"],
  // "stop order is triggering": too late to cancel, the order is on its way to the engine.
  [-4117, "INVALID_ORDER"],
  [-4120, "INVALID_ORDER"],
  [-4131, "INVALID_ORDER"],
  [-4164, "INVALID_ORDER"],
  [-4171, "INVALID_ORDER"],
  [-5021, "INVALID_ORDER"],
  [-5022, "INVALID_ORDER"],
  [-5027, "INVALID_ORDER"],
  [-5028, "UNAVAILABLE"],
]);

/** 5xx messages that the venue documents as definite failures (nothing was executed). */
const DEFINITE_FAILURE_MESSAGES = [
  "Service Unavailable.",
  "Internal error; unable to process your request. Please try again.",
];

/** What came back from the venue, reduced to what classification needs. */
export interface VenueFailure {
  status: number;
  code?: number;
  msg?: string;
  retryAfterMs?: number;
}

/** The kind of a venue answer; `mutation` decides whether an unclear answer may have executed. */
export function classifyFailure(failure: VenueFailure, mutation: boolean): VenueErrorKind {
  const mapped = failure.code === undefined ? undefined : KIND_BY_CODE.get(failure.code);
  const byCode = mapped ?? (failure.code !== undefined && failure.code <= -1100 ? "INVALID_ORDER" : undefined);
  if (byCode === "UNKNOWN_IF_MUTATION") return mutation ? "OUTCOME_UNKNOWN" : "UNAVAILABLE";
  if (byCode) return byCode;
  const { status } = failure;
  if (status === 401) return "CREDENTIAL_REJECTED";
  if (status === 418 || status === 429) return "RATE_LIMITED";
  // A WAF block (403) is refused at the edge, before anything runs.
  if (status === 403) return "UNAVAILABLE";
  if (status === 408 || status >= 500) {
    const definite = failure.msg !== undefined && DEFINITE_FAILURE_MESSAGES.includes(failure.msg);
    return mutation && !definite ? "OUTCOME_UNKNOWN" : "UNAVAILABLE";
  }
  return status >= 400 ? "INVALID_ORDER" : mutation ? "OUTCOME_UNKNOWN" : "UNAVAILABLE";
}

/** A `VenueError` for a venue answer. Only the venue's own text goes in: never request data. */
export function toVenueError(action: string, failure: VenueFailure, mutation: boolean): VenueError {
  const kind = classifyFailure(failure, mutation);
  const said = failure.msg ? `: ${failure.msg.slice(0, 200)}` : "";
  const code = failure.code === undefined ? ` (HTTP ${failure.status})` : ` (code ${failure.code})`;
  const advice = kind === "OUTCOME_UNKNOWN" ? "; query the order by its client order id before any retry" : "";
  return new VenueError(kind, `${action} failed${said}${code}${advice}`, {
    providerId: PROVIDER_ID,
    venueCode: failure.code ?? failure.status,
    retryAfterMs: failure.retryAfterMs,
  });
}

/** A failure decided on our side (no venue code), e.g. a network error or a local back-off. */
export function localError(kind: VenueErrorKind, message: string, retryAfterMs?: number): VenueError {
  return new VenueError(kind, message, { providerId: PROVIDER_ID, retryAfterMs });
}

/**
 * How long the venue asked us to wait: the Retry-After header (seconds or an
 * HTTP date), else the "IP banned until <ms>" of a -1003 ban message.
 */
export function retryAfterMs(headers: Headers, msg: string | undefined, now: number): number | undefined {
  const header = headers.get("Retry-After");
  if (header) {
    const seconds = Number(header);
    if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds * 1000));
    const date = Date.parse(header);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  const banned = msg ? /banned until (\d{13})/.exec(msg) : null;
  return banned ? Math.max(0, Number(banned[1]) - now) : undefined;
}
