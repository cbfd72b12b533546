/**
 * Both venue simulators, as `venues/sim/main.ts` serves them, with each
 * venue's request weight counted on the venue's side of the wire: the
 * process the watch benchmark (watch_bench.ts) runs them in.
 *
 * - VENUE_A: the simulator charges its own IP weight (2,400 a minute, fixed
 *   minutes) and reports it in X-MBX-USED-WEIGHT-1M; this counts each
 *   request's weight by the simulator's own route table, keeps the highest
 *   header of each minute, and counts its 429 and 418 answers.
 * - VENUE_B: the simulator's own limits (limits.ts) are off here and the
 *   weight is counted on this side instead, with a limit the set-up phase
 *   can lift: 1,200 a minute per IP (any rolling minute), each request
 *   weighed as the venue documents it (`infoWeight`, `exchangeWeight`; the
 *   venue's extra weight per 20 items of a long history answer is not
 *   counted), refused with 429 beyond it.
 *
 * `GET /_bench/weights` answers the counts since the last
 * `POST /_bench/reset {venueBWeightPerMinute?}`, which also sets VENUE_B's
 * limit (a set-up phase lifts it, the measurement puts it back) and starts
 * VENUE_A's own minute over, so no set-up weight counts in the measurement.
 */
import { Hono } from "hono";
import { parseConfig } from "../../config.ts";
import { createVenueASimulator } from "../../venues/sim/venue_a/mod.ts";
import { createVenueBSimulator } from "../../venues/sim/venue_b/mod.ts";
import { rawParts } from "../../venues/sim/venue_a/auth.ts";
import { RequestParams } from "../../venues/sim/venue_a/params.ts";
import { type RouteSpec, WEIGHT_HEADER } from "../../venues/sim/venue_a/route.ts";
import { accountRoutes } from "../../venues/sim/venue_a/routes_account.ts";
import { historyRoutes } from "../../venues/sim/venue_a/routes_history.ts";
import { orderRoutes } from "../../venues/sim/venue_a/routes_orders.ts";
import { publicRoutes } from "../../venues/sim/venue_a/routes_public.ts";
import { listenKeyRoutes } from "../../venues/sim/venue_a/routes_stream.ts";
import type { UserStreams } from "../../venues/sim/venue_a/user_stream.ts";
import { exchangeWeight, infoWeight } from "../../venues/venue_b/client.ts";

/** The venue's published REST weight per minute per IP. */
export const VENUE_B_PUBLISHED_WEIGHT = 1200;

/** What one venue's side of the wire saw. */
export interface VenueWeights {
  limit: number;
  /** Weight per wall-clock second (epoch seconds), of requests the venue served. */
  perSecond: Record<string, number>;
  /** VENUE_A: the highest X-MBX-USED-WEIGHT-1M of each minute (epoch minutes), the venue's own count. */
  headerPerMinute: Record<string, number>;
  /** Answers 429 (too much weight) and 418 (banned). */
  refused: { 429: number; 418: number };
  /** By route (`GET /fapi/v3/account`, `info clearinghouseState`, ...): requests served and their weight. */
  byRoute: Record<string, { requests: number; weight: number }>;
}

function emptyWeights(limit: number): VenueWeights {
  return { limit, perSecond: {}, headerPerMinute: {}, refused: { 429: 0, 418: 0 }, byRoute: {} };
}

function charge(weights: VenueWeights, route: string, weight: number, now: number): void {
  const second = String(Math.floor(now / 1000));
  weights.perSecond[second] = (weights.perSecond[second] ?? 0) + weight;
  const counted = weights.byRoute[route] ??= { requests: 0, weight: 0 };
  counted.requests++;
  counted.weight += weight;
}

/** Weight served in the 60 seconds ending with the current one. */
function lastMinute(weights: VenueWeights, now: number): number {
  const second = Math.floor(now / 1000);
  let sum = 0;
  for (let s = second - 59; s <= second; s++) sum += weights.perSecond[String(s)] ?? 0;
  return sum;
}

