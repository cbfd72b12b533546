/**
 * `deno task bench`: every benchmark in one run, printing figures and ratios.
 *
 * HTTP: `wrk -t2 -c32` (a native load generator in its own process) against,
 * in the same run: (a) a bare Deno.serve JSON handler, (b) a minimal Hono app
 * with one middleware, (b') the same answering with X-Request-Id, and the service with 100,000 clients: (c) authenticated
 * GET /v1/health, (d) GET /v1/users/:id/status, (e) GET /v1/users?limit=100,
 * (f) POST /v1/users creating new clients. Each figure is printed with its
 * share of (a) and its p99. Then the per-query cost of an indexed lookup
 * through db/, and the venue benchmarks.
 */
import { ensureWrk, runWrk, type WrkResult } from "./wrk.ts";

const TARGET = new URL("./serve_target.ts", import.meta.url).pathname;
const CREATE_SCRIPT = new URL("./create_users.lua", import.meta.url).pathname;
const SECONDS = Number(Deno.env.get("BENCH_SECONDS") ?? "10");
const CLIENTS = 100_000;

interface TargetInfo {
  port: number;
  auth?: string;
  userId?: string;
  databaseUrl?: string;
  partnerId?: string;
}

async function startTarget(args: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", TARGET, ...args],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`bench target ${args.join(" ")} exited early`);
    text += value;
  }
  reader.releaseLock();
  return { child, info: JSON.parse(text.split("\n")[0]) as TargetInfo };
}

async function stop(child: Deno.ChildProcess) {
  child.kill("SIGTERM");
  await child.status;
  await child.stdout.cancel().catch(() => {});
}

function row(label: string, result: WrkResult, bare: WrkResult, target: string) {
  const share = `${(result.rps / bare.rps * 100).toFixed(1)} %`;
  const problems = result.non2xx + result.socketErrors
    ? `  (${result.non2xx} non-2xx, ${result.socketErrors} socket errors)`
    : "";
  console.log(
    `${label.padEnd(40)} ${result.rps.toFixed(0).padStart(8)} req/s ${share.padStart(8)}  p50 ${
      result.p50Ms.toFixed(2).padStart(6)
    } ms  p99 ${result.p99Ms.toFixed(2).padStart(6)} ms   ${target}${problems}`,
  );
}

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
    `HTTP on loopback: wrk -t2 -c32, ${SECONDS} s each, ${CLIENTS.toLocaleString("en")} clients in the database\n`,
  );
  const base = await runWrk(`http://127.0.0.1:${bare.info.port}/`, { seconds: SECONDS });
  row("(a) bare Deno.serve JSON handler", base, base, "");
  row("(b) Hono, one middleware", await runWrk(`http://127.0.0.1:${hono.info.port}/`, { seconds: SECONDS }), base, "");
  row(
    "(b') the same, with X-Request-Id",
    await runWrk(`http://127.0.0.1:${honoRequestId.info.port}/`, { seconds: SECONDS }),
    base,
    "every answer of the service carries one",
  );
  row(
    "(c) GET /v1/health (authenticated)",
    await runWrk(`${appUrl}/v1/health`, { headers, seconds: SECONDS }),
    base,
    "target >= 40 %",
  );
  row(
    "(d) GET /v1/users/:id/status",
    await runWrk(`${appUrl}/v1/users/${app.info.userId}/status`, { headers, seconds: SECONDS }),
    base,
    "target >= 30 %, p99 < 10 ms",
  );
  row(
    "(e) GET /v1/users?limit=100",
    await runWrk(`${appUrl}/v1/users?limit=100`, { headers, seconds: SECONDS }),
    base,
    "target >= 8 %",
  );
  const creates = await runWrk(`${appUrl}/v1/users`, {
    headers,
    seconds: SECONDS,
    script: CREATE_SCRIPT,
    scriptArgs: [crypto.randomUUID().slice(0, 8)],
  });
  row("(f) POST /v1/users (new clients)", creates, base, `target >= 2,000 created/s`);
} finally {
  await stop(bare.child);
  await stop(hono.child);
  await stop(honoRequestId.child);
  await stop(app.child);
}

console.log(
  "\nOne indexed lookup (client by partner and externalUserId, 100,000 clients); target <= 25 µs through db/:",
);
await new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", new URL("./query_cost.ts", import.meta.url).pathname, app.info.databaseUrl!, app.info.partnerId!],
  stdout: "inherit",
  stderr: "inherit",
}).output();

for (const script of ["venue_a_bench.ts", "venue_b_bench.ts"]) {
  console.log(`\n${script}`);
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(`./${script}`, import.meta.url).pathname],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (code !== 0) console.log(`${script} exited with ${code}`);
}
