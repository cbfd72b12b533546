/**
 * Background WAL checkpoints for the embedded database, on a connection of
 * their own in a worker: copying WAL pages back into the file and its fsync
 * then never run on the event loop that serves requests. PASSIVE checkpoints
 * never block the writer; what they cannot copy yet waits for the next round.
 */
import Libsql from "libsql";

const INTERVAL_MS = 250;
/** This module runs as a worker: its global scope is the worker's. */
const worker = self as unknown as { onmessage: (event: MessageEvent) => void; postMessage(message: unknown): void };

worker.onmessage = (event: MessageEvent<{ path: string }>) => {
  let engine: InstanceType<typeof Libsql>;
  try {
    engine = new Libsql(event.data.path);
    engine.exec("PRAGMA busy_timeout = 1000");
  } catch (error) {
    worker.postMessage({ error: String(error) });
    return;
  }
  setInterval(() => {
    try {
      engine.exec("PRAGMA wal_checkpoint(PASSIVE)");
    } catch (error) {
      // Busy or interrupted: the next round retries; report anything else to the main thread.
      worker.postMessage({ error: String(error) });
    }
  }, INTERVAL_MS);
};
