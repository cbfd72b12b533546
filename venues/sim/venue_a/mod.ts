/**
 * VENUE_A simulator entry: `createVenueASimulator()` returns the futures and
 * spot hosts as Hono apps to mount (e.g. at `/sim/venue-a` and
 * `/sim/venue-a-spot`) or serve on their own.
 */
export { createVenueASimulator, type VenueASimulator, type VenueASimulatorOptions } from "./app.ts";
