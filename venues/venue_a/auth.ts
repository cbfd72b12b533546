/**
 * HMAC-SHA256 request signing of VENUE_A.
 *
 * The venue hashes `totalParams`: the query string followed directly by the
 * form body, byte for byte as they travel. So we encode once, sign that exact
 * string and send that exact string; re-encoding after signing is the classic
 * source of -1022.
 */
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";

/** Request parameters in the order they are sent; `undefined` values are left out. */
export type Params = Record<string, string | number | boolean | undefined>;

/** `key=value` pairs joined by `&`, values percent-encoded like the official SDK does. */
export function encodeParams(params: Params): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`);
  }
  return parts.join("&");
}

/** Lowercase hex HMAC-SHA256 of `message` keyed with the API secret. */
export function signPayload(secret: string, message: string): string {
  return bytesToHex(hmac(sha256, utf8ToBytes(secret), utf8ToBytes(message)));
}

export interface SignedParts {
  /** Query string without `?`. */
  query: string;
  /** Form body (`application/x-www-form-urlencoded`), empty for GET/DELETE. */
  body: string;
}

/**
 * Adds `timestamp` and `recvWindow`, signs, and places `signature` last in the
 * part that carries the parameters: the query for GET/DELETE, the body for
 * POST/PUT (as ccxt does, so both clients look alike on the wire).
 */
export function signRequest(input: {
  method: string;
  params: Params;
  secret: string;
  timestamp: number;
  recvWindow: number;
}): SignedParts {
  const payload = encodeParams({ ...input.params, recvWindow: input.recvWindow, timestamp: input.timestamp });
  const signed = `${payload}&signature=${signPayload(input.secret, payload)}`;
  return input.method === "GET" || input.method === "DELETE"
    ? { query: signed, body: "" }
    : { query: "", body: signed };
}
