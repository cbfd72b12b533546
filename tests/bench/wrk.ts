/**
 * Load from `wrk`, a native load generator in its own process, so a benchmark
 * measures the server and not the client (a Deno script driving load saturates
 * near 26,000 req/s, below what a bare Deno.serve answers). Installed from
 * Debian's packages when missing.
 */

export interface WrkResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Answers outside 2xx/3xx, and socket errors: a benchmark with either is suspect. */
  non2xx: number;
  socketErrors: number;
  /** wrk's whole report, with whatever the script's done() printed. */
  output: string;
}

export interface WrkOptions {
  headers?: Record<string, string>;
  seconds: number;
  threads?: number;
  connections?: number;
  /** A Lua script (e.g. to build POST bodies) and the arguments it receives after `--`. */
  script?: string;
  scriptArgs?: string[];
}

/** The path of `wrk`, installing Debian's package when it is missing. */
export async function ensureWrk(): Promise<string> {
  if (await exists("wrk")) return "wrk";
  const root = Deno.uid?.() === 0;
  const apt = (args: string[]) => root ? run("apt-get", args) : run("sudo", ["-n", "apt-get", ...args]);
  console.error("wrk is missing: installing Debian's package");
  if (!(await apt(["install", "-y", "-q", "wrk"]))) {
    await apt(["update", "-q"]);
    if (!(await apt(["install", "-y", "-q", "wrk"]))) throw new Error("Could not install wrk (apt-get install wrk)");
  }
  return "wrk";
}

export async function runWrk(url: string, options: WrkOptions): Promise<WrkResult> {
  const args = [
    `-t${options.threads ?? 2}`,
    `-c${options.connections ?? 32}`,
    `-d${options.seconds}s`,
    "--latency",
    ...Object.entries(options.headers ?? {}).flatMap(([name, value]) => ["-H", `${name}: ${value}`]),
    ...(options.script ? ["-s", options.script] : []),
    url,
    ...(options.scriptArgs?.length ? ["--", ...options.scriptArgs] : []),
  ];
  const output = await new Deno.Command("wrk", { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(output.stdout);
  if (!output.success) throw new Error(`wrk failed: ${new TextDecoder().decode(output.stderr)}`);
  return parseWrk(text);
}

export function parseWrk(text: string): WrkResult {
  const number = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? "0");
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  return {
    rps: number(/Requests\/sec:\s+([\d.]+)/),
    p50Ms: latencyMs(/^\s+50%\s+([\d.]+)(us|ms|s)\s*$/m.exec(text)),
    p99Ms: latencyMs(/^\s+99%\s+([\d.]+)(us|ms|s)\s*$/m.exec(text)),
    requests: number(/(\d+) requests in/),
    non2xx: number(/Non-2xx or 3xx responses: (\d+)/),
    socketErrors: errors ? errors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
    output: text,
  };
}

function latencyMs(match: RegExpExecArray | null): number {
  if (!match) return NaN;
  const value = Number(match[1]);
  return match[2] === "us" ? value / 1000 : match[2] === "s" ? value * 1000 : value;
}

async function run(command: string, args: string[]): Promise<boolean> {
  try {
    const { success } = await new Deno.Command(command, { args, stdout: "null", stderr: "inherit" }).output();
    return success;
  } catch {
    return false;
  }
}

/** Whether the command can be started at all (wrk exits non-zero on --version). */
async function exists(command: string): Promise<boolean> {
  try {
    await new Deno.Command(command, { args: ["--version"], stdout: "null", stderr: "null" }).output();
    return true;
  } catch {
    return false;
  }
}
