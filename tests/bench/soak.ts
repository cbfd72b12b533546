/**
 * `deno task soak` (SOAK_MINUTES, default 10): the service as its own process
 * (tests/_helpers/server.ts) beside the venue simulators in theirs, under
 * three loads at once for the whole time: signals fanned out to connected
 * simulator accounts, whose positions open, are protected and close
 * (soak_trading.ts; SOAK_ACCOUNTS, default 100, half at each venue); a
 * registered webhook endpoint receiving the partner's events; and a moderate
 * partner mix (partner_mix_paced.lua, 4 connections pausing SOAK_PAUSE_MS,
 * default 20, before each request) over SOAK_CLIENTS (default 10,000) clients.
 * Every SOAK_SAMPLE_SECONDS (default 5) it samples the service process's RSS
 * and open descriptors; at the end it prints the samples' summary, the work
 * done, and a verdict: exit 1 when memory or descriptors grew (process_sampler.ts)
 * or when a load stopped doing its work.
 */
import { billingContract } from "../performance/trade_fixture.ts";
import { sql } from "drizzle-orm";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner } from "../_helpers/http.ts";
import { freePort, waitUntilUp, WatchedService } from "../_helpers/server.ts";
import { PACED_MIX_SCRIPT, parseMix } from "./partner_mix.ts";
import { judgeGrowth, type ProcessSample, sampleProcess } from "./process_sampler.ts";
import { openTrading, seedTraders, venueACredentials, venueBCredentials } from "./seed_accounts.ts";
import { seedClients } from "./seed_clients.ts";
import { startSimulatorProcess } from "./simulator_process.ts";
import { TradingLoad } from "./soak_trading.ts";
import { ensureWrk, runWrk } from "./wrk.ts";

const number = (name: string, fallback: number) => Number(Deno.env.get(name) ?? fallback);
const MINUTES = number("SOAK_MINUTES", 10);
const ACCOUNTS = number("SOAK_ACCOUNTS", 100);
const CLIENTS = number("SOAK_CLIENTS", 10_000);
const PAUSE_MS = number("SOAK_PAUSE_MS", 20);
const SAMPLE_SECONDS = number("SOAK_SAMPLE_SECONDS", 5);
const CYCLE_SECONDS = 20;
/** JIT, statement caches, connection pools and V8's heap reach their working size first. */
const WARMUP_SECONDS = Math.min(120, MINUTES * 60 * 0.2);
const LIMITS = { warmupSeconds: WARMUP_SECONDS, rssTolerance: 0.1, fdTolerance: 10 };
const LIFTED = { VENUE_A_IP_WEIGHT_PER_MINUTE: "100000000", VENUE_B_IP_WEIGHT_PER_MINUTE: "100000000" };
/** The partner's webhook receiver runs on this machine. */
const LOOPBACK_RECEIVER = { OUTBOUND_ALLOW_LOOPBACK: "true" };

await ensureWrk();
const venues = await startSimulatorProcess();
// The simulator's VENUE_B rate limits (on by default, at the venue's values) lifted with the service's budgets.
await fetch(`${venues.urls.venueB}/_control/limits`, { method: "PUT", body: JSON.stringify({ enabled: false }) })
  .then((response) => response.body?.cancel());
// The database is written here first (partner, traders, clients), then served by the service's own process.
const env = await startTestEnv({ env: { ...LIFTED, ...LOOPBACK_RECEIVER }, venues: venues.urls });
env.clock.freeze(null); // the service runs on real time: so must what is written for it
const partner = await createPartner(env, {
  partnerId: "soak",
  contract: billingContract({ carryPolicy: "NO_CARRY" }),
  limits: { requestsPerMinute: 1_000_000, ordersPerMinute: 1_000_000 },
});
await openTrading(env, venues.urls);
const now = Date.now();
for (const providerId of ["VENUE_A", "VENUE_B"] as const) {
  const count = providerId === "VENUE_A" ? Math.ceil(ACCOUNTS / 2) : Math.floor(ACCOUNTS / 2);
  // One simulator account per client: positions and their closes are each client's own.
  const credentials = providerId === "VENUE_A"
    ? await venueACredentials(venues.urls, env, count)
    : await venueBCredentials(venues.urls, env, count);
  await seedTraders(env, { partnerId: "soak", providerId, count, credentials, now, autoBreakEven: true });
}
await seedClients(env.deps.db, "soak", CLIENTS, now);

