/**
 * Running a list of tasks a few at a time: enough in flight to overlap venue
 * round trips, never one burst for the whole list.
 */
export async function eachInPool<T>(items: T[], inFlight: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await run(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, items.length) }, worker));
}

/**
 * Let waiting requests run between two batches of a long job: the embedded
 * database works on the event loop, so a job that never yields freezes the API.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
