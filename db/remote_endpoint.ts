/**
 * Where a database URL's WebSocket goes (db/remote.ts).
 */
/** Where the WebSocket goes and with which token (`DATABASE_AUTH_TOKEN`, or `authToken` in the URL). */
export interface RemoteEndpoint {
  url: string;
  authToken?: string;
}

/**
 * The WebSocket endpoint of a database URL. `libsql:` is `wss:` (`ws:` with
 * `?tls=0`, as `@libsql/client` reads it). `http(s):` goes to the WebSocket
 * endpoint of the same host: sqld (and Turso) accept the upgrade on their HTTP
 * port, and a reused HTTP stream measured 0.87 ms wall and 0.44 ms of sqld's
 * CPU per `SELECT 1` against 0.30 and 0.16 over a WebSocket. An HTTP stream
 * also has one request in flight at a time (each answer carries the baton the
 * next request needs): statements that arrive meanwhile wait for its answer.
 */
export function remoteEndpoint(databaseUrl: string, authToken?: string): RemoteEndpoint {
  const url = new URL(databaseUrl);
  const scheme = url.protocol.slice(0, -1);
  let tls: boolean | undefined;
  for (const [key, value] of url.searchParams) {
    if (key === "authToken") authToken = value;
    else if (key === "tls" && scheme === "libsql" && (value === "0" || value === "1")) tls = value === "1";
    else throw new Error(`The database URL's query parameter "${key}" is not supported`);
  }
  if (url.hash) throw new Error("The database URL must not have a fragment");
  const socketScheme =
    ({ libsql: tls === false ? "ws" : "wss", wss: "wss", https: "wss", ws: "ws", http: "ws" } as Record<
      string,
      string
    >)[scheme];
  if (!socketScheme) {
    throw new Error(`The database URL scheme "${scheme}:" is not supported: use libsql:, wss:, ws:, https: or http:`);
  }
  if (scheme === "libsql" && tls === false && !url.port) {
    throw new Error('A "libsql:" database URL with ?tls=0 must name its port');
  }
  return { url: `${socketScheme}://${url.host}${url.pathname}`, authToken };
}
