/**
 * Composition root: config -> database (migrate) -> venues -> app -> serve -> jobs,
 * and on SIGTERM/SIGINT the way back (domain/lifecycle.ts). Nothing here
 * decides anything; it only wires.
 */
import type { Hono } from "hono";
import { ConfigError, dataDirOf, parseConfig, withQaSecrets } from "./config.ts";
import { openDatabase } from "./db/client.ts";
import { TestableClock } from "./domain/clock.ts";
import type { Deps } from "./domain/context.ts";
import { Lifecycle } from "./domain/lifecycle.ts";
import { createLogger, errorFields } from "./domain/logger.ts";
import { restoreTestClock } from "./domain/qa/test_clock.ts";
import { DEMO_STRATEGY_ID, publishQaDemoCatalog } from "./domain/qa/demo_catalog.ts";
import { createSecretBox } from "./domain/secrets/secret_box.ts";
import { VenueAvailability } from "./domain/venues/call_venue.ts";
import { createCaches } from "./domain/cache.ts";
import { createRateLimiter } from "./domain/usage/rate_limiter.ts";
import { JOBS, registerJobs } from "./jobs/registry.ts";
import { startStateGauges } from "./domain/telemetry/state_gauges.ts";
import { warnOnBuilderStanding } from "./domain/gates/builder_standing.ts";
import { WebhookWorker } from "./domain/webhooks/worker.ts";
import { createApp } from "./routes/app.ts";
import { createEgressBudgets } from "./domain/venues/egress_budget.ts";
import { databaseSignerNonces } from "./domain/venues/signer_nonces.ts";
import { createVenueRegistry } from "./venues/registry.ts";
import { createQaSimulators } from "./venues/sim/qa.ts";
import { outboundPolicy } from "./domain/outbound/outbound_policy.ts";
import { OutboundClient } from "./domain/outbound/outbound_client.ts";
import { AccountPushKeeper } from "./domain/execution/account_pushes.ts";

let parsed;
try {
  parsed = parseConfig(Deno.env.toObject());
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  Deno.exit(1);
}
const { config, created } = await withQaSecrets(parsed, dataDirOf(parsed));
const logger = createLogger(config.logLevel);
const db = await openDatabase(config.databaseUrl, { authToken: config.databaseAuthToken });
const testClock = config.serviceEnv === "qa" ? new TestableClock() : undefined;
if (testClock) {
  await restoreTestClock(db, testClock);
  if (await publishQaDemoCatalog(db, testClock.now())) {
    console.error(`QA: published the demo strategy "${DEMO_STRATEGY_ID}".`);
  }
}
const secrets = await createSecretBox(config.masterKey!, config.previousMasterKeys);

const simulate = config.serviceEnv === "qa";
const qaSimulators = simulate ? createQaSimulators(config) : null;
const simulators: Record<string, Hono> = qaSimulators
  ? { "venue-a": qaSimulators.venueA, "venue-a-spot": qaSimulators.venueASpot, "venue-b": qaSimulators.venueB }
  : {};
const venueUrls = {
  venueA: config.venueAUrl ?? `http://${config.host}:${config.port}/sim/venue-a`,
  venueASpot: config.venueASpotUrl ?? `http://${config.host}:${config.port}/sim/venue-a-spot`,
  venueB: config.venueBUrl ?? `http://${config.host}:${config.port}/sim/venue-b`,
  venueAStream: config.venueAStreamUrl,
  venueBStream: config.venueBStreamUrl,
};
const egressBudgets = createEgressBudgets(db, config);
const venues = createVenueRegistry(
  { ...venueUrls, venueBMainnet: config.venueBMainnet },
  secrets,
  egressBudgets,
  databaseSignerNonces(db),
);

const deps: Deps = {
  config,
  db,
  clock: testClock ?? { now: () => Date.now() },
  testClock,
  venues,
  egressBudgets,
  simulatorUrls: simulate ? venueUrls : undefined,
  venueAvailability: new VenueAvailability(),
  caches: createCaches(),
  secrets,
  logger,
  rateLimiter: createRateLimiter(db, (error) => logger.error("usage flush failed", errorFields(error))),
  outbound: new OutboundClient(outboundPolicy(config)),
};
const app = createApp(deps, { simulators });

const lifecycle = new Lifecycle();
const server = Deno.serve({
  hostname: config.host,
  port: config.port,
  onListen: ({ hostname, port }) => {
    logger.info("listening", { url: `http://${hostname}:${port}`, env: config.serviceEnv });
    // After listening: in QA the venue simulators are served by this very server.
    void warnOnBuilderStanding(deps);
    for (const path of created) {
      console.error(`Generated ${path.split("/").pop()}: see ${path} (kept for next starts).`);
    }
    if (config.serviceEnv === "qa") console.error(`Operator token: in ${dataDirOf(config)}/operator_token`);
  },
}, lifecycle.countRequests(app.fetch));

registerJobs(deps, lifecycle.gateJobRun);
startStateGauges(deps, JOBS);
// New events reach partners' webhooks within seconds of their commit.
const webhookWorker = new WebhookWorker({
  ...deps,
  actor: { kind: "system", job: "webhook-delivery" },
  requestId: "webhook-worker",
});
webhookWorker.start();
// One instance of the fleet keeps the venues' account pushes; the others stand by for its lease.
const pushKeeper = new AccountPushKeeper({
  ...deps,
  actor: { kind: "system", job: "account-pushes" },
  requestId: "account-pushes",
});
pushKeeper.start();

lifecycle.shutDownOn(["SIGTERM", "SIGINT"], {
  server,
  rateLimiter: deps.rateLimiter,
  db,
  logger,
  graceSeconds: config.shutdownGraceSeconds,
  background: [webhookWorker, pushKeeper],
});
