/**
 * SIGNED-endpoint verification, as the venue does it: the HMAC covers the raw
 * query string followed directly by the raw form body, exactly as received,
 * with `signature` stripped from whichever part carries it last.
 *
 * Check order (undocumented by the venue, the facts file's choice): key format
 * -2014, key / permission -2015, missing timestamp or signature -1102, clock
 * -1021, signature -1022.
 */
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import { errors } from "./errors.ts";
import { RequestParams } from "./params.ts";
import type { SimAccount, SimState } from "./state.ts";

const API_KEY_PATTERN = /^[A-Za-z0-9]{64}$/;
const DEFAULT_RECV_WINDOW = 5000;
const MAX_RECV_WINDOW = 60000;
/** A request may be stamped up to this far ahead of the server clock. */
const AHEAD_TOLERANCE_MS = 1000;

export interface Authenticated {
  account: SimAccount;
  params: RequestParams;
}

/**
 * A USER_STREAM request (the listen key endpoints): the API key in
 * X-MBX-APIKEY is all it takes, no timestamp or signature, with the same
 * key checks as a signed call.
 */
export function authenticateKey(state: SimState, apiKey: string | null, futures = true): SimAccount {
  if (!apiKey || !API_KEY_PATTERN.test(apiKey)) throw errors.apiKeyFormat();
  const account = state.accounts.get(apiKey);
  if (!account || account.revoked || state.fault.mode === "REJECT_KEYS" || (futures && !account.enableFutures)) {
    throw errors.rejectedKey();
  }
  if (futures && account.blockedUntil > state.now()) throw errors.rejectedKey();
  return account;
}

/** Splits a trailing `signature=<value>` off a raw parameter string. */
function splitSignature(raw: string): { rest: string; signature: string } | null {
  const match = /(?:^|&)signature=([^&]*)$/.exec(raw);
  if (!match) return null;
  try {
    return { rest: raw.slice(0, match.index), signature: decodeURIComponent(match[1]) };
  } catch {
    return { rest: raw.slice(0, match.index), signature: "" };
  }
}

/** Compares hex case-insensitively without an early exit. */
function sameHex(expected: string, given: string): boolean {
  const a = expected.toLowerCase();
  const b = given.toLowerCase();
  let difference = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ (b.charCodeAt(i) || 0);
  return difference === 0;
}

/** The raw query (after `?`) and the raw form body of a request. */
export async function rawParts(request: Request): Promise<{ query: string; body: string }> {
  const url = request.url;
  const mark = url.indexOf("?");
  const query = mark < 0 ? "" : url.slice(mark + 1);
  const form = request.headers.get("content-type")?.includes("application/x-www-form-urlencoded") ?? false;
  const body = form ? await request.text() : "";
  return { query, body };
}

/**
 * Verifies a SIGNED request and returns its account and parameters.
 * `futures` is false for the spot-host endpoints, which a key without the
 * futures permission may still call.
 */
export function authenticate(
  state: SimState,
  request: { apiKey: string | null; query: string; body: string },
  futures: boolean,
): Authenticated {
  const { apiKey, query, body } = request;
  const account = authenticateKey(state, apiKey, futures);
  const params = new RequestParams(query, body);
  const timestamp = params.get("timestamp");
  if (timestamp === undefined || !/^\d{1,16}$/.test(timestamp)) throw errors.mandatory("timestamp");
  const inQuery = splitSignature(query);
  const inBody = inQuery ? null : splitSignature(body);
  if (!inQuery && !inBody) {
    // Present but not last is a wrong signature on the venue; absent is a missing parameter.
    throw params.get("signature") === undefined ? errors.mandatory("signature") : errors.badSignature();
  }
  const recvWindow = params.int("recvWindow") ?? DEFAULT_RECV_WINDOW;
  if (recvWindow <= 0 || recvWindow > MAX_RECV_WINDOW) throw errors.invalidParam("recvWindow");
  const now = state.now();
  if (Number(timestamp) >= now + AHEAD_TOLERANCE_MS) throw errors.timestampAhead();
  if (now - Number(timestamp) > recvWindow) throw errors.timestampOutside();
  const payload = inQuery ? `${inQuery.rest}${body}` : `${query}${inBody!.rest}`;
  const expected = bytesToHex(hmac(sha256, utf8ToBytes(account.apiSecret), utf8ToBytes(payload)));
  const given = (inQuery ?? inBody)!.signature;
  if (!sameHex(expected, given)) throw errors.badSignature();
  return { account, params };
}
