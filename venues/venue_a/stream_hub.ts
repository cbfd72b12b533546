/**
 * The connections of VENUE_A's user data stream, shared by every account one
 * adapter watches: listen keys packed into as few `/private/stream`
 * connections as the venue allows (STREAM_KEYS_PER_CONNECTION each), each
 * event handed to its key's sink by the `stream` name of its wrapper.
 *
 * A connection's keys are fixed by its URL (the venue documents no form of
 * adding a listen key to an open connection), so a connection whose keys
 * changed is replaced: the new one opens first, then the old one closes, and
 * the keys it kept never stop flowing (an event may arrive twice meanwhile,
 * which costs a watcher one read). The same replacement runs before the
 * venue's 24-hour cut. A connection that drops, or stops answering the
 * LIST_SUBSCRIPTIONS probe, reports its keys lost and is reopened with
 * backoff, within the venue's connection attempts per IP.
 *
 * Timers here are wall-clock ones: connections live in real time, whatever
 * clock the service runs on.
 */
import { STREAM_PATH } from "./constants.ts";

/** Where one listen key's traffic goes. */
export interface KeySink {
  /** One event of the key, unwrapped. */
  event(event: Record<string, unknown>): void;
  /** The key's events flow: its connection opened with it. */
  live(): void;
  /** The key's events stopped; the hub is restoring them. */
  lost(reason: string): void;
}

export interface StreamHubOptions {
  /** ws(s) base of the venue's streams, e.g. wss://fstream.binance.com. */
  baseUrl: string;
  /** The events each key asks for (`events=`). */
  events: readonly string[];
  keysPerConnection: number;
  reconnectDelaysMs: readonly number[];
  probeIntervalMs: number;
  probeTimeoutMs: number;
  connectTimeoutMs: number;
  /** Replace a connection this long after it opened (before the venue cuts it). */
  refreshAfterMs: number;
  /** Connection attempts allowed per window (the venue counts them per IP). */
  attempts: { max: number; windowMs: number };
  /** Opens a socket; default the WebSocket client. */
  connect?: (url: string) => WebSocket;
}

export interface StreamHub {
  /** Carries `listenKey`'s events to `sink` from the next connection that opens with it. */
  join(listenKey: string, sink: KeySink): void;
  /** Stops carrying `listenKey`; resolves once a connection left without keys has closed. */
  leave(listenKey: string): Promise<void>;
  /** Connections open or opening, for tests and metrics. */
  connections(): number;
}

/** New keys arriving together (a restart re-watching every account) share one connection attempt. */
const JOIN_DEBOUNCE_MS = 25;
/** How long a closing connection is waited for before it is let go. */
const CLOSE_WAIT_MS = 3000;
const JITTER = 0.2;

type Timer = ReturnType<typeof setTimeout>;

interface Socket {
  ws: WebSocket;
  keys: ReadonlySet<string>;
  dead: boolean;
  lastHeard: number;
  probeId: number;
  timers: Timer[];
  probe?: Timer;
  closed: Promise<void>;
}

interface Entry {
  listenKey: string;
  sink: KeySink;
  line: Line;
  /** The open connection carrying the key, if any. */
  servedBy: Socket | null;
  live: boolean;
}

/** One logical connection: its keys, the socket serving them and the one replacing it. */
interface Line {
  entries: Map<string, Entry>;
  current: Socket | null;
  opening: Socket | null;
  timer?: Timer;
  failures: number;
  refreshDue: boolean;
  /** Sockets closing, awaited when the line ends. */
  closing: Set<Promise<void>>;
}

function safely(run: () => void): void {
  try {
    run();
  } catch {
    // A sink's failure is its own; the hub keeps serving the others.
  }
}

