/**
 * A complete service for one test: a fresh libSQL file, the real app, a
 * frozen test clock, and both venue simulators served on loopback with the real
 * adapters pointed at them. Always `await env.close()` (sanitizers check it):
 * it also fails the test when the service's log holds any secret the test
 * handled (the configured keys, and every secret field the helpers in http.ts
 * saw go in or come out).
 */
import { type Config, parseConfig } from "../../config.ts";
import { type Database, openDatabase } from "../../db/client.ts";
import { TestableClock } from "../../domain/clock.ts";
import type { Deps } from "../../domain/context.ts";
import { createLogger, errorFields } from "../../domain/logger.ts";
import { createSecretBox } from "../../domain/secrets/secret_box.ts";
import { VenueAvailability } from "../../domain/venues/call_venue.ts";
import { createEgressBudgets } from "../../domain/venues/egress_budget.ts";
import { databaseSignerNonces } from "../../domain/venues/signer_nonces.ts";
import { createCaches } from "../../domain/cache.ts";
import { createRateLimiter } from "../../domain/usage/rate_limiter.ts";
import { createApp } from "../../routes/app.ts";
import { createVenueRegistry } from "../../venues/registry.ts";
import { createQaSimulators } from "../../venues/sim/qa.ts";
import { SecretWatch } from "./secret_watch.ts";
import { type OutboundPolicy, outboundPolicy } from "../../domain/outbound/outbound_policy.ts";
import { OutboundClient } from "../../domain/outbound/outbound_client.ts";

export const OPERATOR_TOKEN = "test-operator-token-0123456789abcdef0123";
export const START = Date.parse("2026-11-02T10:00:00.000Z");

export interface TestEnv {
  app: ReturnType<typeof createApp>;
  deps: Deps;
  clock: TestableClock;
  databaseUrl: string;
  venueUrls: { venueA: string; venueB: string };
  /** Log lines written by the service during the test. */
  logs: string[];
  /** Secrets the test handled: `close()` checks that `logs` holds none of them. */
  watchedSecrets: SecretWatch;
  close(): Promise<void>;
}

export interface TestEnvOptions {
  /** Reuse a database file (e.g. to test a restart). */
  databaseUrl?: string;
  env?: Record<string, string>;
  /** The database engine (default: chosen by the URL, i.e. embedded). */
  engine?: "embedded" | "client";
  /**
   * Venue simulators already running elsewhere (a benchmark runs them in a
   * process of their own, as real venues are); default: served in this process.
   */
  venues?: { venueA: string; venueASpot: string; venueB: string };
  /** How partner URLs resolve and which roots their TLS trusts (a test's own resolver and CA). */
  outbound?: Partial<OutboundPolicy>;
  /** Add test-only routes before the first request builds the router. */
  extend?: (app: ReturnType<typeof createApp>) => void;
}

function serve(handler: (request: Request) => Response | Promise<Response>) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler);
  return { server, url: `http://127.0.0.1:${server.addr.port}` };
}

export async function startTestEnv(options: TestEnvOptions = {}): Promise<TestEnv> {
  const databaseUrl = options.databaseUrl ?? `file:${await Deno.makeTempDir({ prefix: "svc-test-" })}/service.db`;
  const config: Config = parseConfig({
    SERVICE_ENV: "qa",
    DATABASE_URL: databaseUrl,
    OPERATOR_TOKEN,
    MASTER_KEY: btoa(String.fromCharCode(...new Uint8Array(32).fill(7))),
    LOG_LEVEL: "warn",
    ...options.env,
  });
  const db: Database = await openDatabase(config.databaseUrl, { engine: options.engine });
  const clock = new TestableClock();
  clock.freeze(START);
  const logs: string[] = [];
  const logger = createLogger("debug", (line) => logs.push(line));
  const watch = new SecretWatch();
  watch.add("OPERATOR_TOKEN", config.operatorToken);
  watch.add("MASTER_KEY", config.masterKey);
  for (const key of config.previousMasterKeys) watch.add("MASTER_KEYS_PREVIOUS", key);
  watch.add("DATABASE_AUTH_TOKEN", config.databaseAuthToken);
  const secrets = await createSecretBox(config.masterKey!, config.previousMasterKeys);
  const simulators = options.venues ? null : createQaSimulators(config);
  const servers = simulators
    ? [serve(simulators.venueA.fetch), serve(simulators.venueASpot.fetch), serve(simulators.venueB.fetch)]
    : [];
  const [venueA, venueASpot, venueB] = options.venues
    ? [{ url: options.venues.venueA }, { url: options.venues.venueASpot }, { url: options.venues.venueB }]
    : servers;
  const egressBudgets = createEgressBudgets(db, config);
  const deps: Deps = {
    config,
    db,
    clock,
    testClock: clock,
    venues: createVenueRegistry(
      { venueA: venueA.url, venueASpot: venueASpot.url, venueB: venueB.url, venueBMainnet: config.venueBMainnet },
      secrets,
      egressBudgets,
      databaseSignerNonces(db),
    ),
    egressBudgets,
    simulatorUrls: { venueA: venueA.url, venueB: venueB.url },
    venueAvailability: new VenueAvailability(),
    caches: createCaches(),
    secrets,
    logger,
    rateLimiter: createRateLimiter(db, (error) => logger.error("usage flush failed", errorFields(error))),
    outbound: new OutboundClient(outboundPolicy(config, options.outbound)),
  };
  const app = createApp(deps, { checkResponses: true });
  options.extend?.(app);
  return {
    app,
    deps,
    clock,
    databaseUrl,
    venueUrls: { venueA: venueA.url, venueB: venueB.url },
    logs,
    watchedSecrets: watch,
    async close() {
      await deps.rateLimiter.flush();
      deps.outbound.close();
      for (const { server } of servers) await server.shutdown();
      db.close();
      watch.assertNotIn(logs, "The service's log");
    },
  };
}

/** A test env served over real HTTP on loopback, and how to stop both. */
export interface ServedTestEnv {
  env: TestEnv;
  origin: string;
  close(): Promise<void>;
}

/**
 * The test env behind a real HTTP server, with CONNECT_URL naming it, so a
 * hosted page opens from the very link the partner API answers (browser tests).
 */
/** `env`: variables besides CONNECT_URL (e.g. EGRESS_ADDRESSES). */
export async function startServedTestEnv(options: { env?: Record<string, string> } = {}): Promise<ServedTestEnv> {
  // The server must listen before the env exists (CONNECT_URL names its port): it serves the env's app once set.
  const serving: { app?: TestEnv["app"] } = {};
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request, info) => serving.app!.fetch(request, info),
  );
  const origin = `http://127.0.0.1:${server.addr.port}`;
  const env = await startTestEnv({ env: { ...options.env, CONNECT_URL: origin } });
  serving.app = env.app;
  return {
    env,
    origin,
    async close() {
      await server.shutdown();
      await env.close();
    },
  };
}
