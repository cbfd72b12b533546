/**
 * Requests to URLs someone else gave us, treated as hostile: the target is
 * checked by every address it resolves to (outbound_policy.ts) before each
 * request, and the connection goes to a checked address (node's `lookup`
 * hook answers with them; TLS still verifies the certificate for the URL's
 * name). Redirects are never followed: a 3xx is an answer like any other, for
 * the caller to judge. At most `excerptBytes` of the answer's body are read,
 * then the connection is dropped, so an endpoint that streams without end
 * costs nothing.
 *
 * `fetch` offers none of these hooks (its resolver cannot be pinned), hence
 * node's http client, which Deno implements with the same `lookup` contract.
 * Connections are kept alive per target and per set of checked addresses: a
 * pooled connection only ever goes where the latest check allowed, and when
 * a name starts resolving elsewhere its old pool is closed. (Without reuse, a
 * burst of deliveries ran at half the rate, a TLS handshake each.)
 */
import http from "node:http";
import https from "node:https";
import type { LookupAddress } from "node:dns";
import { checkedAddresses, type OutboundPolicy, OutboundRefusal } from "./outbound_policy.ts";

export interface GuardedPost {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  excerptBytes: number;
}

export type GuardedAnswer =
  /** The endpoint answered: its status and the start of its body (a 3xx: where it pointed, not followed). */
  | { kind: "answered"; status: number; excerpt: string }
  /** No answer: refused before connecting, a transport failure, or the time ran out. */
  | { kind: "failed"; reason: string };

/** Idle pooled connections per target, and how long one may stay idle. */
const POOL = { maxSockets: 8, maxFreeSockets: 4, idleMs: 30_000 };

export class OutboundClient {
  /** Per target origin: the addresses its pool connects to, and the pool. */
  readonly #pools = new Map<string, { addresses: string; agent: http.Agent }>();

  constructor(readonly policy: OutboundPolicy) {}

  async post(post: GuardedPost): Promise<GuardedAnswer> {
    const url = new URL(post.url);
    let addresses: string[];
    try {
      addresses = await checkedAddresses(this.policy, url);
    } catch (error) {
      if (error instanceof OutboundRefusal) return { kind: "failed", reason: `destino recusado: ${error.message}` };
      throw error;
    }
    return await send(url, post, addresses, this.#poolOf(url, addresses), this.policy.caCerts);
  }

  /** Closes every pooled connection (at shutdown, or when a test's service stops). */
  close(): void {
    for (const { agent } of this.#pools.values()) agent.destroy();
    this.#pools.clear();
  }

  #poolOf(url: URL, addresses: string[]): http.Agent {
    const key = [...addresses].sort().join(",");
    const pool = this.#pools.get(url.origin);
    if (pool?.addresses === key) return pool.agent;
    pool?.agent.destroy();
    const options = { keepAlive: true, maxSockets: POOL.maxSockets, maxFreeSockets: POOL.maxFreeSockets };
    const agent = url.protocol === "https:"
      ? new https.Agent({ ...options, timeout: POOL.idleMs })
      : new http.Agent({ ...options, timeout: POOL.idleMs });
    this.#pools.set(url.origin, { addresses: key, agent });
    return agent;
  }
}

function send(
  url: URL,
  post: GuardedPost,
  addresses: string[],
  agent: http.Agent,
  caCerts: string[] | undefined,
): Promise<GuardedAnswer> {
  return new Promise<GuardedAnswer>((resolve) => {
    let settled = false;
    /** `keep`: the answer was read to its end, so its connection may serve the next request. */
    const settle = (answer: GuardedAnswer, keep = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!keep) request.destroy();
      resolve(answer);
    };
    const body = new TextEncoder().encode(post.body);
    const request = (url.protocol === "https:" ? https : http).request({
      method: "POST",
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      headers: { ...post.headers, "content-length": String(body.byteLength) },
      agent,
      lookup: pinnedLookup(addresses),
      ...(caCerts ? { ca: caCerts } : {}),
    }, (response) => {
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        const location = String(response.headers.location ?? "").slice(0, 200);
        settle({ kind: "answered", status, excerpt: `redirecionamento não seguido: ${location}` });
        return;
      }
      const decoder = new TextDecoder();
      let excerpt = "";
      let read = 0;
      response.on("data", (chunk: Uint8Array) => {
        const wanted = chunk.subarray(0, post.excerptBytes - read);
        read += wanted.byteLength;
        excerpt += decoder.decode(wanted, { stream: true });
        if (read >= post.excerptBytes) settle({ kind: "answered", status, excerpt });
      });
      response.on("end", () => settle({ kind: "answered", status, excerpt }, true));
      // The body broke off after the status: the endpoint still answered.
      response.on("error", () => settle({ kind: "answered", status, excerpt }));
    });
    const timer = setTimeout(
      () => settle({ kind: "failed", reason: `timeout after ${post.timeoutMs} ms` }),
      post.timeoutMs,
    );
    request.on("error", (error) => settle({ kind: "failed", reason: transportFailure(error) }));
    request.end(body);
  });
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

/** Node's `lookup` hook answering only the addresses already checked, whatever the name resolves to now. */
function pinnedLookup(addresses: string[]) {
  const entries = addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  return (_hostname: string, options: { all?: boolean }, callback: LookupCallback) => {
    if (options.all) callback(null, entries);
    else callback(null, entries[0].address, entries[0].family);
  };
}

/** What went wrong on the way, for the operator: the system's code (ECONNREFUSED, ECONNRESET…) and its words. */
function transportFailure(error: Error & { code?: string }): string {
  return `conexão falhou: ${[error.code, error.message].filter(Boolean).join(" ")}`;
}
