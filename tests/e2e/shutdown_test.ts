/**
 * Graceful shutdown of a real server process. On SIGTERM it stops accepting
 * connections, still answers the requests it is serving, closes the database
 * and exits 0; past SHUTDOWN_GRACE_SECONDS it cuts what is left, says how much
 * in the log, and exits 1; a second signal exits at once with 1. The slow
 * request is a VENUE_A simulator route under the SLOW fault, served by the same
 * process as the API.
 */
import assert from "node:assert/strict";
import { openDatabase } from "../../db/client.ts";
import { EXIT_WORK_CUT } from "../../domain/lifecycle.ts";
import { partnerBody } from "../_helpers/http.ts";
import { freePort, spawnService, waitUntilUp } from "../_helpers/server.ts";

const TOKEN = "shutdown-test-operator-token-0123456789abcdef";
/** Long enough for the slow request to reach its handler and start waiting there. */
const SETTLE_MS = 500;

interface LogEntry {
  level: string;
  message: string;
  [field: string]: unknown;
}

interface Service {
  url: string;
  port: number;
  databaseUrl: string;
  child: Deno.ChildProcess;
  /** The JSON log lines written so far on stderr. */
  log: LogEntry[];
  /** Settles once stdout and stderr are closed, i.e. after the process ended. */
  streamsClosed: Promise<unknown>;
}

async function startService(graceSeconds: number): Promise<Service> {
  const dir = await Deno.makeTempDir({ prefix: "svc-shutdown-" });
  const databaseUrl = `file:${dir}/service.db`;
  const port = freePort();
  const child = spawnService({
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    OPERATOR_TOKEN: TOKEN,
    MASTER_KEY: btoa(String.fromCharCode(...new Uint8Array(32).fill(5))),
    LOG_LEVEL: "info",
    SHUTDOWN_GRACE_SECONDS: String(graceSeconds),
  });
  const log: LogEntry[] = [];
  const streamsClosed = Promise.all([collectLog(child.stderr, log), child.stdout.pipeTo(new WritableStream())]);
  return { url: `http://127.0.0.1:${port}`, port, databaseUrl, child, log, streamsClosed };
}

async function collectLog(stderr: ReadableStream<Uint8Array>, log: LogEntry[]): Promise<void> {
  let partial = "";
  for await (const chunk of stderr.pipeThrough(new TextDecoderStream())) {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop()!;
    // Start-up notices are plain text; log entries are one JSON object a line.
    for (const line of lines) if (line.startsWith("{")) log.push(JSON.parse(line));
  }
}

/** Never leave a process behind, whatever the test did. */
async function stopService(service: Service): Promise<void> {
  try {
    service.child.kill("SIGKILL");
  } catch {
    // already exited
  }
  await service.child.status;
  await service.streamsClosed;
}

async function logEntry(service: Service, message: string): Promise<LogEntry> {
  for (let waited = 0; waited < 10_000; waited += 20) {
    const entry = service.log.find((candidate) => candidate.message === message);
    if (entry) return entry;
    await delay(20);
  }
  throw new Error(`No log entry "${message}" in ${JSON.stringify(service.log)}`);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function slowDownVenueA(service: Service, ms: number): Promise<void> {
  const response = await fetch(`${service.url}/sim/venue-a/_control/faults`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ mode: "SLOW", ms }),
  });
  assert.equal(response.status, 200, await response.text());
}

