/**
 * Calling a venue from the domain: venue failures become the spec's errors
 * (PROVIDER_DOWN for an unreachable or uncertain venue) and the outcome feeds
 * the provider status shown by GET /v1/health.
 */
import type { ProviderId, VenueAdapter } from "../../venues/types.ts";
import { VenueError } from "../../venues/types.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";

/** Last observed reachability per provider, kept in memory by the running process. */
export class VenueAvailability {
  #down = new Set<ProviderId>();

  status(providerId: ProviderId): "AVAILABLE" | "UNAVAILABLE" {
    return this.#down.has(providerId) ? "UNAVAILABLE" : "AVAILABLE";
  }

  record(providerId: ProviderId, reachable: boolean): void {
    if (reachable) this.#down.delete(providerId);
    else this.#down.add(providerId);
  }
}

const UNCERTAIN_MESSAGE =
  "O provedor não confirmou o resultado: a ação pode ter sido executada. Consulte a intenção e reconcilie; não repita.";

/**
 * Run one adapter call. A lost answer to a mutation (OUTCOME_UNKNOWN) is an
 * uncertain PROVIDER_DOWN: final for the request's Idempotency-Key, so the
 * caller queries and reconciles instead of sending the action again.
 */
export async function callVenue<T>(
  ctx: Ctx,
  providerId: ProviderId,
  call: (venue: VenueAdapter) => Promise<T>,
): Promise<T> {
  try {
    const result = await call(ctx.venues[providerId]);
    ctx.venueAvailability.record(providerId, true);
    return result;
  } catch (error) {
    if (!(error instanceof VenueError)) throw error;
    const unreachable = error.kind === "UNAVAILABLE" || error.kind === "OUTCOME_UNKNOWN";
    ctx.venueAvailability.record(providerId, !unreachable);
    ctx.logger.warn("venue call failed", {
      requestId: ctx.requestId,
      providerId,
      kind: error.kind,
      code: error.detail.venueCode,
    });
    if (error.kind === "OUTCOME_UNKNOWN") {
      throw new ApiError("PROVIDER_DOWN", { message: UNCERTAIN_MESSAGE, uncertain: true });
    }
    if (unreachable || error.kind === "RATE_LIMITED") throw new ApiError("PROVIDER_DOWN");
    throw error;
  }
}