const config = parseConfig({ ...Deno.env.toObject(), PORT: undefined });
const venueA = createVenueASimulator();
const venueB = createVenueBSimulator({
  isMainnet: config.venueBMainnet,
  wallets: [{ address: config.venueBBuilderAddress, usdc: "1000" }],
  // The weight is counted here, with a limit the set-up phase lifts: the simulator's own (limits.ts) stays off.
  limits: { enabled: false },
});

// The simulator's own weights, by method and path (the handlers are never called from here).
const specs = new Map<string, RouteSpec>();
for (
  const spec of [
    ...publicRoutes(),
    ...orderRoutes(),
    ...accountRoutes(),
    ...historyRoutes(),
    ...listenKeyRoutes(null as unknown as UserStreams),
  ]
) specs.set(`${spec.method} ${spec.path}`, spec);

let weights = { VENUE_A: emptyWeights(2400), VENUE_B: emptyWeights(VENUE_B_PUBLISHED_WEIGHT) };

const app = new Hono();
app.use("/sim/venue-a/*", async (c, next) => {
  const path = new URL(c.req.url).pathname.slice("/sim/venue-a".length);
  const spec = specs.get(`${c.req.method} ${path}`);
  if (!spec) return await next();
  const { query, body } = await rawParts(c.req.raw.clone());
  const weight = typeof spec.weight === "number" ? spec.weight : spec.weight(new RequestParams(query, body));
  await next();
  const counted = weights.VENUE_A;
  if (c.res.status === 429 || c.res.status === 418) {
    counted.refused[c.res.status]++;
    return;
  }
  const now = Date.now();
  charge(counted, `${c.req.method} ${path}`, weight, now);
  const used = Number(c.res.headers.get(WEIGHT_HEADER));
  const minute = String(Math.floor(now / 60_000));
  if (Number.isFinite(used)) counted.headerPerMinute[minute] = Math.max(counted.headerPerMinute[minute] ?? 0, used);
});
app.use("/sim/venue-b/*", async (c, next) => {
  const path = new URL(c.req.url).pathname.slice("/sim/venue-b".length);
  if (c.req.method !== "POST" || (path !== "/info" && path !== "/exchange")) return await next();
  let body: { type?: unknown; action?: { type?: unknown } };
  try {
    body = await c.req.raw.clone().json();
  } catch {
    return await next();
  }
  const route = path === "/info" ? `info ${String(body.type)}` : `exchange ${String(body.action?.type)}`;
  const weight = path === "/info" ? infoWeight(String(body.type)) : exchangeWeight(body.action);
  const counted = weights.VENUE_B;
  const now = Date.now();
  if (lastMinute(counted, now) + weight > counted.limit) {
    counted.refused[429]++;
    return c.text("Too many requests", 429, { "Retry-After": "1" });
  }
  charge(counted, route, weight, now);
  await next();
});
app.get("/_bench/weights", (c) => c.json(weights));
app.post("/_bench/reset", async (c) => {
  const { venueBWeightPerMinute } = await c.req.json().catch(() => ({}));
  // VENUE_A's simulator counts its minute itself: the set-up's weight must not spill into the first measured minute.
  const spent = await venueA.futures.request("/_control/weight-used", {
    method: "PUT",
    body: JSON.stringify({ pool: "futures", used: 0 }),
  });
  if (!spent.ok) return c.json({ error: await spent.text() }, 500);
  weights = {
    VENUE_A: emptyWeights(2400),
    VENUE_B: emptyWeights(Number(venueBWeightPerMinute ?? VENUE_B_PUBLISHED_WEIGHT)),
  };
  return c.json({ venueBWeightPerMinute: weights.VENUE_B.limit });
});
app.route("/sim/venue-a", venueA.futures);
app.route("/sim/venue-a-spot", venueA.spot);
app.route("/sim/venue-b", venueB);

const port = Number(Deno.env.get("PORT") ?? "0");
Deno.serve({
  hostname: "127.0.0.1",
  port,
  onListen: ({ hostname, port }) =>
    console.log(`Venue simulators on http://${hostname}:${port}/sim/venue-a, /sim/venue-a-spot and /sim/venue-b`),
}, app.fetch);
