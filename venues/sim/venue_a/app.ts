/**
 * The VENUE_A simulator: a Hono app speaking the venue's wire protocol at the
 * venue's paths (relative to wherever it is mounted), plus `/_control`.
 */
import { Hono } from "hono";
import { accountRoutes } from "./routes_account.ts";
import { controlRoutes } from "./routes_control.ts";
import { historyRoutes } from "./routes_history.ts";
import { orderRoutes } from "./routes_orders.ts";
import { publicRoutes } from "./routes_public.ts";
import { runRoute } from "./route.ts";
import { createState } from "./state.ts";

export interface VenueASimulatorOptions {
  /** The venue's clock, ms; tests pin it to check timestamp windows. */
  now?: () => number;
}

/** A fresh simulator with its own in-memory state. */
export function createVenueASimulator(options: VenueASimulatorOptions = {}): Hono {
  const state = createState(options.now ?? (() => Date.now()));
  const app = new Hono();
  app.route("/_control", controlRoutes(state));
  for (const spec of [...publicRoutes(), ...orderRoutes(), ...accountRoutes(), ...historyRoutes()]) {
    app.on(spec.method, spec.path, (c) => runRoute(c, state, spec));
  }
  return app;
}
