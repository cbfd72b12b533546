/**
 * Instances benchmark, run standalone with `deno run -A tests/bench/instances_bench.ts`
 * (INSTANCES_CLIENTS, default 100,000; BENCH_SECONDS, default 10; BENCH_ROUNDS,
 * default 1; FLEET_DATABASE, `file` or `server`, as for tests/instances/): the
 * partner mix of partner_mix.lua against 1, 2 and 3 service processes
 * (`main.ts`, as production starts it) on one libSQL file, or on one libSQL
 * server (sqld, tests/_helpers/sqld.ts) with FLEET_DATABASE=server, beside the
 * bare Deno.serve of the same run.
 *
 * One database is seeded once: a first instance alone applies the migrations
 * and publishes the QA catalogue, the partner is created through the operator
 * API, and the clients (with their creation events) are written set-based
 * while no instance runs. Then, for each N, N fresh processes start on that
 * file and `wrk -t6 -c30` drives the mix with partner_mix_instances.lua: wrk
 * thread i talks to instance i % N itself, so no proxy sits in the path
 * (one would cost the CPU it is meant to measure) and every N sees the same
 * 30 connections, spread evenly.
 *
 * Per N it prints, for the mix and for its reads alone (the same routes in
 * the same proportions without the two writes), the throughput, p50 and p99
 * (timed per request by the script), the requests each instance answered,
 * the CPU each service process used (/proc/<pid>/stat), wrk's own, and the
 * machine's busy share (/proc/stat, other jobs included); each route's p50/p99
 * inside the mix; and the database's share of the mix's CPU. For that share
 * N fresh instances run the mix once more, each under `--cpu-prof` (a pass
 * of its own, so the profiler does not slow the measured one), and each busy
 * sample of the measured window goes to the innermost frame of its stack that
 * has an owner: SQLite (the `libsql` package: its JS wrapper, and the native
 * engine below it, whose time V8 files under the wrapper's frame), db/ itself
 * (the connection, the statement cache, the write queue), drizzle itself
 * (building SQL, mapping rows) or anything else (Hono, zod, the domain).
 * Against a server the engine runs in sqld, whose CPU is shown beside the
 * instances'; the service's "SQLite" share is then its Hrana client
 * (`@libsql/hrana-client`: the requests to the server and their answers).
 * A write waiting for another process's lock sleeps (write_queue.ts backs
 * off 1 to 25 ms): that shows in the writes' latency, not in anyone's CPU.
 *
 * On a server it then counts what one request asks of the server, on the
 * wire: one instance behind a counting relay (tests/_helpers/hrana_tally.ts),
 * each route alone on one connection, then the mix, printing per route the
 * Hrana requests (round trips) and statements one request costs and the CPU
 * it costs sqld and the instance (INSTANCES_SQL_TALLY=1 adds the statements
 * each route sends most, by their SQL text).
 *
 * It then measures the link: the mix once more against the first
 * N's instances, through a TCP relay (tests/_helpers/tcp_relay.ts) that holds
 * every chunk 1 ms and 5 ms in each direction (INSTANCES_LINK_DELAYS, ms,
 * default "1,5"; each round trip then costs about twice that more), and
 * prints how the mix's throughput and its writes' p50/p99 grow with the
 * round-trip time: what sizing a Turso or sqld region against it takes.
 * Every figure is printed beside its target (the mix on a server >= 1,500 req/s).
 */
import { openDatabase } from "../../db/client.ts";
import { openRemote } from "../../db/remote.ts";
import { freePort, MAIN, waitUntilUp } from "../_helpers/server.ts";
import { startSqld } from "../_helpers/sqld.ts";
import { HranaTally } from "../_helpers/hrana_tally.ts";
import { startTcpRelay } from "../_helpers/tcp_relay.ts";
import { parseMix, ROUTES } from "./partner_mix.ts";
import { seedClients } from "./seed_clients.ts";
import { benchPartnerInput, median, startTarget, stopTarget } from "./targets.ts";
import { ensureWrk, runWrk, type WrkResult } from "./wrk.ts";

