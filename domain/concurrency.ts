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

/**
 * Independent work started together (on a libSQL server, statements issued
 * at once leave in one round trip), answered as if it had run one after
 * another: every result, or the failure of the first to fail in the order
 * given, after all have settled, so nothing is still running when it throws.
 * Inside a write transaction, work issued together cannot commit in part: a
 * statement that finds its transaction ended (a full disk, a server's
 * transaction timeout) is refused, never run on its own (db/connection.ts,
 * TransactionEnded), and the failure rolls the unit back.
 */
export async function inOrder<T extends readonly unknown[]>(
  started: readonly [...{ [K in keyof T]: T[K] | Promise<T[K]> }],
): Promise<T> {
  await Promise.allSettled(started);
  // All settled: Promise.all's reactions run in the order given, so the first failure in that order rejects it.
  return await Promise.all(started) as unknown as T;
}
