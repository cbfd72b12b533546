/**
 * The simulators a QA service runs with, built from its configuration so both
 * sides agree: VENUE_B verifies signatures for the network the adapter signs
 * for, and the platform's builder starts funded (the venue refuses to let
 * clients approve a builder holding less than 100 USDC).
 */
import type { Hono } from "hono";
import type { Config } from "../../config.ts";
import { createVenueASimulator } from "./venue_a/mod.ts";
import { createVenueBSimulator } from "./venue_b/mod.ts";

export function createQaSimulators(config: Pick<Config, "venueBMainnet" | "venueBBuilderAddress">) {
  const venueA = createVenueASimulator();
  return {
    venueA: venueA.futures,
    venueASpot: venueA.spot,
    venueB: createVenueBSimulator({
      isMainnet: config.venueBMainnet,
      wallets: [{ address: config.venueBBuilderAddress, usdc: "1000" }],
    }) as Hono,
  };
}
