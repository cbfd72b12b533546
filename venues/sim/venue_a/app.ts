/**
 * The VENUE_A simulator: the venue's two hosts as Hono apps speaking its wire
 * protocol at its paths (relative to wherever each is mounted). As at the
 * real venue, the futures host (fapi.binance.com) serves `/fapi` only and the
 * spot host (api.binance.com) `/sapi` (the key-permission check; its `/api`
 * spot trading is not simulated); one state behind both, so a key works on
 * each. `/_control` lives on the futures host, and so does the user data
 * stream's WebSocket (fstream.binance.com's role: `/private/...`), so the
 * stream URL of a simulator is its futures base with a ws scheme.
 */
import { Hono } from "hono";
import { accountRoutes } from "./routes_account.ts";
import { controlRoutes } from "./routes_control.ts";
import { historyRoutes } from "./routes_history.ts";
import { orderRoutes } from "./routes_orders.ts";
import { publicRoutes } from "./routes_public.ts";
import { listenKeyRoutes, streamRoutes } from "./routes_stream.ts";
import { isSpotPath, runRoute } from "./route.ts";
import { createState } from "./state.ts";
import { createUserStreams } from "./user_stream.ts";

export interface VenueASimulatorOptions {
  /** The venue's clock, ms; tests pin it to check timestamp windows. */
  now?: () => number;
}

export interface VenueASimulator {
  /** fapi.binance.com's role: `/fapi/...`, fstream.binance.com's `/private/...`, plus the simulator's `/_control`. */
  futures: Hono;
  /** api.binance.com's role: `/sapi/...` only. */
  spot: Hono;
  /** Closes the user data stream's connections (a server shutdown waits for upgraded sockets otherwise). */
  close(): Promise<void>;
}

/** A fresh simulator with its own in-memory state. */
export function createVenueASimulator(options: VenueASimulatorOptions = {}): VenueASimulator {
  const state = createState(options.now ?? (() => Date.now()));
  const streams = createUserStreams(state);
  const futures = new Hono();
  const spot = new Hono();
  // Keys past their hour and connections past 24 hours go before anything reads them.
  futures.use("*", async (_c, next) => {
    streams.sweep();
    await next();
  });
  futures.route("/_control", controlRoutes(state, streams));
  futures.route("/", streamRoutes(streams));
  const specs = [
    ...publicRoutes(),
    ...orderRoutes(),
    ...accountRoutes(),
    ...historyRoutes(),
    ...listenKeyRoutes(streams),
  ];
  for (const spec of specs) {
    const host = isSpotPath(spec.path) ? spot : futures;
    host.on(spec.method, spec.path, (c) => runRoute(c, state, spec));
  }
  return { futures, spot, close: () => streams.close() };
}