export function createStreamHub(options: StreamHubOptions): StreamHub {
  const connect = options.connect ?? ((url: string) => new WebSocket(url));
  const base = options.baseUrl.replace(/\/+$/, "");
  const lines = new Set<Line>();
  const entries = new Map<string, Entry>();
  const attempts: number[] = [];
  let probeIds = 0;

  function urlOf(keys: Iterable<string>): string {
    const events = options.events.join("/");
    const pairs = [...keys].map((key) => `listenKey=${encodeURIComponent(key)}&events=${events}`);
    return `${base}${STREAM_PATH}?${pairs.join("&")}`;
  }

  function delayAfter(failures: number): number {
    const delays = options.reconnectDelaysMs;
    const delay = delays[Math.min(failures, delays.length - 1)] ?? 1000;
    return Math.round(delay * (1 + Math.random() * JITTER));
  }

  function needsOpen(line: Line): boolean {
    if (line.entries.size === 0) return false;
    if (!line.current || line.refreshDue) return true;
    for (const entry of line.entries.values()) if (entry.servedBy !== line.current) return true;
    return false;
  }

  function schedule(line: Line, delay: number): void {
    if (line.timer !== undefined || line.opening || !lines.has(line)) return;
    line.timer = setTimeout(() => {
      line.timer = undefined;
      open(line);
    }, delay);
  }

  /** Waits until the connection attempts of the window leave room for one more; 0 when there is room. */
  function attemptWait(): number {
    const now = performance.now();
    while (attempts.length > 0 && now - attempts[0] >= options.attempts.windowMs) attempts.shift();
    return attempts.length < options.attempts.max ? 0 : options.attempts.windowMs - (now - attempts[0]);
  }

  function open(line: Line): void {
    if (!needsOpen(line) || line.opening) return;
    const wait = attemptWait();
    if (wait > 0) return schedule(line, wait);
    attempts.push(performance.now());
    const keys = new Set(line.entries.keys());
    line.refreshDue = false;
    let ws: WebSocket;
    try {
      ws = connect(urlOf(keys));
    } catch {
      line.failures++;
      return schedule(line, delayAfter(line.failures));
    }
    let closed!: () => void;
    const socket: Socket = {
      ws,
      keys,
      dead: false,
      lastHeard: performance.now(),
      probeId: 0,
      timers: [],
      closed: new Promise((resolve) => closed = resolve),
    };
    line.opening = socket;
    socket.timers.push(
      setTimeout(() => lost(line, socket, "the stream connection did not open in time"), options.connectTimeoutMs),
    );
    ws.onopen = () => opened(line, socket);
    ws.onmessage = (message) => received(line, socket, message.data);
    ws.onclose = (event) => {
      closed();
      lost(line, socket, `the stream connection closed (code ${event.code}${event.reason ? `, ${event.reason}` : ""})`);
    };
    ws.onerror = () => {};
  }

  function opened(line: Line, socket: Socket): void {
    if (socket.dead) return;
    clearTimers(socket);
    const old = line.current;
    line.opening = null;
    line.current = socket;
    line.failures = 0;
    socket.lastHeard = performance.now();
    for (const key of socket.keys) {
      const entry = line.entries.get(key);
      if (!entry) continue;
      entry.servedBy = socket;
      if (!entry.live) {
        entry.live = true;
        safely(() => entry.sink.live());
      }
    }
    socket.timers.push(setInterval(() => probe(line, socket), options.probeIntervalMs));
    socket.timers.push(setTimeout(() => {
      line.refreshDue = true;
      schedule(line, 0);
    }, options.refreshAfterMs));
    if (old) retire(line, old);
    if (needsOpen(line)) schedule(line, JOIN_DEBOUNCE_MS);
  }

  /** A quiet connection must answer LIST_SUBSCRIPTIONS; any frame counts as the answer. */
  function probe(line: Line, socket: Socket): void {
    if (socket.dead || socket.probe !== undefined) return;
    if (performance.now() - socket.lastHeard < options.probeIntervalMs) return;
    try {
      socket.ws.send(JSON.stringify({ method: "LIST_SUBSCRIPTIONS", id: socket.probeId = ++probeIds }));
    } catch {
      return lost(line, socket, "the stream connection could not be written to");
    }
    socket.probe = setTimeout(
      () => lost(line, socket, "the stream connection stopped answering"),
      options.probeTimeoutMs,
    );
  }

  function received(line: Line, socket: Socket, data: unknown): void {
    if (socket.dead) return;
    socket.lastHeard = performance.now();
    if (socket.probe !== undefined) {
      clearTimeout(socket.probe);
      socket.probe = undefined;
    }
    let frame: unknown;
    try {
      frame = JSON.parse(String(data));
    } catch {
      return;
    }
    if (typeof frame !== "object" || frame === null || Array.isArray(frame)) return;
    const message = frame as Record<string, unknown>;
    // Answers to our own requests ({result, id} or {code, msg}) carry no event.
    if (message.e === undefined && message.data === undefined) return;
    const wrapped = typeof message.stream === "string" && typeof message.data === "object" && message.data !== null;
    const event = (wrapped ? message.data : message) as Record<string, unknown>;
    const named = wrapped ? message.stream as string : typeof event.listenKey === "string" ? event.listenKey : null;
    // Unwrapped and unnamed, an event can belong to any key of the connection: each is told (a push is a hint to read).
    const keys = named !== null ? [named] : [...socket.keys];
    for (const key of keys) {
      const entry = line.entries.get(key);
      if (entry && socket.keys.has(key)) safely(() => entry.sink.event(event));
    }
  }

  /** The socket failed or dropped: its keys are lost, and the line reopens with backoff. Idempotent. */
  function lost(line: Line, socket: Socket, reason: string): void {
    if (socket.dead) return;
    socket.dead = true;
    clearTimers(socket);
    close(line, socket);
    if (line.opening === socket) {
      line.opening = null;
      line.failures++;
      // A failed replacement leaves the old connection serving; it is retried all the same.
      if (line.current) line.refreshDue = true;
      return schedule(line, delayAfter(line.failures));
    }
    if (line.current !== socket) return;
    line.current = null;
    for (const entry of line.entries.values()) {
      if (entry.servedBy !== socket) continue;
      entry.servedBy = null;
      if (entry.live) {
        entry.live = false;
        safely(() => entry.sink.lost(reason));
      }
    }
    schedule(line, delayAfter(line.failures));
  }

  /** A replaced socket closes without its keys being lost (they flow on the new one). */
  function retire(line: Line, socket: Socket): void {
    socket.dead = true;
    clearTimers(socket);
    close(line, socket);
  }

  function close(line: Line, socket: Socket): void {
    if (socket.ws.readyState === WebSocket.CLOSED) return;
    try {
      socket.ws.close(1000);
    } catch {
      // Closing already.
    }
    let timer: Timer | undefined;
    const waited = Promise.race([
      socket.closed,
      new Promise<void>((resolve) => timer = setTimeout(resolve, CLOSE_WAIT_MS)),
    ]).then(() => {
      clearTimeout(timer);
      line.closing.delete(waited);
    });
    line.closing.add(waited);
  }

  function clearTimers(socket: Socket): void {
    for (const timer of socket.timers) clearTimeout(timer);
    socket.timers = [];
    if (socket.probe !== undefined) clearTimeout(socket.probe);
    socket.probe = undefined;
  }

  async function end(line: Line): Promise<void> {
    lines.delete(line);
    if (line.timer !== undefined) clearTimeout(line.timer);
    line.timer = undefined;
    for (const socket of [line.opening, line.current]) if (socket) retire(line, socket);
    line.opening = null;
    line.current = null;
    while (line.closing.size > 0) await Promise.all([...line.closing]);
  }

  return {
    join(listenKey, sink) {
      if (entries.has(listenKey)) throw new Error(`Listen key already joined`);
      let line = [...lines].find((l) => l.entries.size < options.keysPerConnection);
      if (!line) {
        line = { entries: new Map(), current: null, opening: null, failures: 0, refreshDue: false, closing: new Set() };
        lines.add(line);
      }
      const entry: Entry = { listenKey, sink, line, servedBy: null, live: false };
      line.entries.set(listenKey, entry);
      entries.set(listenKey, entry);
      schedule(line, JOIN_DEBOUNCE_MS);
    },
    async leave(listenKey) {
      const entry = entries.get(listenKey);
      if (!entry) return;
      entries.delete(listenKey);
      const { line } = entry;
      line.entries.delete(listenKey);
      // A connection keeps a departed key in its URL until it is next replaced; its events find no sink.
      if (line.entries.size === 0) await end(line);
    },
    connections() {
      let count = 0;
      for (const line of lines) count += (line.current ? 1 : 0) + (line.opening ? 1 : 0);
      return count;
    },
  };
}
