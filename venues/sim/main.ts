/**
 * Standalone runner of both venue simulators (`deno task sim`): VENUE_A's
 * futures host under /sim/venue-a and its spot host under /sim/venue-a-spot,
 * VENUE_B under /sim/venue-b, on 127.0.0.1:$PORT (8090), for the VENUE_B
 * network and builder the service's configuration names.
 */
import { Hono } from "hono";
import { parseConfig } from "../../config.ts";
import { createQaSimulators } from "./qa.ts";

const port = Number(Deno.env.get("PORT") ?? "8090");
if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`PORT must be a TCP port: "${port}"`);

// The same VENUE_B_NETWORK and builder as the QA service pointed at these simulators.
const simulators = createQaSimulators(parseConfig({ ...Deno.env.toObject(), PORT: undefined }));
const app = new Hono();
app.route("/sim/venue-a", simulators.venueA);
app.route("/sim/venue-a-spot", simulators.venueASpot);
app.route("/sim/venue-b", simulators.venueB);

Deno.serve({
  hostname: "127.0.0.1",
  port,
  onListen: ({ hostname, port }) =>
    console.log(`Venue simulators on http://${hostname}:${port}/sim/venue-a, /sim/venue-a-spot and /sim/venue-b`),
}, app.fetch);
