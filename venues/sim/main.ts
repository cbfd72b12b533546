/**
 * Standalone runner of both venue simulators (`deno task sim`): VENUE_A under
 * /sim/venue-a and VENUE_B under /sim/venue-b, on 127.0.0.1:$PORT (8090).
 */
import { Hono } from "hono";
import { createVenueASimulator } from "./venue_a/mod.ts";
import { createVenueBSimulator } from "./venue_b/mod.ts";

const port = Number(Deno.env.get("PORT") ?? "8090");
if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`PORT must be a TCP port: "${port}"`);

const app = new Hono();
app.route("/sim/venue-a", createVenueASimulator());
app.route("/sim/venue-b", createVenueBSimulator());

Deno.serve({
  hostname: "127.0.0.1",
  port,
  onListen: ({ hostname, port }) =>
    console.log(`Venue simulators on http://${hostname}:${port}/sim/venue-a and /sim/venue-b`),
}, app.fetch);
