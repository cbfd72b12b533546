/**
 * Both venue simulators in a process of their own (`venues/sim/main.ts` on a
 * free port), so a benchmark's figures are the service's work and not the
 * venues'. Answers their base URLs and a way to stop them.
 */
export async function startSimulatorProcess() {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("../../venues/sim/main.ts", import.meta.url).pathname],
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
    urls: { venueA: `${base}/sim/venue-a`, venueASpot: `${base}/sim/venue-a-spot`, venueB: `${base}/sim/venue-b` },
    async stop() {
      child.kill();
      await child.status;
      await child.stdout.cancel().catch(() => {});
    },
  };
}