const service = new WatchedService({
  PORT: String(freePort()),
  DATABASE_URL: env.databaseUrl,
  OPERATOR_TOKEN: env.deps.config.operatorToken!,
  MASTER_KEY: env.deps.config.masterKey!,
  VENUE_A_URL: venues.urls.venueA,
  VENUE_A_SPOT_URL: venues.urls.venueASpot,
  VENUE_B_URL: venues.urls.venueB,
  LOG_LEVEL: "warn",
  ...LIFTED,
  ...LOOPBACK_RECEIVER,
});
service.secrets.add("clientSecret", partner.clientSecret); // checked against the service's output at the end
await waitUntilUp(service.url);

// The partner's webhook endpoint: answers at once, counts what it receives.
const received = { deliveries: 0, byType: {} as Record<string, number> };
const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
  await request.arrayBuffer();
  const type = request.headers.get("x-svc-event-type") ?? "?";
  received.deliveries++;
  received.byType[type] = (received.byType[type] ?? 0) + 1;
  return new Response("ok");
});
const registered = await fetch(`${service.url}/operator/v1/partners/soak/webhook`, {
  method: "PUT",
  headers: { authorization: `Bearer ${env.deps.config.operatorToken}`, "content-type": "application/json" },
  body: JSON.stringify({ url: `http://127.0.0.1:${receiver.addr.port}/hooks` }),
});
if (!registered.ok) throw new Error(`The webhook was not registered: ${await registered.text()}`);
await registered.body?.cancel();

const runId = crypto.randomUUID().slice(0, 8);
const started = Date.now();
const until = started + MINUTES * 60_000;
const elapsed = () => (Date.now() - started) / 1000;
console.log(
  `soak ${runId}: ${MINUTES} min, service pid ${service.child.pid} at ${service.url}; ${ACCOUNTS} trading accounts, ` +
    `${CLIENTS.toLocaleString("en")} clients; a signal cycle every ${CYCLE_SECONDS} s; mix: 4 connections, ` +
    `${PAUSE_MS} ms pause; warm-up ${WARMUP_SECONDS} s`,
);

const trading = new TradingLoad(service.url, env.deps.config.operatorToken!, venues.urls, runId);
const mix = { runs: 0, requests: 0, errors: 0, socketErrors: 0, firstError: undefined as string | undefined };
/** The mix in chunks of at most a minute, so its progress can be shown while the soak runs. */
async function mixLoad() {
  for (let chunk = 0; Date.now() < until - 5_000; chunk++) {
    const result = await runWrk(`${service.url}/`, {
      headers: partner.headers,
      seconds: Math.min(60, Math.floor((until - Date.now()) / 1000)),
      threads: 1,
      connections: 4,
      script: PACED_MIX_SCRIPT,
      scriptArgs: [`${runId}-${chunk}`, String(CLIENTS), "mix", String(PAUSE_MS)],
    });
    const parsed = parseMix(result.output);
    mix.runs++;
    mix.requests += result.requests;
    mix.errors += [...parsed.routes.values()].reduce((sum, route) => sum + route.errors, 0);
    mix.socketErrors += result.socketErrors;
    mix.firstError ??= parsed.firstError;
  }
}

/** Rows of a count query, each as one line of its values. */
const count = async (query: ReturnType<typeof sql>) =>
  (await env.deps.db.read.all<Record<string, string | number>>(query)).map((row) => Object.values(row).join(" "));
const samples: ProcessSample[] = [];
let samplingProblem: string | undefined;
const sampler = setInterval(async () => {
  let sample: ProcessSample;
  try {
    sample = await sampleProcess(service.child.pid, elapsed());
  } catch (error) {
    samplingProblem ??= `the service could not be sampled at ${elapsed().toFixed(0)} s: ${error}`;
    return;
  }
  samples.push(sample);
  const [pending] = await count(sql`SELECT count(*) FROM webhook_deliveries WHERE status = 'PENDING'`);
  const t = trading.counts;
  console.log(
    `t=${sample.atSeconds.toFixed(0).padStart(4)} s  rss ${sample.rssMiB.toFixed(1).padStart(6)} MiB (anon ${
      sample.anonMiB.toFixed(1)
    }, file ${sample.fileMiB.toFixed(1)})  fds ${
      String(sample.fds).padStart(4)
    }   cycles ${t.cycles}, entries ${t.dispatched}, closed ${t.positionsClosed}, deliveries ${received.deliveries} (${pending} waiting), ` +
      `mix requests ${mix.requests} (${mix.runs} finished minutes)`,
  );
}, SAMPLE_SECONDS * 1000);