Deno.test("SIGTERM answers the request in flight, refuses new connections, closes the database and exits 0", async () => {
  const graceSeconds = 10;
  const service = await startService(graceSeconds);
  try {
    await waitUntilUp(service.url);
    const created = await fetch(`${service.url}/operator/v1/partners`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(partnerBody({ partnerId: "drained", name: "Corretora Drenada" })),
    });
    assert.equal(created.status, 201, await created.text());
    await slowDownVenueA(service, 2_000);

    const slow = fetch(`${service.url}/sim/venue-a/fapi/v1/time`);
    await delay(SETTLE_MS);
    const signalled = performance.now();
    service.child.kill("SIGTERM");

    const shuttingDown = await logEntry(service, "shutting down");
    assert.equal(shuttingDown.requestsInFlight, 1, "the slow request was in flight when the signal came");
    await assert.rejects(
      Deno.connect({ hostname: "127.0.0.1", port: service.port }),
      "a new connection is refused once shutdown has begun",
    );

    const response = await slow;
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /application\/json/);
    assert.equal(typeof (await response.json()).serverTime, "number");

    const { code } = await service.child.status;
    const exitMs = performance.now() - signalled;
    assert.equal(code, 0);
    assert.ok(exitMs < graceSeconds * 1000, `exited ${Math.round(exitMs)} ms after the signal`);
    await service.streamsClosed;
    assert.ok(service.log.some((entry) => entry.message === "drained"));
    assert.ok(service.log.some((entry) => entry.message === "closed"));
  } finally {
    await stopService(service);
  }

  const wal = await Deno.stat(`${service.databaseUrl.slice("file:".length)}-wal`).catch(() => undefined);
  assert.ok(!wal?.size, "closing folded the WAL back into the database file");
  const db = await openDatabase(service.databaseUrl);
  try {
    const rows = await db.read.values(`SELECT name FROM partners WHERE partner_id = 'drained'`);
    assert.deepEqual(rows, [["Corretora Drenada"]]);
  } finally {
    db.close();
  }
});

Deno.test("past SHUTDOWN_GRACE_SECONDS the request in flight is cut, logged, and the process exits 1", async () => {
  const graceSeconds = 1;
  const service = await startService(graceSeconds);
  try {
    await waitUntilUp(service.url);
    await slowDownVenueA(service, 8_000);

    // Settled at once: the rejection comes while the test still waits for the exit.
    const slow = fetch(`${service.url}/sim/venue-a/fapi/v1/time`).then(() => "answered", () => "dropped");
    await delay(SETTLE_MS);
    const signalled = performance.now();
    service.child.kill("SIGTERM");

    const { code } = await service.child.status;
    const exitMs = performance.now() - signalled;
    assert.equal(code, EXIT_WORK_CUT);
    assert.ok(exitMs >= graceSeconds * 1000 && exitMs < 4_000, `exited ${Math.round(exitMs)} ms after the signal`);
    assert.equal(await slow, "dropped", "the cut request's connection is dropped, not answered");

    await service.streamsClosed;
    const cut = service.log.find((entry) => entry.message === "grace period over: cutting work still in flight");
    assert.equal(cut?.level, "error");
    assert.equal(cut?.requestsInFlight, 1);
    assert.ok(service.log.some((entry) => entry.message === "closed"), "the database is closed even so");
  } finally {
    await stopService(service);
  }
});

Deno.test("a second signal during shutdown exits at once with 1", async () => {
  const service = await startService(10);
  try {
    await waitUntilUp(service.url);
    await slowDownVenueA(service, 8_000);
    const slow = fetch(`${service.url}/sim/venue-a/fapi/v1/time`).then(() => "answered", () => "dropped");
    await delay(SETTLE_MS);
    service.child.kill("SIGTERM");
    await logEntry(service, "shutting down");
    const signalled = performance.now();
    service.child.kill("SIGINT");

    const { code } = await service.child.status;
    const exitMs = performance.now() - signalled;
    assert.equal(code, EXIT_WORK_CUT);
    assert.ok(exitMs < 2_000, `exited ${Math.round(exitMs)} ms after the second signal`);
    assert.equal(await slow, "dropped");
    await service.streamsClosed;
    const second = service.log.find((entry) => entry.message === "second signal during shutdown: exiting now");
    assert.equal(second?.signal, "SIGINT");
  } finally {
    await stopService(service);
  }
});
