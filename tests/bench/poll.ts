/**
 * The API's answer time under a background load, as a client polling every
 * `intervalMs` sees it: each request's latency counts from when it was due,
 * so time the event loop spent blocked before the request could even start
 * is in the figure (a poller that waits for each answer before scheduling
 * the next would hide exactly those stalls).
 */
export function pollLatencies(request: (index: number) => Promise<unknown>, intervalMs = 5) {
  const latencies: number[] = [];
  let running = true;
  const loop = (async () => {
    let due = performance.now();
    for (let index = 0; running; index++) {
      await request(index);
      latencies.push(performance.now() - due);
      due += intervalMs;
      const wait = due - performance.now();
      // Behind schedule (the loop was blocked): the next request is due already.
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      else due = performance.now();
    }
  })();
  return {
    async stop(): Promise<number[]> {
      running = false;
      await loop;
      return latencies;
    },
  };
}
