/**
 * A TCP relay in front of a server (sqld, for the remote database path):
 * `url` is the server's URL with the relay's port. It can hold every chunk
 * it reads for `delayMs` in each direction before passing it on (a network
 * farther away: each round trip then costs about twice that more, the
 * instances bench's link delay), hold the server's answers on the open
 * connections (`holdAnswers`: requests still reach the server), and cut
 * them (`cut`), so a statement can be in flight when its connection drops.
 * Given a `tally` (hrana_tally.ts), it counts the Hrana requests and
 * statements that pass through it towards the server.
 */
import type { HranaTally } from "./hrana_tally.ts";

export interface TcpRelay {
  url: string;
  /** Connections accepted so far. */
  readonly connections: number;
  holdAnswers(): void;
  /** Pass the held answers on, and whatever comes after them. */
  releaseAnswers(): void;
  /** Close the open connections; connections opened later pass everything. */
  cut(): void;
  close(): Promise<void>;
}

interface Pair {
  client: Deno.Conn;
  server: Deno.Conn;
  held: boolean;
}

export function startTcpRelay(
  serverUrl: string,
  { delayMs = 0, tally }: { delayMs?: number; tally?: HranaTally } = {},
): TcpRelay {
  const target = new URL(serverUrl);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<Pair>();
  const pumps: Promise<void>[] = [];
  let connections = 0;

  const accepting = (async () => {
    for await (const client of listener) {
      connections++;
      const server = await Deno.connect({ hostname: target.hostname, port: Number(target.port) });
      // As the service's own socket does (db/remote_link.ts): no chunk waits for an ACK here either.
      for (const conn of [client, server]) conn.setNoDelay(true);
      const pair: Pair = { client, server, held: false };
      open.add(pair);
      pumps.push(
        pump(client, server, delayMs, () => false, tally?.connection()),
        pump(server, client, delayMs, () => pair.held),
      );
    }
  })();

  const relayUrl = new URL(serverUrl);
  relayUrl.port = String((listener.addr as Deno.NetAddr).port);
  return {
    url: relayUrl.href.replace(/\/$/, ""),
    get connections() {
      return connections;
    },
    holdAnswers() {
      for (const pair of open) pair.held = true;
    },
    releaseAnswers() {
      for (const pair of open) pair.held = false;
    },
    cut() {
      for (const pair of open) {
        pair.held = false;
        closeQuietly(pair.client);
      }
      open.clear();
    },
    async close() {
      this.cut();
      listener.close();
      await accepting.catch(() => {});
      await Promise.all(pumps);
    },
  };
}

/**
 * Copies `from` to `to`, showing each chunk to `observe`. With a delay, each
 * chunk is passed on `delayMs` after it was read, in order, while reading
 * goes on: the link is farther away, not narrower.
 */
async function pump(
  from: Deno.Conn,
  to: Deno.Conn,
  delayMs: number,
  held: () => boolean,
  observe?: (chunk: Uint8Array) => void,
): Promise<void> {
  let forwarded = Promise.resolve();
  try {
    for (;;) {
      const buffer = new Uint8Array(64 * 1024);
      const read = await from.read(buffer);
      if (read === null) break;
      const chunk = buffer.subarray(0, read);
      observe?.(chunk);
      // The hold starts when the chunk is read, not when the one before it left. Timers are coarse: a 1 ms hold
      // measured ~2.2 ms on the bench machine, so the bench prints the round trip it measured through the relay.
      const due = delayMs > 0 ? sleep(delayMs) : undefined;
      forwarded = forwarded.then(async () => {
        await due;
        while (held()) await sleep(5);
        for (let written = 0; written < chunk.length;) written += await to.write(chunk.subarray(written));
      }).catch(() => {
        // The other side is gone: so is this connection (the read below then ends).
        closeQuietly(from);
        closeQuietly(to);
      });
      // Without a delay the chunk goes before the next read, as a plain relay.
      if (delayMs === 0) await forwarded;
    }
  } catch {
    // Cut, or the other side closed: both sides are closed below.
  } finally {
    await forwarded;
    closeQuietly(from);
    closeQuietly(to);
  }
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
