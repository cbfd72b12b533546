/**
 * Partner-mix benchmark, run standalone with `deno run -A tests/bench/mix_bench.ts`
 * (MIX_CLIENTS, default 100,000; BENCH_SECONDS and BENCH_ROUNDS as in main.ts)
 * and by `deno task bench`: a partner with that many clients (and their
 * creation events) calls the service with the mix of partner_mix.lua (status,
 * automation and setup reads, performance and statements, new clients, setup
 * writes, the events feed) under `wrk -t2 -c32`, beside a bare Deno.serve of
 * the same run. Per route it prints the throughput and p50/p99 inside the mix
 * (timed by the script, per request) and the route alone at the same
 * connection count with its share of the bare figure: the mix says what a
 * partner sees, the route alone what the route costs.
 */
import { MIX_SCRIPT, parseMix, ROUTES } from "./partner_mix.ts";
import { median, row, startTarget, stopTarget } from "./targets.ts";
import { ensureWrk, runWrk, type WrkResult } from "./wrk.ts";

const CLIENTS = Number(Deno.env.get("MIX_CLIENTS") ?? "100000");
const SECONDS = Number(Deno.env.get("BENCH_SECONDS") ?? "10");
const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? "3");
/** A route alone needs less time than the mix for a steady figure: it has one kind of request. */
const ROUTE_SECONDS = Math.max(2, Math.ceil(SECONDS / 2));

const ms = (value: number) => value.toFixed(2).padStart(7);

await ensureWrk();
const setupStarted = performance.now();
const bare = await startTarget(["bare"]);
const app = await startTarget(["app", String(CLIENTS)]);
console.log(
  `${CLIENTS.toLocaleString("en")} clients and their events seeded, service up, in ${
    ((performance.now() - setupStarted) / 1000).toFixed(1)
  } s`,
);
const headers = { authorization: app.info.auth! };
const mixRun = (only: string, seconds: number) =>
  runWrk(`${app.url}/`, {
    headers,
    seconds,
    script: MIX_SCRIPT,
    scriptArgs: [crypto.randomUUID().slice(0, 8), String(CLIENTS), only],
  });
try {
  // Warm-up: JIT, statement caches, the partner snapshot, every route once.
  await mixRun("mix", 2);
  await runWrk(`${bare.url}/`, { seconds: 1 });

  console.log(
    `partner mix on loopback: wrk -t2 -c32, mix and bare ${SECONDS} s, each route alone ${ROUTE_SECONDS} s, ` +
      `median of ${ROUNDS} interleaved rounds\n`,
  );
  // The machine's speed drifts (a shared VM): every round measures everything, and the medians compare alike.
  const bareRuns: WrkResult[] = [];
  const mixRuns: WrkResult[] = [];
  const aloneRuns = new Map(Object.keys(ROUTES).map((name) => [name, [] as WrkResult[]]));
  for (let round = 0; round < ROUNDS; round++) {
    bareRuns.push(await runWrk(`${bare.url}/`, { seconds: SECONDS }));
    mixRuns.push(await mixRun("mix", SECONDS));
    for (const [name, runs] of aloneRuns) runs.push(await mixRun(name, ROUTE_SECONDS));
  }
  const bareMedian = median(bareRuns);
  const mixMedian = median(mixRuns);
  row("(a) bare Deno.serve JSON handler", bareMedian, bareMedian, "");
  row("the partner mix, all routes", mixMedian, bareMedian, "");
  const mix = parseMix(mixMedian.output);
  if (mix.unmatched) console.log(`  ${mix.unmatched} answers could not be matched to their request`);
  if (mix.firstError) console.log(`  first error in the mix: ${mix.firstError}`);

  console.log(
    `\n${"".padEnd(36)} ${"in the mix".padEnd(40)} alone\n${"route".padEnd(36)} ${
      "req/s   share    p50 ms   p99 ms  errors".padEnd(40)
    } req/s  % of (a)   p50 ms   p99 ms`,
  );
  for (const [name, label] of Object.entries(ROUTES)) {
    const inMix = mix.routes.get(name);
    const alone = median(aloneRuns.get(name)!);
    const share = inMix ? inMix.requests / [...mix.routes.values()].reduce((sum, r) => sum + r.requests, 0) : 0;
    const mixed = inMix
      ? `${(inMix.requests / mix.seconds).toFixed(0).padStart(5)} ${(share * 100).toFixed(0).padStart(5)} % ${
        ms(inMix.p50Ms)
      }  ${ms(inMix.p99Ms)} ${String(inMix.errors).padStart(7)}`
      : "(none)";
    const problems = alone.non2xx + alone.socketErrors
      ? `  (${alone.non2xx} non-2xx, ${alone.socketErrors} socket)`
      : "";
    console.log(
      `${label.padEnd(36)} ${mixed.padEnd(40)} ${alone.rps.toFixed(0).padStart(5)} ${
        (alone.rps / bareMedian.rps * 100).toFixed(1).padStart(7)
      } % ${ms(alone.p50Ms)}  ${ms(alone.p99Ms)}${problems}`,
    );
  }
  console.log("\nthe mix's throughput as a share of the same round's (a), round by round:");
  console.log(`  ${mixRuns.map((r, i) => `${(r.rps / bareRuns[i].rps * 100).toFixed(1)} %`).join("   ")}`);
} finally {
  await stopTarget(bare);
  await stopTarget(app);
}
