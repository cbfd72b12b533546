/** A small closed-loop HTTP load generator: `concurrency` loops for `seconds`, latencies recorded. */

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

export async function load(
  url: string,
  headers: Record<string, string>,
  { concurrency = 32, seconds = 5 }: { concurrency?: number; seconds?: number } = {},
): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const response = await fetch(url, { headers });
      await response.arrayBuffer();
      latencies.push(performance.now() - t0);
      if (!response.ok) errors++;
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pick = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { requests: latencies.length, rps: latencies.length / elapsed, p50: pick(0.5), p99: pick(0.99), errors };
}

export function describe(label: string, r: LoadResult): string {
  return `${label.padEnd(44)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50.toFixed(2)} ms   p99 ${
    r.p99.toFixed(2)
  } ms   (${r.requests} requests, ${r.errors} errors)`;
}
