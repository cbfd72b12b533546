/**
 * One span and one counted outcome per venue call, around the venue
 * client's whole call (retries and clock resyncs included; each HTTP attempt
 * is Deno's own fetch span inside it). Attributes name the call, never its
 * parameters: a signed query or body carries the account's key and signature.
 */
import { errorType, inSpan } from "./tracing.ts";
import { venueRequestCount } from "./metrics.ts";

export interface VenueCall {
  venue: "VENUE_A" | "VENUE_B";
  /** `METHOD /path` (VENUE_A) or `/info`, `/exchange` (VENUE_B). */
  endpoint: string;
  /** Request weight the venue charges (before any answer-dependent extra). */
  weight: number;
  /** VENUE_B: the info request type or the exchange action type. */
  type?: string;
}

export function observeVenueCall<T>(call: VenueCall, work: () => Promise<T>): Promise<T> {
  const attributes = {
    "venue": call.venue,
    "venue.endpoint": call.endpoint,
    "venue.weight": call.weight,
    ...(call.type === undefined ? {} : { "venue.request.type": call.type }),
  };
  return inSpan(`${call.venue} ${call.endpoint}`, attributes, async (span) => {
    const counted = { venue: call.venue, endpoint: call.endpoint, outcome: "ok" };
    try {
      const answer = await work();
      span.setAttribute("venue.outcome", "ok");
      return answer;
    } catch (error) {
      counted.outcome = errorType(error);
      span.setAttribute("venue.outcome", counted.outcome);
      throw error;
    } finally {
      venueRequestCount.add(1, counted);
    }
  });
}
