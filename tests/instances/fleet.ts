/**
 * Several instances of the service over one database, as production runs
 * them: both venue simulators in a process of their own, N service processes
 * (`WatchedService`, one libSQL file, one OPERATOR_TOKEN and MASTER_KEY, each
 * its own port) and a round-robin HTTP proxy on loopback in front of them, so
 * a test talks to one URL and each request lands on the next instance. Every
 * instance also answers at its own URL (`instanceUrl(i)`), for a test that
 * must say where a request goes.
 *
 * The first instance starts alone (it applies the migrations and publishes
 * the QA catalogue); the others start together once it answers.
 *
 * Requests made through `fetch` / `operator` / `partner` remember the secrets
 * they carry in every instance's watch, so `stop()` fails when any
 * instance's output holds one of them.
 */
import { OPERATOR_TOKEN } from "../_helpers/env.ts";
import { freePort, waitUntilUp, WatchedService } from "../_helpers/server.ts";
import { startSimulatorProcess } from "../bench/simulator_process.ts";
import { type Sqld, startSqld } from "../_helpers/sqld.ts";

export { OPERATOR_TOKEN };
export const MASTER_KEY = btoa(String.fromCharCode(...new Uint8Array(32).fill(7)));

export interface FleetOptions {
  /** How many service processes (default 3). */
  instances?: number;
  /** More environment for every instance (it wins over the fleet's own). */
  env?: Record<string, string>;
  /**
   * `file` (default): one libSQL file shared by the processes. `server`: a
   * libSQL server (sqld), reached over Hrana streams, as in production.
   * Default: `FLEET_DATABASE`, else `file`.
   */
  database?: "file" | "server";
  /** Start every instance at once on the fresh database (by default the first migrates it alone). */
  together?: boolean;
}

/** An answer read whole: status, headers, raw text and (when JSON) the parsed body. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** Where a request goes: the proxy (the next instance in turn) or one instance by its index. */
export type Target = "proxy" | number;

export interface Credential {
  clientId: string;
  clientSecret: string;
}

export class Fleet {
  /** Requests served through the proxy, per instance index. */
  readonly served: number[];

  private constructor(
    readonly dir: string,
    readonly databaseUrl: string,
    readonly simulators: Awaited<ReturnType<typeof startSimulatorProcess>>,
    readonly instances: WatchedService[],
    readonly env: Record<string, string>,
    private readonly proxy: Deno.HttpServer<Deno.NetAddr>,
    served: number[],
    private readonly server: Sqld | null,
  ) {
    this.served = served;
  }

