/**
 * `deno task bench`: every benchmark in one run, printing figures and ratios.
 *
 * HTTP: `wrk -t2 -c32` (a native load generator in its own process) against,
 * in the same run: (a) a bare Deno.serve JSON handler, (b) a minimal Hono app
 * with one middleware, (b') the same answering with X-Request-Id, and the
 * service with 100,000 clients: (c) authenticated GET /v1/health,
 * (d) GET /v1/users/:id/status, (e) GET /v1/users?limit=100, (f) POST /v1/users
 * creating new clients. Each figure is printed with its share of (a) and its
 * p99, as the median of interleaved rounds, and with the CPU its process
 * spent per request: throughput swings several points from round to round on
 * a shared machine, CPU per request much less, so the second table is the
 * steadier yardstick of a change. Then the per-query cost of an
 * indexed lookup through db/, the venue benchmarks, and the same signal
 * fanned out at both venues to 10,000 accounts (fanout_bench.ts), and a
 * performance period closed for 100,000 clients (period_close_bench.ts),
 * 10,000 events pushed to 50 webhook receivers (webhook_bench.ts), a
 * partner's mix of calls over 100,000 clients, per route (mix_bench.ts), the
 * same mix on a libSQL server, near and through a link delay
 * (instances_bench.ts with FLEET_DATABASE=server), and
 * last 10,000 accounts watched through the venues' pushes at their published
 * request budgets, with their targets (watch_bench.ts).
 */
import { median, row, startTarget, stopTarget, type Target } from "./targets.ts";
import { cpuSeconds } from "./process_sampler.ts";
import { ensureWrk, runWrk, type WrkOptions, type WrkResult } from "./wrk.ts";

const CREATE_SCRIPT = new URL("./create_users.lua", import.meta.url).pathname;
const SECONDS = Number(Deno.env.get("BENCH_SECONDS") ?? "10");
const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? "3");
const CLIENTS = 100_000;

await ensureWrk();
const bare = await startTarget(["bare"]);
const hono = await startTarget(["hono"]);
const honoRequestId = await startTarget(["hono-request-id"]);
const app = await startTarget(["app", String(CLIENTS)]);
const headers = { authorization: app.info.auth! };
const appUrl = `http://127.0.0.1:${app.info.port}`;
try {
  // Warm-up: JIT, statement caches, the partner snapshot.
  for (const path of ["/v1/health", `/v1/users/${app.info.userId}/status`, "/v1/users?limit=100"]) {
    await runWrk(appUrl + path, { headers, seconds: 1 });
  }
  await runWrk(`http://127.0.0.1:${bare.info.port}/`, { seconds: 1 });
  await runWrk(`http://127.0.0.1:${hono.info.port}/`, { seconds: 1 });
  await runWrk(`http://127.0.0.1:${honoRequestId.info.port}/`, { seconds: 1 });

  console.log(
    `HTTP on loopback: wrk -t2 -c32, ${SECONDS} s each, median of ${ROUNDS} interleaved rounds, ${
      CLIENTS.toLocaleString("en")
    } clients in the database\n`,
  );
  const targets: {
    label: string;
    note: string;
    url: string;
    process?: Target;
    options?: Partial<WrkOptions>;
  }[] = [
    { label: "(a) bare Deno.serve JSON handler", note: "", url: `http://127.0.0.1:${bare.info.port}/`, process: bare },
    { label: "(b) Hono, one middleware", note: "", url: `http://127.0.0.1:${hono.info.port}/`, process: hono },
    {
      label: "(b') the same, with X-Request-Id",
      process: honoRequestId,
      note: "every answer of the service carries one",
      url: `http://127.0.0.1:${honoRequestId.info.port}/`,
    },
    {
      label: "(c) GET /v1/health (authenticated)",
      note: "target >= 40 %",
      url: `${appUrl}/v1/health`,
      options: { headers },
    },
    {
      label: "(d) GET /v1/users/:id/status",
      note: "target >= 30 %, p99 < 10 ms",
      url: `${appUrl}/v1/users/${app.info.userId}/status`,
      options: { headers },
    },
    {
      label: "(e) GET /v1/users?limit=100",
      note: "target >= 8 %",
      url: `${appUrl}/v1/users?limit=100`,
      options: { headers },
    },
    {
      label: "(f) POST /v1/users (new clients)",
      note: "target >= 2,000 created/s",
      url: `${appUrl}/v1/users`,
      options: { headers, script: CREATE_SCRIPT },
    },
  ];
  // The machine's speed drifts (a shared VM): every round measures every target, and the medians compare alike.
  const results = targets.map(() => [] as WrkResult[]);
  const cpuPerRequestUs = targets.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, target] of targets.entries()) {
      const scriptArgs = target.options?.script ? [crypto.randomUUID().slice(0, 8)] : undefined;
      const pid = (target.process ?? app).child.pid;
      const cpuBefore = await cpuSeconds(pid);
      const result = await runWrk(target.url, { seconds: SECONDS, ...target.options, scriptArgs });
      results[i].push(result);
      cpuPerRequestUs[i].push((await cpuSeconds(pid) - cpuBefore) * 1e6 / result.requests);
    }
  }
  const medians = results.map(median);
  for (const [i, target] of targets.entries()) row(target.label, medians[i], medians[0], target.note);
  console.log("\nshare of the same round's (a), round by round:");
  for (const [i, target] of targets.entries()) {
    const shares = results[i].map((r, round) => `${(r.rps / results[0][round].rps * 100).toFixed(1)} %`);
    console.log(`  ${target.label.padEnd(40)} ${shares.join("   ")}`);
  }
  // The service's event loop is one thread: its CPU per request bounds its throughput whatever else runs meanwhile.
  const cpuMedians = cpuPerRequestUs.map((rounds) => [...rounds].sort((a, b) => a - b)[Math.floor(rounds.length / 2)]);
  // (a) is not bound by its own CPU (wrk and loopback are), so these compare changes, not shares.
  console.log("\nCPU of the serving process per request (median of rounds; each round):");
  for (const [i, target] of targets.entries()) {
    const rounds = cpuPerRequestUs[i].map((us) => us.toFixed(1)).join(" / ");
    console.log(`  ${target.label.padEnd(40)} ${cpuMedians[i].toFixed(1).padStart(7)} µs  (${rounds})`);
  }
} finally {
  for (const target of [bare, hono, honoRequestId, app]) await stopTarget(target);
}

console.log(
  "\nOne indexed lookup (client by partner and externalUserId, 100,000 clients); target <= 25 µs through db/:",
);
await new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", new URL("./query_cost.ts", import.meta.url).pathname, app.info.databaseUrl!, app.info.partnerId!],
  stdout: "inherit",
  stderr: "inherit",
}).output();

/** Each benchmark in its own process; the partner mix on a libSQL server is the instances bench's, one fleet of one. */
const benches: { script: string; env?: Record<string, string> }[] = [
  { script: "venue_a_bench.ts" },
  { script: "venue_b_bench.ts" },
  { script: "fanout_bench.ts" },
  { script: "period_close_bench.ts" },
  { script: "webhook_bench.ts" },
  { script: "mix_bench.ts" },
  { script: "instances_bench.ts", env: { FLEET_DATABASE: "server", INSTANCES_COUNTS: "1" } },
  { script: "watch_bench.ts" },
];
for (const { script, env } of benches) {
  console.log(`\n${script}${env ? ` (${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(" ")})` : ""}`);
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(`./${script}`, import.meta.url).pathname],
    env,
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (code !== 0) console.log(`${script} exited with ${code}`);
}
