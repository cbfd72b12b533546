/**
 * Building the venue adapters from configuration. In QA without venue URLs the
 * adapters talk to the in-process simulators over real HTTP, through exactly
 * the code path that talks to the real venues.
 */
import type { SecretOpener, VenueRegistry } from "./types.ts";
import { createVenueAAdapter } from "./venue_a/adapter.ts";
import { createVenueBAdapter } from "./venue_b/adapter.ts";

export interface VenueUrls {
  venueA: string;
  venueB: string;
  /** VENUE_B signs for mainnet or testnet; simulators behave as mainnet. */
  venueBMainnet: boolean;
}

export function createVenueRegistry(urls: VenueUrls, secrets: SecretOpener): VenueRegistry {
  return {
    VENUE_A: createVenueAAdapter({ baseUrl: urls.venueA, secrets }),
    VENUE_B: createVenueBAdapter({ baseUrl: urls.venueB, secrets, isMainnet: urls.venueBMainnet }),
  };
}
