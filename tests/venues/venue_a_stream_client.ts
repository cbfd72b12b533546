/**
 * A bare WebSocket client for the VENUE_A user data stream tests: it keeps
 * every frame as the simulator sent it, so tests assert the wire itself.
 */

export interface StreamClient {
  /** Every JSON frame received so far, in order. */
  frames: Record<string, unknown>[];
  /** Resolves with the first frame (from `from` on) matching `match`, or fails after `timeoutMs`. */
  next(match: (frame: Record<string, unknown>) => boolean, from?: number, timeoutMs?: number): Promise<number>;
  send(message: unknown): void;
  /** Resolves when the server closes the connection, with its code. */
  closed: Promise<{ code: number; reason: string }>;
  close(): Promise<void>;
}

/** Opens `url` and waits until it is open. */
export async function openStream(url: string): Promise<StreamClient> {
  const socket = new WebSocket(url);
  const frames: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.onclose = (event) => resolve({ code: event.code, reason: event.reason });
  });
  socket.onmessage = (message) => {
    frames.push(JSON.parse(String(message.data)));
    for (const wake of waiters) wake();
  };
  await new Promise<void>((resolve, reject) => {
    socket.onopen = () => resolve();
    socket.onerror = () => reject(new Error(`Could not open ${url}`));
  });
  socket.onerror = () => {};

  return {
    frames,
    next(match, from = 0, timeoutMs = 3000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const index = frames.findIndex((frame, i) => i >= from && match(frame));
          if (index < 0) return false;
          clearTimeout(timer);
          waiters.delete(wake);
          resolve(index);
          return true;
        };
        const wake = () => void check();
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`No matching frame within ${timeoutMs} ms; got ${JSON.stringify(frames.slice(from))}`));
        }, timeoutMs);
        waiters.add(wake);
        check();
      });
    },
    send(message) {
      socket.send(typeof message === "string" ? message : JSON.stringify(message));
    },
    closed,
    async close() {
      if (socket.readyState !== WebSocket.CLOSED) socket.close();
      await closed;
    },
  };
}

/** Lets pending frames arrive, for assertions that something was not pushed. */
export function settle(ms = 150): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
