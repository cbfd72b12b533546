/**
 * `deno task bench`: every benchmark in one run, printing figures and ratios.
 *
 * 1. Authenticated GET /v1/health through the full middleware stack against a
 *    bare Deno.serve JSON handler (target: at least 50 % of its throughput).
 * 2. GET /v1/users/:id/status with 100,000 clients in the database, against
 *    the same bare baseline.
 * 3. The venue benchmarks (signing throughput, simulator round trips).
 */
import { describe, load } from "./load.ts";

const TARGET = new URL("./serve_target.ts", import.meta.url).pathname;
const SECONDS = Number(Deno.env.get("BENCH_SECONDS") ?? "5");

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
  return { child, info: JSON.parse(text.split("\n")[0]) };
}

async function stop(child: Deno.ChildProcess) {
  child.kill("SIGTERM");
  await child.status;
  await child.stdout.cancel().catch(() => {});
}

const bare = await startTarget(["bare"]);
const app = await startTarget(["app", "100000"]);
try {
  console.log(`HTTP benchmarks on loopback, ${SECONDS} s each, 32 concurrent connections\n`);
  await load(`http://127.0.0.1:${bare.info.port}/`, {}, { seconds: 1 }); // warm-up
  await load(`http://127.0.0.1:${app.info.port}/v1/health`, { authorization: app.info.auth }, { seconds: 1 });
  const baseline = await load(`http://127.0.0.1:${bare.info.port}/`, {}, { seconds: SECONDS });
  const health = await load(`http://127.0.0.1:${app.info.port}/v1/health`, { authorization: app.info.auth }, {
    seconds: SECONDS,
  });
  const status = await load(
    `http://127.0.0.1:${app.info.port}/v1/users/${app.info.userId}/status`,
    { authorization: app.info.auth },
    { seconds: SECONDS },
  );
  console.log(describe("bare Deno.serve JSON handler", baseline));
  console.log(describe("GET /v1/health (auth, request id, rate limit)", health));
  console.log(describe("GET /v1/users/:id/status (100,000 clients)", status));
  console.log(`\nratio health / bare: ${(health.rps / baseline.rps * 100).toFixed(1)} % (target >= 50 %)`);
  console.log(
    `ratio status / bare: ${(status.rps / baseline.rps * 100).toFixed(1)} %   status p99 ${status.p99.toFixed(2)} ms`,
  );
} finally {
  await stop(bare.child);
  await stop(app.child);
}

for (const script of ["venue_a_bench.ts", "venue_b_bench.ts"]) {
  console.log(`\n${script}`);
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(`./${script}`, import.meta.url).pathname],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (code !== 0) console.log(`${script} exited with ${code}`);
}
