/** A small closed-loop HTTP load generator, and the percentile every benchmark reports. */

/** The `q` quantile (0-1) of latency samples, nearest-rank. */
export function percentile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/** `concurrency` loops of requests for `seconds`, every latency recorded. */
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
  return {
    requests: latencies.length,
    rps: latencies.length / elapsed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    errors,
  };
}

export function describe(label: string, r: LoadResult): string {
  return `${label.padEnd(44)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50.toFixed(2)} ms   p99 ${
    r.p99.toFixed(2)
  } ms   (${r.requests} requests, ${r.errors} errors)`;
}
