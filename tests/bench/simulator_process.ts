/**
 * Both venue simulators in a process of their own (`venues/sim/main.ts` on a
 * free port, or `entry`, a script serving them the same way), so a
 * benchmark's figures are the service's work and not the venues'. Answers
 * their base URLs, the CPU time they used and a way to stop them.
 */
import { cpuSeconds } from "./process_sampler.ts";

export async function startSimulatorProcess(entry = new URL("../../venues/sim/main.ts", import.meta.url)) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", entry.pathname],
    env: { PORT: "0", SERVICE_ENV: "qa" },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/http:\/\/[\d.]+:\d+/.test(seen)) {
    const { value, done } = await lines.read();
    if (done) throw new Error(`The simulators stopped before listening: ${seen}`);
    seen += value;
  }
  lines.releaseLock();
  const base = seen.match(/http:\/\/[\d.]+:\d+/)![0];
  return {
    /** CPU seconds the simulators have used so far (Linux: /proc, at the kernel's 100 ticks a second). */
    /** CPU seconds the simulators have used so far. */
    cpuSeconds: () => cpuSeconds(child.pid),
    urls: { venueA: `${base}/sim/venue-a`, venueASpot: `${base}/sim/venue-a-spot`, venueB: `${base}/sim/venue-b` },
    /** The process's own origin (`entry`'s routes beside the simulators'). */
    base,
    pid: child.pid,
    async stop() {
      child.kill();
      await child.status;
      await child.stdout.cancel().catch(() => {});
    },
  };
}

/** A simulator's control route (`/_control/...`: accounts, wallets, markets, limits, faults), answered as JSON. */
export async function simControl(base: string, method: string, path: string, body: unknown) {
  const response = await fetch(`${base}/_control${path}`, { method, body: JSON.stringify(body) });
  return await response.json();
}
