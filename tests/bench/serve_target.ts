/**
 * A benchmark target in its own process, so the load generator does not share
 * its event loop: `bare` is a plain Deno.serve JSON handler; `hono` a minimal
 * Hono app with one middleware (the framework's own floor), `hono-request-id`
 * the same answering with an X-Request-Id header; `app` is the full
 * service on a fresh database with one partner and `clients` clients (and
 * their creation events: seed_clients.ts).
 * Prints one JSON line `{port, auth, userId, databaseUrl}` when ready.
 */
import { Hono } from "hono";
import { parseConfig } from "../../config.ts";
import { openDatabase } from "../../db/client.ts";
import { TestableClock } from "../../domain/clock.ts";
import type { Deps } from "../../domain/context.ts";
import { createLogger } from "../../domain/logger.ts";
import { createPartner } from "../../domain/partners/create_partner.ts";
import { createSecretBox } from "../../domain/secrets/secret_box.ts";
import { createCaches } from "../../domain/cache.ts";
import { createRateLimiter } from "../../domain/usage/rate_limiter.ts";
import { VenueAvailability } from "../../domain/venues/call_venue.ts";
import { createApp } from "../../routes/app.ts";
import { createEgressBudgets } from "../../domain/venues/egress_budget.ts";
import { databaseSignerNonces } from "../../domain/venues/signer_nonces.ts";
import { createVenueRegistry } from "../../venues/registry.ts";
import { seedClients } from "./seed_clients.ts";
import { benchPartnerInput } from "./targets.ts";
import { outboundPolicy } from "../../domain/outbound/outbound_policy.ts";
import { OutboundClient } from "../../domain/outbound/outbound_client.ts";

const [mode, clientCount = "0"] = Deno.args;

if (mode === "bare") {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => Response.json({ api: "UP", providers: [], requestId: crypto.randomUUID() }),
  );
  console.log(JSON.stringify({ port: server.addr.port }));
} else if (mode === "hono" || mode === "hono-request-id") {
  // (b) the framework's own floor: one middleware, c.json. (b') the same, answering as every answer of
  // the service must, with an X-Request-Id header (in a plain header record, as routes/respond.ts does).
  const app = new Hono();
  app.use("*", async (_c, next) => {
    await next();
  });
  app.get("/", (c) => {
    const body = { api: "UP", providers: [], requestId: crypto.randomUUID() };
    if (mode === "hono") return c.json(body);
    return new Response(JSON.stringify(body), {
      headers: { "content-type": "application/json", "x-request-id": body.requestId },
    });
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
  console.log(JSON.stringify({ port: server.addr.port }));
} else {
  const dir = await Deno.makeTempDir({ prefix: "svc-bench-" });
  const config = parseConfig({
    DATABASE_URL: `file:${dir}/bench.db`,
    OPERATOR_TOKEN: "bench-operator-token-0123456789abcdef",
    MASTER_KEY: btoa(String.fromCharCode(...new Uint8Array(32).fill(1))),
    LOG_LEVEL: "error",
  });
  const db = await openDatabase(config.databaseUrl);
  const secrets = await createSecretBox(config.masterKey!, config.previousMasterKeys);
  const logger = createLogger("error");
  const egressBudgets = createEgressBudgets(db, config);
  const deps: Deps = {
    config,
    db,
    clock: new TestableClock(),
    venues: createVenueRegistry(
      {
        venueA: "http://127.0.0.1:9",
        venueASpot: "http://127.0.0.1:9",
        venueB: "http://127.0.0.1:9",
        venueBMainnet: config.venueBMainnet,
      },
      secrets,
      egressBudgets,
      databaseSignerNonces(db),
    ),
    egressBudgets,
    venueAvailability: new VenueAvailability(),
    caches: createCaches(),
    secrets,
    logger,
    rateLimiter: createRateLimiter(db, () => {}),
    outbound: new OutboundClient(outboundPolicy(config)),
  };
  const { partner, credential } = await createPartner({
    ctx: { ...deps, actor: { kind: "operator" }, requestId: "bench" },
    input: benchPartnerInput(100_000_000),
  });
  const total = Number(clientCount);
  await seedClients(db, partner.partnerId, total, Date.now());
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, createApp(deps).fetch);
  console.log(JSON.stringify({
    port: server.addr.port,
    auth: `Basic ${btoa(`${credential.clientId}:${credential.clientSecret}`)}`,
    userId: total ? `user-${Math.floor(total / 2)}` : null,
    databaseUrl: config.databaseUrl,
    partnerId: partner.partnerId,
  }));
}

// Leave through exit() so `--cpu-prof` (used when profiling a target) writes its profile.
for (const signal of ["SIGTERM", "SIGINT"] as const) Deno.addSignalListener(signal, () => Deno.exit(0));
