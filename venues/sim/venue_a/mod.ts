/**
 * VENUE_A simulator entry: `createVenueASimulator()` returns a Hono app to
 * mount (e.g. at `/sim/venue-a`) or serve on its own.
 */
export { createVenueASimulator, type VenueASimulatorOptions } from "./app.ts";