await Promise.all([trading.run(until, CYCLE_SECONDS), mixLoad()]);
clearInterval(sampler);
await new Promise((resolve) => setTimeout(resolve, 2_000)); // the last deliveries of the last cycle

const stored = {
  intents: await count(sql`SELECT type, status, count(*) FROM intents GROUP BY type, status ORDER BY type, status`),
  positions: await count(sql`SELECT status, count(*) FROM positions GROUP BY status`),
  deliveries: await count(sql`SELECT status, count(*) FROM webhook_deliveries GROUP BY status`),
  events: await count(sql`SELECT count(*) FROM events WHERE partner_id = 'soak'`),
};
let stopProblem: string | undefined;
try {
  const { status } = await service.stop("SIGTERM");
  if (!status.success) stopProblem = `the service exited with ${status.code} on SIGTERM`;
} catch (error) {
  stopProblem = String(error);
}
await receiver.shutdown();
await venues.stop();
await env.close();

const verdict = judgeGrowth(samples, LIMITS);
console.log(`\nservice process over ${(elapsed() / 60).toFixed(1)} min, ${samples.length} samples:`);
for (const [i, third] of verdict.thirds.entries()) {
  console.log(
    `  ${["first", "middle", "last"][i]} third (${third.fromSeconds.toFixed(0)}-${third.toSeconds.toFixed(0)} s): ` +
      `RSS median ${third.rssMedianMiB.toFixed(1)} MiB (max ${third.rssMaxMiB.toFixed(1)}; anon ${
        third.anonMedianMiB.toFixed(1)
      }, file ${third.fileMedianMiB.toFixed(1)}), ` +
      `fds median ${third.fdsMedian} (max ${third.fdsMax})`,
  );
}
const t = trading.counts;
console.log(`work done:
  signals ${t.signals} in ${t.cycles} cycles: ${t.admitted} admitted, ${t.dispatched} entries sent; refused ${
  JSON.stringify(t.refused)
}
  reconcile runs ${t.reconcileRuns}: ${t.positionsClosed} positions closed, ${t.stopsPlacedAgain} stops placed again
  orders on record (type status count): ${stored.intents.join("; ")}
  positions (status count): ${stored.positions.join("; ")}
  webhook deliveries received ${received.deliveries} ${JSON.stringify(received.byType)}; on record: ${
  stored.deliveries.join("; ")
}
  partner mix: ${mix.requests} requests in ${mix.runs} runs, ${mix.errors} answered >= 400, ${mix.socketErrors} socket errors${
  mix.firstError ? ` (first: ${mix.firstError})` : ""
}
  events of the partner: ${stored.events.join("")}; trading failures ${t.failures}${
  t.lastFailure ? ` (last: ${t.lastFailure})` : ""
}`);

// Honest only if every load kept working: a soak whose load stalled proves nothing about leaks.
const stalled = [
  t.positionsClosed === 0 && "no position closed",
  t.failures > 0 && `${t.failures} trading cycles failed`,
  received.deliveries === 0 && "no webhook delivery received",
  mix.requests === 0 && "no partner request done",
  mix.socketErrors > 0 && `${mix.socketErrors} socket errors in the mix`,
  stopProblem,
  samplingProblem,
].filter(Boolean);
const problems = [...verdict.reasons, ...stalled];
const waiting = received.deliveries && stored.deliveries.find((line) => line.startsWith("PENDING"));
// Not a process leak, so not the verdict; but a backlog that only grows is worth seeing next to it.
if (waiting) console.log(`\nnote: webhook deliveries still waiting at the end: ${waiting.split(" ")[1]}`);
console.log(
  problems.length
    ? `\nVERDICT: FAIL: ${problems.join("; ")}`
    : `\nVERDICT: PASS: after ${WARMUP_SECONDS} s of warm-up, the last third's medians are within ${
      LIMITS.rssTolerance * 100
    } % RSS (${((verdict.rssGrowth ?? 0) * 100).toFixed(1)} %) and ${LIMITS.fdTolerance} descriptors (${
      verdict.fdGrowth ?? 0
    }) of the first third's`,
);
Deno.exit(problems.length ? 1 : 0);