const CLIENTS = Number(Deno.env.get("INSTANCES_CLIENTS") ?? "100000");
const SECONDS = Number(Deno.env.get("BENCH_SECONDS") ?? "10");
const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? "1");
/** INSTANCES_COUNTS ("1" or "1,3") measures fewer fleets, to be quick. */
const COUNTS = (Deno.env.get("INSTANCES_COUNTS") ?? "1,2,3").split(",").map(Number);
const DATABASE = Deno.env.get("FLEET_DATABASE") === "server" ? "server" : "file";
/** Milliseconds the relay holds each chunk in each direction, for the link table (a server only). */
const LINK_DELAYS = (Deno.env.get("INSTANCES_LINK_DELAYS") ?? "1,5").split(",").filter(Boolean).map(Number);
/** Seconds each route runs alone while its round trips to the server are counted (a server only). */
const ROUND_TRIP_SECONDS = 3;
/** INSTANCES_SQL_TALLY=1 also prints the statements each route sends most (their SQL text, never arguments). */
const SQL_TALLY = Deno.env.get("INSTANCES_SQL_TALLY") === "1";
/** The issue's target for the mix on a libSQL server (issue 33), this machine's 2 cores. */
const SERVER_MIX_TARGET_RPS = 1_500;
/** Divisible by every N, so each instance gets the same share of wrk's threads and connections. */
const THREADS = 6;
const CONNECTIONS = 30;
const SCRIPT = new URL("./partner_mix_instances.lua", import.meta.url).pathname;
const DB_DIR = new URL("../../db/", import.meta.url).href;

const OPERATOR_TOKEN = "bench-operator-token-0123456789abcdef";
const MASTER_KEY = btoa(String.fromCharCode(...new Uint8Array(32).fill(1)));

/** A service process: `deno run main.ts`, its stderr's tail kept for the report of a failed start. */
interface Instance {
  child: Deno.ChildProcess;
  port: number;
  url: string;
  spawnedAt: number;
  stderr: Promise<string>;
}

function spawnInstance(databaseUrl: string, profileDir?: string): Instance {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--unstable-cron",
      ...(profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []),
      MAIN,
    ],
    env: {
      DATABASE_URL: databaseUrl,
      OPERATOR_TOKEN,
      MASTER_KEY,
      PORT: String(port),
      LOG_LEVEL: "error",
      NO_COLOR: "1",
    },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text().then((text) => text.slice(-4000));
  return { child, port, url: `http://127.0.0.1:${port}`, spawnedAt: performance.now(), stderr };
}

/** The first instance alone (it migrates), then the others together, as tests/instances/fleet.ts starts them. */
async function startInstances(count: number, databaseUrl: string, profileDirs: string[] = []): Promise<Instance[]> {
  const instances = [spawnInstance(databaseUrl, profileDirs[0])];
  try {
    await waitUntilUp(instances[0].url);
    for (let i = 1; i < count; i++) instances.push(spawnInstance(databaseUrl, profileDirs[i]));
    await Promise.all(instances.slice(1).map((instance) => waitUntilUp(instance.url)));
  } catch (error) {
    await stopInstances(instances).catch(() => {});
    throw error;
  }
  return instances;
}

async function stopInstances(instances: Instance[]): Promise<void> {
  const failures: string[] = [];
  for (const instance of instances) {
    try {
      instance.child.kill("SIGTERM");
    } catch {
      // already exited
    }
  }
  for (const [index, instance] of instances.entries()) {
    const status = await instance.child.status;
    if (status.code !== 0) failures.push(`instance ${index} exited ${status.code}: ${await instance.stderr}`);
  }
  if (failures.length) throw new Error(failures.join("\n"));
}

/** CPU seconds a process has used (utime + stime, at the kernel's 100 ticks a second). */
async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await Deno.readTextFile(`/proc/${pid}/stat`)).split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The machine's busy and total jiffies (all cores), from the first line of /proc/stat. */
async function machineTicks(): Promise<{ busy: number; interrupts: number; total: number }> {
  const [, ...fields] = (await Deno.readTextFile("/proc/stat")).split("\n")[0].trim().split(/\s+/);
  const values = fields.map(Number);
  const idle = values[3] + values[4];
  const total = values.slice(0, 8).reduce((sum, value) => sum + value, 0);
  // irq and softirq: loopback TCP is processed there, charged to no process.
  return { busy: total - idle, interrupts: values[5] + values[6], total };
}

