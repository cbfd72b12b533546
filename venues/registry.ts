/**
 * Building the venue adapters from configuration. In QA without venue URLs the
 * adapters talk to the in-process simulators over real HTTP, through exactly
 * the code path that talks to the real venues.
 */
import type { ProviderId, RequestBudget, SecretOpener, VenueRegistry } from "./types.ts";
import { createVenueAAdapter } from "./venue_a/adapter.ts";
import { createVenueBAdapter } from "./venue_b/adapter.ts";
import type { SignerNonces } from "./venue_b/nonces.ts";

export interface VenueUrls {
  /** VENUE_A's futures host. */
  venueA: string;
  /** VENUE_A's spot host, where the key-permission check lives. */
  venueASpot: string;
  venueB: string;
  /** Where each venue pushes account updates; default: the adapter's (its URL with a ws scheme). */
  venueAStream?: string;
  venueBStream?: string;
  /** VENUE_B signs for mainnet or testnet (the QA simulator is built for the same network). */
  venueBMainnet: boolean;
}

/**
 * `budgets`: each venue's request weight per egress, shared by the instances
 * (absent: only the adapter's own). `venueBNonces`: the nonces of the agents
 * the service signs with, shared by every instance that may sign for them.
 */
export function createVenueRegistry(
  urls: VenueUrls,
  secrets: SecretOpener,
  budgets: Record<ProviderId, RequestBudget> | undefined,
  venueBNonces: SignerNonces,
): VenueRegistry {
  return {
    VENUE_A: createVenueAAdapter({
      baseUrl: urls.venueA,
      spotBaseUrl: urls.venueASpot,
      streamUrl: urls.venueAStream,
      secrets,
      budget: budgets?.VENUE_A,
    }),
    VENUE_B: createVenueBAdapter({
      baseUrl: urls.venueB,
      streamUrl: urls.venueBStream,
      secrets,
      nonces: venueBNonces,
      isMainnet: urls.venueBMainnet,
      budget: budgets?.VENUE_B,
    }),
  };
}
