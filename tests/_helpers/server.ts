/** The service as its own process (`deno run main.ts`), for tests that need a real server: start-up, crashes. */
import { dataDirOf, parseConfig } from "../../config.ts";
import { SecretWatch } from "./secret_watch.ts";

export const MAIN = new URL("../../main.ts", import.meta.url).pathname;

export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

export function spawnService(env: Record<string, string>): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-cron", MAIN],
    env: { ...env, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

export async function waitUntilUp(url: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      const response = await fetch(`${url}/v1/openapi.json`);
      await response.body?.cancel();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("The service did not start");
}

/** Secrets a QA service generates in its data dir on first start (config.ts `withQaSecrets`). */
const GENERATED_SECRET_FILES = ["operator_token", "master_key"];

/**
 * A spawned service whose output is checked, when it is stopped, for every
 * secret the test handled: the ones configured or generated, and every secret
 * field of the requests and JSON answers that went through `fetch`.
 */
export class WatchedService {
  readonly url: string;
  readonly child: Deno.ChildProcess;
  readonly secrets = new SecretWatch();
  readonly #env: Record<string, string>;
  /** stdout and stderr, read as they come: a pipe nobody reads fills up and blocks the service. */
  readonly #output: Promise<[string, string]>;

  constructor(env: Record<string, string> & { PORT: string }) {
    this.#env = env;
    this.url = `http://127.0.0.1:${env.PORT}`;
    for (const name of ["OPERATOR_TOKEN", "MASTER_KEY", "DATABASE_AUTH_TOKEN"]) this.secrets.add(name, env[name]);
    this.child = spawnService(env);
    this.#output = Promise.all([new Response(this.child.stdout).text(), new Response(this.child.stderr).text()]);
  }

  /** `fetch(url + path)`, remembering the secrets that go in and come out. */
  async fetch(path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
    this.secrets.addFromHeaders(init.headers ?? {});
    if (init.body) this.secrets.addFromJson(JSON.parse(init.body));
    const response = await fetch(`${this.url}${path}`, init);
    await this.secrets.addFromResponse(response);
    return response;
  }

  kill(signal: Deno.Signal): void {
    try {
      this.child.kill(signal);
    } catch {
      // already exited
    }
  }

  /** Stop the process (if still running) and fail if its output holds a secret; answers the output. */
  async stop(signal: Deno.Signal): Promise<{ status: Deno.CommandStatus; stdout: string; stderr: string }> {
    this.kill(signal);
    const status = await this.child.status;
    const [stdout, stderr] = await this.#output;
    const dataDir = dataDirOf(parseConfig(this.#env));
    for (const file of GENERATED_SECRET_FILES) {
      this.secrets.add(
        file,
        await Deno.readTextFile(`${dataDir}/${file}`).then((text) => text.trim(), () => undefined),
      );
    }
    this.secrets.assertNotIn(stdout.split("\n"), "The service's stdout");
    this.secrets.assertNotIn(stderr.split("\n"), "The service's stderr");
    return { status, stdout, stderr };
  }
}