/** The bench partner, and its Basic credential (kept in memory only, never printed). */
async function createBenchPartner(url: string): Promise<{ partnerId: string; auth: string }> {
  const response = await fetch(`${url}/operator/v1/partners`, {
    method: "POST",
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(benchPartnerInput(1_000_000)),
  });
  const body = await response.json();
  if (response.status !== 201) {
    throw new Error(`Creating the bench partner: ${response.status} ${JSON.stringify(body)}`);
  }
  const { partner, credential } = body;
  return {
    partnerId: partner.partnerId,
    auth: `Basic ${btoa(`${credential.clientId}:${credential.clientSecret}`)}`,
  };
}

interface ProfileShares {
  /** Non-idle samples of the window. */
  samples: number;
  /** In the libsql package (its wrapper and the native engine). */
  sqlite: number;
  /** In db/ itself (connection, statement cache, write queue). */
  driver: number;
  /** In drizzle-orm itself: building SQL, mapping rows. */
  drizzle: number;
  gc: number;
}

/**
 * The shares of a `--cpu-prof` profile's busy samples taken between `fromMs`
 * and `toMs` after the process was spawned (the profile starts within a few
 * tens of ms of the spawn: close enough for a window of seconds).
 */
async function profileShares(dir: string, fromMs: number, toMs: number): Promise<ProfileShares> {
  let file: string | undefined;
  for await (const entry of Deno.readDir(dir)) if (entry.name.endsWith(".cpuprofile")) file = `${dir}/${entry.name}`;
  if (!file) throw new Error(`No CPU profile in ${dir}`);
  const profile = JSON.parse(await Deno.readTextFile(file)) as {
    nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
    samples: number[];
    timeDeltas: number[];
  };
  const parent = new Map<number, number>();
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  // A sample belongs to the innermost frame on its stack that has an owner: a native builtin (no URL, e.g.
  // JSON.parse) to its caller's owner; our code that drizzle or the write queue calls back (a column mapper,
  // a transaction's work) to itself, not to its caller.
  type Owner = "sqlite" | "driver" | "drizzle" | "other" | "idle" | "gc";
  const owners = new Map<number, Owner>();
  const ownerOf = (id: number): Owner => {
    const known = owners.get(id);
    if (known) return known;
    const { functionName, url } = byId.get(id)!.callFrame;
    const owner: Owner = functionName === "(idle)"
      ? "idle"
      : functionName === "(garbage collector)"
      ? "gc"
      : url.includes("/libsql@") || url.includes("/node_modules/libsql/") || url.includes("/node_modules/@libsql/")
      ? "sqlite"
      // schema.ts holds the column mappers drizzle calls while it maps rows.
      : url.startsWith(DB_DIR)
      ? (url.endsWith("/schema.ts") ? "drizzle" : "driver")
      : url.includes("/drizzle-orm@")
      ? "drizzle"
      : url !== ""
      ? "other"
      : parent.has(id)
      ? ownerOf(parent.get(id)!)
      : "other";
    owners.set(id, owner);
    return owner;
  };
  const shares: ProfileShares = { samples: 0, sqlite: 0, driver: 0, drizzle: 0, gc: 0 };
  let atUs = 0;
  for (const [index, id] of profile.samples.entries()) {
    atUs += profile.timeDeltas[index];
    if (atUs < fromMs * 1000 || atUs > toMs * 1000) continue;
    const owner = ownerOf(id);
    if (owner === "idle") continue;
    shares.samples++;
    if (owner !== "other") shares[owner]++;
  }
  return shares;
}

/** One measured wrk run against N instances, and the CPU that went into it. */
interface RunFigures {
  result: WrkResult;
  seconds: number;
  /** Requests each instance answered (from the script's per-thread counts). */
  perInstance: number[];
  /** CPU seconds per service process during the run. */
  cpu: number[];
  /** CPU seconds of wrk itself (this process's reaped children). */
  wrkCpu: number;
  /** CPU seconds of the libSQL server during the run (0 on a file). */
  serverCpu: number;
  /** Busy share of the whole machine (every core, other jobs included), and the part in interrupts. */
  machineBusy: number;
  machineInterrupts: number;
  /** The run's window, ms after each instance was spawned (for its profile). */
  windows: [number, number][];
}

