/**
 * A -2015 ("Invalid API-key, IP, or permissions for action.") from the
 * futures host is not taken on its word. The venue also answers it for a
 * while to a key it has temporarily blocked, after successful calls (ccxt
 * 4.5.84, binance.js handleErrors: a -2015 once the key has authenticated is
 * DDoSProtection, not AuthenticationError). Our domain moves an account to
 * ACCESS_LOST on CREDENTIAL_REJECTED, telling the partner to reconnect, so the
 * refusal is confirmed first with one read of the key's own restrictions on
 * the spot host (`GET /sapi/v1/account/apiRestrictions`, weight 1):
 * - the spot host refuses the key too: unknown or revoked key, or a caller IP
 *   outside its whitelist (both hold on every host): CREDENTIAL_REJECTED;
 * - it answers with `enableFutures: false`: the futures permission was
 *   withdrawn: CREDENTIAL_REJECTED;
 * - it answers with `enableFutures: true`: the key exists, may trade futures
 *   and our IP is allowed, so the refusal is the temporary block: RATE_LIMITED,
 *   to be retried after TEMPORARY_BLOCK_RETRY_MS;
 * - the read fails any other way: the refusal is unconfirmed, UNAVAILABLE.
 * Nothing is remembered between calls, so every instance and a restarted one
 * decide alike; the cost is one read of weight 1 on a refusal only.
 */
import { VenueError } from "../types.ts";
import type { ApiKeyPair, VenueAClient, VenueRequest } from "./client.ts";
import { PATHS, PROVIDER_ID, TEMPORARY_BLOCK_RETRY_MS, WEIGHTS } from "./constants.ts";
import { hasVenueCode } from "./context.ts";
import { CODES } from "./errors.ts";
import type { WireApiRestrictions } from "./wire.ts";

/** `fapi` whose signed calls have a -2015 confirmed on `spot` before it counts as a refused credential. */
export function confirmingKeyRefusals(fapi: VenueAClient, spot: VenueAClient): VenueAClient {
  return {
    ...fapi,
    async request<T>(request: VenueRequest): Promise<T> {
      try {
        return await fapi.request<T>(request);
      } catch (error) {
        if (!request.auth || !hasVenueCode(error, CODES.rejectedKey)) throw error;
        throw await confirmRefusal(spot, request.auth, error);
      }
    },
  };
}

async function confirmRefusal(spot: VenueAClient, auth: ApiKeyPair, refusal: VenueError): Promise<VenueError> {
  let restrictions: WireApiRestrictions;
  try {
    restrictions = await spot.request<WireApiRestrictions>({
      method: "GET",
      path: PATHS.apiRestrictions,
      weight: WEIGHTS.apiRestrictions,
      auth,
      action: "Confirming the refused API key",
    });
  } catch (error) {
    if (error instanceof VenueError && error.kind === "CREDENTIAL_REJECTED") return refusal;
    return new VenueError(
      "UNAVAILABLE",
      `${refusal.message}; not confirmed, the key's restrictions could not be read`,
      { providerId: PROVIDER_ID, venueCode: CODES.rejectedKey },
    );
  }
  if (!restrictions.enableFutures) {
    return new VenueError("CREDENTIAL_REJECTED", `${refusal.message}; the key no longer has the futures permission`, {
      providerId: PROVIDER_ID,
      venueCode: CODES.rejectedKey,
    });
  }
  return new VenueError(
    "RATE_LIMITED",
    `${refusal.message}; the key is valid and may trade futures, so the venue blocked it for a while`,
    { providerId: PROVIDER_ID, venueCode: CODES.rejectedKey, retryAfterMs: TEMPORARY_BLOCK_RETRY_MS },
  );
}