  static async start(options: FleetOptions = {}): Promise<Fleet> {
    const count = options.instances ?? 3;
    const dir = await Deno.makeTempDir({ prefix: "svc-fleet-" });
    // FLEET_DATABASE=server runs every fleet test against a libSQL server.
    const database = options.database ?? (Deno.env.get("FLEET_DATABASE") === "server" ? "server" : "file");
    const server = database === "server" ? await startSqld() : null;
    const databaseUrl = server?.url ?? `file:${dir}/service.db`;
    const simulators = await startSimulatorProcess();
    const env: Record<string, string> = {
      DATABASE_URL: databaseUrl,
      OPERATOR_TOKEN,
      MASTER_KEY,
      VENUE_A_URL: simulators.urls.venueA,
      VENUE_A_SPOT_URL: simulators.urls.venueASpot,
      VENUE_B_URL: simulators.urls.venueB,
      LOG_LEVEL: "warn",
      ...options.env,
    };
    const instances: WatchedService[] = [];
    const spawn = () => {
      const service = new WatchedService({ ...env, PORT: String(freePort()) });
      instances.push(service);
      return service;
    };
    try {
      // The first start migrates and seeds; the others then find a database that is ready.
      const first = options.together ? 0 : 1;
      for (let i = 0; i < first; i++) await waitUntilUp(spawn().url);
      await Promise.all(Array.from({ length: count - first }, () => waitUntilUp(spawn().url)));
    } catch (error) {
      await Promise.all(instances.map((service) => service.stop("SIGKILL").catch(() => {})));
      await simulators.stop();
      await server?.stop();
      throw error;
    }
    const served = instances.map(() => 0);
    let next = 0;
    const proxy = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
      const index = next++ % instances.length;
      served[index]++;
      return forward(request, instances[index].url);
    });
    return new Fleet(dir, databaseUrl, simulators, instances, env, proxy, served, server);
  }

  /** The proxy's URL: each request goes to the next instance in turn. */
  get url(): string {
    return `http://127.0.0.1:${this.proxy.addr.port}`;
  }

  instanceUrl(index: number): string {
    return this.instances[index].url;
  }

  /** `fetch` to the proxy or one instance, remembering the secrets that go in and come out. */
  async fetch(target: Target, path: string, init: RequestInit & { headers?: Record<string, string> } = {}) {
    for (const { secrets } of this.instances) {
      secrets.addFromHeaders(init.headers ?? {});
      if (typeof init.body === "string") secrets.addFromJson(JSON.parse(init.body));
    }
    const response = await fetch(`${target === "proxy" ? this.url : this.instanceUrl(target)}${path}`, init);
    for (const { secrets } of this.instances) await secrets.addFromResponse(response);
    return response;
  }

  /** A JSON request read whole. */
  async request(
    target: Target,
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<Answer> {
    const response = await this.fetch(target, path, {
      method,
      headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, text, body: parsed };
  }

  operator(method: string, path: string, body?: unknown, target: Target = "proxy"): Promise<Answer> {
    return this.request(target, method, path, { authorization: `Bearer ${OPERATOR_TOKEN}` }, body);
  }

  partner(
    credential: Credential,
    method: string,
    path: string,
    options: { body?: unknown; target?: Target; idempotencyKey?: string } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = {
      authorization: `Basic ${btoa(`${credential.clientId}:${credential.clientSecret}`)}`,
    };
    if (options.idempotencyKey) headers["idempotency-key"] = options.idempotencyKey;
    return this.request(options.target ?? "proxy", method, path, headers, options.body);
  }

  /** The simulators' control routes (`/_control…`) of one venue, as JSON. */
  async simulator(venue: "venueA" | "venueB", method: string, path: string, body?: unknown) {
    const response = await fetch(`${this.simulators.urls[venue]}/_control${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${venue} /_control${path}: ${response.status} ${text}`);
    return JSON.parse(text);
  }

  /**
   * SIGTERM to every instance (each must exit 0 and its output hold no
   * secret the test handled), then the proxy and the simulators.
   */
  async stop(): Promise<void> {
    const failures: string[] = [];
    const results = await Promise.allSettled(this.instances.map((service) => service.stop("SIGTERM")));
    results.forEach((result, index) => {
      if (result.status === "rejected") failures.push(`instance ${index}: ${result.reason}`);
      else if (result.value.status.code !== 0) {
        failures.push(`instance ${index} exited ${result.value.status.code}: ${result.value.stderr.slice(-2000)}`);
      }
    });
    await this.proxy.shutdown();
    await this.simulators.stop();
    await this.server?.stop();
    if (failures.length) throw new Error(failures.join("\n"));
    await Deno.remove(this.dir, { recursive: true }).catch(() => {});
  }
}

/** Headers that describe one hop's connection, not the message (RFC 9110 §7.6.1), and the proxy's own Host. */
const HOP_BY_HOP = ["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "te", "host"];

/** The request to `base`, bodies streamed both ways, headers kept but the hop's own. */
async function forward(request: Request, base: string): Promise<Response> {
  const url = new URL(request.url);
  const headers = new Headers(request.headers);
  for (const name of HOP_BY_HOP) headers.delete(name);
  try {
    const upstream = await fetch(`${base}${url.pathname}${url.search}`, {
      method: request.method,
      headers,
      body: request.body,
      redirect: "manual",
    });
    const answered = new Headers(upstream.headers);
    for (const name of HOP_BY_HOP) answered.delete(name);
    return new Response(upstream.body, { status: upstream.status, statusText: upstream.statusText, headers: answered });
  } catch (error) {
    return new Response(`proxy: ${base} did not answer: ${error}`, { status: 502 });
  }
}
