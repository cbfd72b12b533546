/**
 * VENUE_B error strings mapped to our VenueErrorKind.
 *
 * The venue answers every refusal with free text (whole-action
 * `{"status":"err","response":"..."}` or a per-order `{"error":"..."}`), so
 * the mapping is by pattern. Only the kinds the domain treats as transient
 * (RATE_LIMITED, UNAVAILABLE) may be retried; an unknown text is an
 * INVALID_ORDER, the safe "do not resend as is" answer.
 */
import { VenueError, type VenueErrorKind } from "../types.ts";
import { PROVIDER_ID } from "./constants.ts";

const RULES: [RegExp, VenueErrorKind][] = [
  // A wrong signature recovers a random address, so a bad key, an unapproved,
  // expired or revoked agent and a hashing bug all read the same.
  [/^(L1 error: )?User or API Wallet 0x[0-9a-f]+ does not exist/i, "CREDENTIAL_REJECTED"],
  [/^Builder fee has not been approved/i, "CREDENTIAL_REJECTED"],
  [/^Vault may not perform this action/i, "CREDENTIAL_REJECTED"],
  [/^Must deposit before performing actions/i, "INSUFFICIENT_MARGIN"],
  [/^Insufficient margin/i, "INSUFFICIENT_MARGIN"],
  [/^Insufficient balance/i, "INSUFFICIENT_MARGIN"],
  [/^Builder has insufficient balance to be approved/i, "INVALID_ORDER"],
  [/^Builder fee is too high/i, "INVALID_ORDER"],
  [/^Too many cumulative requests/i, "RATE_LIMITED"],
  [/rate limit/i, "RATE_LIMITED"],
  // Nothing was applied: the same intent may be signed again with a fresh nonce (an action the
  // service signed; a relayed user-signed one is NONCE_SPENT, see userSignedActionError).
  [/^Invalid nonce/i, "UNAVAILABLE"],
  [/^Action has expired/i, "UNAVAILABLE"],
  [/^Price must be divisible by tick size/i, "INVALID_ORDER"],
  [/^Order must have minimum value/i, "INVALID_ORDER"],
  [/^Order has (invalid|zero) (size|price)/i, "INVALID_ORDER"],
  [/^Reduce only order would increase position/i, "INVALID_ORDER"],
  [/^Order price (cannot be more than|too far)/i, "INVALID_ORDER"],
  [/^Post only order would have immediately matched/i, "INVALID_ORDER"],
  [/^Order could not immediately match/i, "INVALID_ORDER"],
  [/^No liquidity available for market order/i, "INVALID_ORDER"],
  [/^Invalid TP\/SL price/i, "INVALID_ORDER"],
  [/margin tier limit|open interest/i, "INVALID_ORDER"],
  [/^Order was never placed, already canceled, or filled/i, "INVALID_ORDER"],
  [/^Cannot modify canceled or filled order/i, "INVALID_ORDER"],
  [/^Cannot self-transfer/i, "INVALID_ORDER"],
];

/** Texts of a cancel that found no open order (already filled, canceled or never placed). */
const NOTHING_TO_CANCEL = /^Order was never placed, already canceled, or filled/i;
/**
 * The venue's refusals of a nonce: "Invalid nonce: duplicate nonce <n>" (it
 * has that nonce already), "... nonce too low <n> < <bound>" and "... nonce
 * too high <n> > <bound>" (outside the 100 it keeps or its time window).
 */
const NONCE_REFUSED = /^Invalid nonce/i;

/** Our error kind for a venue refusal text. */
export function kindOfVenueMessage(message: string): VenueErrorKind {
  for (const [pattern, kind] of RULES) if (pattern.test(message)) return kind;
  return "INVALID_ORDER";
}

/** Whether a cancel found no open order under that id. */
export function isNothingToCancel(message: string): boolean {
  return NOTHING_TO_CANCEL.test(message);
}

/** A VenueError for a refusal the venue wrote as text; the text is kept as venueCode. */
export function errorFromVenueMessage(message: string): VenueError {
  return new VenueError(kindOfVenueMessage(message), `VENUE_B refused the action: "${message}"`, {
    providerId: PROVIDER_ID,
    venueCode: message,
  });
}

/**
 * A relay of an action the client signed in their wallet, as the domain must
 * read its failure. Its nonce is signed into it: a refused nonce cannot be
 * signed again here, and says the venue applied nothing now, not whether it
 * applied this very action before (a relay whose process died, or whose
 * answer was lost): NONCE_SPENT, settled by reading the venue's state.
 */
export function userSignedActionError(error: unknown): unknown {
  if (!(error instanceof VenueError) || !NONCE_REFUSED.test(String(error.detail.venueCode ?? ""))) return error;
  return new VenueError(
    "NONCE_SPENT",
    `VENUE_B no longer takes the signed action's nonce: "${error.detail.venueCode}"`,
    {
      providerId: PROVIDER_ID,
      venueCode: error.detail.venueCode,
    },
  );
}

/** A VenueError of this venue. */
export function venueError(
  kind: VenueErrorKind,
  message: string,
  extra: { venueCode?: string | number; retryAfterMs?: number } = {},
): VenueError {
  return new VenueError(kind, message, { providerId: PROVIDER_ID, ...extra });
}