interface Measured {
  count: number;
  mix: RunFigures;
  reads: RunFigures;
  /** The profiled pass's shares, summed over its instances, and its figures. */
  shares: ProfileShares;
  profiled: RunFigures;
}

const CORES = navigator.hardwareConcurrency;
const ms = (value: number) => value.toFixed(1).padStart(6);
const pct = (part: number, whole: number) => `${(part / whole * 100).toFixed(0).padStart(3)} %`;

/** CPU seconds of this process's children that have been waited for (wrk runs to its end inside runWrk). */
async function reapedChildrenCpuSeconds(): Promise<number> {
  const fields = (await Deno.readTextFile("/proc/self/stat")).split(") ")[1].split(" ");
  // cutime and cstime: fields 16 and 17 of stat.
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

await ensureWrk();
const dir = await Deno.makeTempDir({ prefix: "svc-instances-bench-" });
const server = DATABASE === "server" ? await startSqld() : null;
const databaseUrl = server?.url ?? `file:${dir}/service.db`;
const serverCpuSeconds = () => server ? cpuSeconds(server.pid) : Promise.resolve(0);
const setupStarted = performance.now();
// Migrations and the QA catalogue by a first start, the partner by the operator API, then the clients directly.
const [first] = await startInstances(1, databaseUrl);
const { partnerId, auth } = await createBenchPartner(first.url).finally(() => stopInstances([first]));
{
  const db = await openDatabase(databaseUrl);
  await seedClients(db, partnerId, CLIENTS, Date.now());
  db.close();
}
console.log(
  `${CLIENTS.toLocaleString("en")} clients and their events seeded in one database in ${
    ((performance.now() - setupStarted) / 1000).toFixed(1)
  } s`,
);

/**
 * wrk against `instances`: `mode` is the mix, its reads alone, or one route
 * of it alone (a name of partner_mix.ts's ROUTES), on `load`'s threads and
 * connections.
 */
async function run(
  instances: Instance[],
  mode: string,
  seconds: number,
  load = { threads: THREADS, connections: CONNECTIONS },
): Promise<RunFigures> {
  // Read by partner_mix_instances.lua (wrk inherits this process's environment).
  Deno.env.set("MIX_INSTANCE_PORTS", instances.map((instance) => instance.port).join(","));
  const cpuBefore = await Promise.all(instances.map((instance) => cpuSeconds(instance.child.pid)));
  const serverBefore = await serverCpuSeconds();
  const machineBefore = await machineTicks();
  const wrkBefore = await reapedChildrenCpuSeconds();
  const startedAt = performance.now();
  const result = await runWrk(`${instances[0].url}/`, {
    headers: { authorization: auth },
    seconds,
    ...load,
    script: SCRIPT,
    scriptArgs: [crypto.randomUUID().slice(0, 8), String(CLIENTS), mode],
  });
  const endedAt = performance.now();
  const wrkAfter = await reapedChildrenCpuSeconds();
  const machineAfter = await machineTicks();
  const cpuAfter = await Promise.all(instances.map((instance) => cpuSeconds(instance.child.pid)));
  const serverAfter = await serverCpuSeconds();
  return {
    result,
    seconds: (endedAt - startedAt) / 1000,
    perInstance: instances.map((_, index) =>
      Number(new RegExp(`^INSTANCE index=${index} requests=(\\d+)$`, "m").exec(result.output)?.[1] ?? NaN)
    ),
    cpu: cpuAfter.map((after, index) => after - cpuBefore[index]),
    wrkCpu: wrkAfter - wrkBefore,
    serverCpu: serverAfter - serverBefore,
    machineBusy: (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total),
    machineInterrupts: (machineAfter.interrupts - machineBefore.interrupts) /
      (machineAfter.total - machineBefore.total),
    windows: instances.map((instance) => [startedAt - instance.spawnedAt, endedAt - instance.spawnedAt]),
  };
}

/**
 * N fresh instances: the mix and the reads alone, measured; then N fresh
 * instances again, every one under --cpu-prof (so the profiler's cost does
 * not tilt the measured pass), for the database's share of the mix's CPU.
 */
async function measure(count: number): Promise<Measured> {
  let mix: RunFigures, reads: RunFigures;
  let instances = await startInstances(count, databaseUrl);
  try {
    // Warm-up: JIT, statement caches, the partner snapshot, every route on every instance.
    await run(instances, "mix", 2);
    mix = await run(instances, "mix", SECONDS);
    reads = await run(instances, "reads", SECONDS);
  } finally {
    await stopInstances(instances);
  }
  const profileDirs = await Promise.all(
    Array.from({ length: count }, () => Deno.makeTempDir({ prefix: "svc-instances-prof-" })),
  );
  instances = await startInstances(count, databaseUrl, profileDirs);
  let profiled: RunFigures;
  try {
    await run(instances, "mix", 2);
    profiled = await run(instances, "mix", SECONDS);
  } finally {
    await stopInstances(instances);
  }
  const shares: ProfileShares = { samples: 0, sqlite: 0, driver: 0, drizzle: 0, gc: 0 };
  for (const [index, profileDir] of profileDirs.entries()) {
    const one = await profileShares(profileDir, ...profiled.windows[index]);
    for (const key of Object.keys(shares) as (keyof ProfileShares)[]) shares[key] += one[key];
    await Deno.remove(profileDir, { recursive: true }).catch(() => {});
  }
  return { count, mix, reads, shares, profiled };
}

/** A measured pass through the relay, and the round trip a statement took through it. */
interface LinkFigures {
  figures: RunFigures;
  roundTripMs: number;
}

/** The mix against `count` instances reaching the server through a relay that holds each chunk `delayMs` each way. */
async function measureLink(count: number, delayMs: number): Promise<LinkFigures> {
  const relay = startTcpRelay(databaseUrl, { delayMs });
  try {
    const roundTripMs = await roundTrip(relay.url);
    const instances = await startInstances(count, relay.url);
    try {
      await run(instances, "mix", 2);
      return { figures: await run(instances, "mix", SECONDS), roundTripMs };
    } finally {
      await stopInstances(instances);
    }
  } finally {
    await relay.close();
  }
}

/** What requests of one kind asked of the server, per request, and the CPU they cost there and in the service. */
interface RoundTrips {
  requests: number;
  roundTrips: number;
  statements: number;
  serverCpuMs: number;
  serviceCpuMs: number;
  /** The statements the route sent most (SQL text and count per request), with INSTANCES_SQL_TALLY=1. */
  top: [string, number][];
}

/**
 * What one request of each route of the mix asks of the server, counted on
 * the wire: one instance reaches the server through a relay that counts the
 * Hrana requests (each a round trip) and the statements they carry
 * (tests/_helpers/hrana_tally.ts). Each route runs alone on one connection,
 * so nothing is shared with a concurrent request; then the mix as measured
 * (wrk -t6 -c30), where concurrent requests share the cache-generations read
 * and the write queue groups transactions. The instance's background work
 * (the webhook sender's pass each second) is counted in an idle window first
 * and taken off each figure.
 */
async function measureRoundTrips(): Promise<{ routes: Map<string, RoundTrips>; mix: RoundTrips }> {
  const tally = new HranaTally({ keepSql: SQL_TALLY });
  const relay = startTcpRelay(databaseUrl, { tally });
  try {
    const [instance] = await startInstances(1, relay.url);
    try {
      await run([instance], "mix", 2);
      tally.take();
      const idleStarted = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const idle = tally.take();
      const idleSeconds = (performance.now() - idleStarted) / 1000;
      const perRequest = (figures: RunFigures, requests: number): RoundTrips => {
        const top = [...tally.statementsBySql].sort((a, b) => b[1] - a[1]).slice(0, 12)
          .map(([sql, count]): [string, number] => [sql, count / requests]);
        const counted = tally.take();
        const background = (count: number) => count / idleSeconds * figures.seconds;
        return {
          requests,
          roundTrips: (counted.requests - background(idle.requests)) / requests,
          statements: (counted.statements - background(idle.statements)) / requests,
          serverCpuMs: figures.serverCpu / requests * 1000,
          serviceCpuMs: figures.cpu[0] / requests * 1000,
          top,
        };
      };
      const routes = new Map<string, RoundTrips>();
      for (const name of Object.keys(ROUTES)) {
        const figures = await run([instance], name, ROUND_TRIP_SECONDS, { threads: 1, connections: 1 });
        routes.set(name, perRequest(figures, parseMix(figures.result.output).routes.get(name)?.requests ?? NaN));
      }
      const mix = await run([instance], "mix", ROUND_TRIP_SECONDS);
      return { routes, mix: perRequest(mix, mix.result.requests) };
    } finally {
      await stopInstances([instance]);
    }
  } finally {
    await relay.close();
  }
}

/** The median wall time of `SELECT 1` on a kept stream to `url`, one at a time, while nothing else runs. */
async function roundTrip(url: string): Promise<number> {
  const { reader, writer } = openRemote(url);
  try {
    await reader.query("SELECT 1", [], "get");
    const times: number[] = [];
    for (let i = 0; i < 21; i++) {
      const started = performance.now();
      await reader.query("SELECT 1", [], "get");
      times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b)[10];
  } finally {
    reader.close();
    writer.close();
  }
}

const bare = await startTarget(["bare"]);
const runs = new Map<number, Measured[]>(COUNTS.map((count) => [count, []]));
const bareRuns: WrkResult[] = [];
const linkRuns = new Map<number, LinkFigures>();
let roundTrips: Awaited<ReturnType<typeof measureRoundTrips>> | undefined;
/** The round trip on loopback, without the relay: the first row of the link table. */
let loopbackRoundTripMs = NaN;
try {
  await runWrk(`${bare.url}/`, { seconds: 1 });
  console.log(
    `partner mix on loopback, wrk -t${THREADS} -c${CONNECTIONS} (thread i -> instance i % N, no proxy), ${SECONDS} s ` +
      `per run after a 2 s warm-up, ${ROUNDS} round(s), ${CORES} cores, database: ${
        server ? "libSQL server" : "file"
      }; ` +
      `bare Deno.serve wrk -t2 -c32 ${SECONDS} s\n`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    bareRuns.push(await runWrk(`${bare.url}/`, { seconds: SECONDS }));
    for (const count of COUNTS) runs.get(count)!.push(await measure(count));
  }
  if (server) {
    roundTrips = await measureRoundTrips();
    loopbackRoundTripMs = await roundTrip(server.url);
    for (const delayMs of LINK_DELAYS) linkRuns.set(delayMs, await measureLink(COUNTS[0], delayMs));
  }
} finally {
  await stopTarget(bare);
  await server?.stop();
}

/** The round with the median throughput of `pick`. */
function medianRun(count: number, pick: (measured: Measured) => RunFigures): RunFigures {
  const figures = runs.get(count)!.map(pick);
  const result = median(figures.map((figure) => figure.result));
  return figures.find((figure) => figure.result === result)!;
}

const bareMedian = median(bareRuns);
console.log(
  `bare Deno.serve: ${bareMedian.rps.toFixed(0)} req/s, p50 ${bareMedian.p50Ms.toFixed(2)} ms, p99 ${
    bareMedian.p99Ms.toFixed(2)
  } ms`,
);
for (
  const [title, pick] of [["the mix", (m: Measured) => m.mix], ["its reads alone", (m: Measured) => m.reads]] as const
) {
  const single = medianRun(1, pick).result.rps;
  console.log(
    `\n${title}\n${"N".padEnd(3)}${"req/s".padStart(7)} ${"% bare".padStart(7)} ${"x N=1".padStart(6)} ${
      "p50 ms".padStart(7)
    } ${"p99 ms".padStart(7)}  ${"errors".padStart(6)}  ${
      "cores used: per instance".padEnd(26)
    } wrk sqld  irq other  busy  CPU ms/req  answered per instance`,
  );
  for (const count of COUNTS) {
    const figures = medianRun(count, pick);
    const { result } = figures;
    const mix = parseMix(result.output);
    const errors = [...mix.routes.values()].reduce((sum, route) => sum + route.errors, 0) + result.socketErrors;
    const cores = (seconds: number) => (seconds / figures.seconds).toFixed(2);
    // With a server, its CPU serves the requests as much as the instances' does.
    const services = figures.cpu.reduce((sum, seconds) => sum + seconds, 0) + figures.serverCpu;
    const interrupts = figures.machineInterrupts * CORES * figures.seconds;
    // Other jobs on the machine, and this process.
    const other = figures.machineBusy * CORES * figures.seconds - services - figures.wrkCpu - interrupts;
    console.log(
      `${String(count).padEnd(3)}${result.rps.toFixed(0).padStart(7)} ${
        (result.rps / bareMedian.rps * 100).toFixed(1).padStart(5)
      } % ${(result.rps / single).toFixed(2).padStart(6)} ${ms(result.p50Ms)}  ${ms(result.p99Ms)}  ${
        String(errors).padStart(6)
      }  ${figures.cpu.map(cores).join(" ").padEnd(26)} ${cores(figures.wrkCpu)} ${cores(figures.serverCpu)} ${
        cores(interrupts)
      } ${cores(other).padStart(5)} ${(figures.machineBusy * 100).toFixed(0).padStart(3)} % ${
        (services / result.requests * 1000).toFixed(2).padStart(10)
      }  ${figures.perInstance.map((n) => n.toLocaleString("en")).join(" / ")}${
        mix.firstError ? `   first error: ${mix.firstError}` : ""
      }`,
    );
  }
}

console.log(`\nper route inside the mix, p50 / p99 ms (req/s):`);
console.log(`${"route".padEnd(36)} ${COUNTS.map((count) => `N=${count}`.padEnd(26)).join("")}`);
for (const [name, label] of Object.entries(ROUTES)) {
  const cells = COUNTS.map((count) => {
    const mix = parseMix(medianRun(count, (m) => m.mix).result.output);
    const route = mix.routes.get(name);
    return route
      ? `${ms(route.p50Ms)} /${ms(route.p99Ms)} (${(route.requests / mix.seconds).toFixed(0)})`.padEnd(26)
      : "(none)".padEnd(26);
  });
  console.log(`${label.padEnd(36)} ${cells.join("")}`);
}

console.log(
  `\nwhere the mix's CPU goes: every instance under --cpu-prof in a pass of its own (req/s of that pass), the busy\n` +
    `samples of its window by owner; CPU per request from the measured pass, split by those shares:\n` +
    `${"N".padEnd(3)} ${"req/s".padStart(6)}  SQLite  driver  drizzle  database    GC  samples  ` +
    `CPU ms/req  of it SQLite  database`,
);
for (const count of COUNTS) {
  const measured = runs.get(count)!;
  const { shares, profiled } = measured[Math.floor(measured.length / 2)];
  // CPU per request from the measured pass: the profiler adds its own.
  const mix = medianRun(count, (m) => m.mix);
  const perRequestMs = mix.cpu.reduce((sum, seconds) => sum + seconds, 0) / mix.result.requests * 1000;
  const database = shares.sqlite + shares.driver + shares.drizzle;
  console.log(
    `${String(count).padEnd(3)} ${profiled.result.rps.toFixed(0).padStart(6)}   ${
      pct(shares.sqlite, shares.samples)
    }   ${pct(shares.driver, shares.samples)}    ${pct(shares.drizzle, shares.samples)}     ${
      pct(database, shares.samples)
    }  ${pct(shares.gc, shares.samples)}  ${String(shares.samples).padStart(7)}  ${
      perRequestMs.toFixed(2).padStart(10)
    }  ${(perRequestMs * shares.sqlite / shares.samples).toFixed(2).padStart(12)}  ${
      (perRequestMs * database / shares.samples).toFixed(2).padStart(8)
    }`,
  );
}
await Deno.remove(dir, { recursive: true }).catch(() => {});

if (server) {
  const single = medianRun(COUNTS[0], (m) => m.mix).result.rps;
  console.log(
    `\nthe mix on a libSQL server, N=${COUNTS[0]}: ${single.toFixed(0)} req/s, target >= ${
      SERVER_MIX_TARGET_RPS.toLocaleString("en")
    } (${(single / SERVER_MIX_TARGET_RPS * 100).toFixed(0)} % of it: ${
      single >= SERVER_MIX_TARGET_RPS ? "met" : "not met"
    })`,
  );
  printRoundTrips();
  printLinkTable();
}

/** Per route: round trips and statements one request costs on the server, and the CPU it costs there and here. */
function printRoundTrips(): void {
  if (!roundTrips) return;
  console.log(
    `\nwhat one request asks of the libSQL server, counted on the wire (Hrana requests: each a round trip), and the\n` +
      `CPU it costs in sqld and in the instance: each route alone on one connection, then the mix as measured above\n` +
      `${"route".padEnd(36)} ${"requests".padStart(8)} ${"round trips".padStart(11)} ${"statements".padStart(10)} ${
        "sqld CPU ms".padStart(11)
      } ${"service CPU ms".padStart(14)}`,
  );
  const row = (label: string, figures: RoundTrips) => {
    console.log(
      `${label.padEnd(36)} ${String(figures.requests).padStart(8)} ${figures.roundTrips.toFixed(2).padStart(11)} ${
        figures.statements.toFixed(2).padStart(10)
      } ${figures.serverCpuMs.toFixed(2).padStart(11)} ${figures.serviceCpuMs.toFixed(2).padStart(14)}`,
    );
    for (const [sql, count] of figures.top) console.log(`    ${count.toFixed(2).padStart(5)}  ${sql.slice(0, 150)}`);
  };
  for (const [name, figures] of roundTrips.routes) row(ROUTES[name], figures);
  row(`the mix, wrk -t${THREADS} -c${CONNECTIONS}`, roundTrips.mix);
}

/**
 * The mix as the link to the server gets longer: the first row is the
 * measured pass above (loopback), the others went through the relay. Writes
 * per second are the two writes' answers: the writer of each instance runs
 * its transactions one after another, each a round trip per statement its
 * work waits for, so they are what a longer round trip takes first.
 */
function printLinkTable(): void {
  const rows: [number, LinkFigures][] = [
    [0, { figures: medianRun(COUNTS[0], (m) => m.mix), roundTripMs: loopbackRoundTripMs }],
    ...linkRuns,
  ];
  const loopback = rows[0][1].figures.result.rps;
  const route = (figures: RunFigures, name: string) => {
    const found = parseMix(figures.result.output).routes.get(name);
    return found ? `${ms(found.p50Ms)} /${ms(found.p99Ms)}` : "(none)".padStart(15);
  };
  console.log(
    `\nthe mix against N=${
      COUNTS[0]
    } as the link to the libSQL server gets longer: a relay holds each chunk d ms each ` +
      `way; RTT is SELECT 1's median round trip\n(errors: answers outside 2xx and wrk's timeouts at 2 s)\n` +
      `${"d ms".padEnd(5)} ${"RTT ms".padStart(6)} ${"req/s".padStart(6)} ${"x 0 ms".padStart(7)} ${
        "% target".padStart(9)
      } ${"writes/s".padStart(8)}  ${"new client p50 / p99".padStart(20)}  ${"setup PUT p50 / p99".padStart(20)}  ${
        "status p50 / p99".padStart(17)
      }  errors`,
  );
  for (const [delayMs, { figures, roundTripMs }] of rows) {
    const { result } = figures;
    const mix = parseMix(result.output);
    const errors = [...mix.routes.values()].reduce((sum, one) => sum + one.errors, 0) + result.socketErrors;
    const writes = ["create", "setup_put"].reduce((sum, name) => sum + (mix.routes.get(name)?.requests ?? 0), 0);
    console.log(
      `${String(delayMs).padEnd(5)} ${roundTripMs.toFixed(2).padStart(6)} ${result.rps.toFixed(0).padStart(6)} ${
        (result.rps / loopback).toFixed(2).padStart(7)
      } ${(result.rps / SERVER_MIX_TARGET_RPS * 100).toFixed(0).padStart(7)} % ${
        (writes / mix.seconds).toFixed(0).padStart(8)
      }  ${route(figures, "create").padStart(20)}  ${route(figures, "setup_put").padStart(20)}  ${
        route(figures, "status").padStart(17)
      }  ${String(errors).padStart(6)}${mix.firstError ? `   first error: ${mix.firstError}` : ""}`,
    );
  }
}
