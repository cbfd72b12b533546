/**
 * A POST to a URL someone else gave us, treated as hostile: the target is
 * checked by every address it resolves to (outbound_policy.ts) and the
 * connection goes to a checked address (node's `lookup` hook answers with
 * them; TLS still verifies the certificate for the URL's name). Redirects are
 * never followed: a 3xx is an answer like any other, for the caller to judge.
 * At most `excerptBytes` of the answer's body are read, then the connection
 * is dropped, so an endpoint that streams without end costs nothing.
 *
 * `fetch` offers none of these hooks (its resolver cannot be pinned), hence
 * node's http client, which Deno implements with the same `lookup` contract.
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

export async function postGuarded(policy: OutboundPolicy, post: GuardedPost): Promise<GuardedAnswer> {
  const url = new URL(post.url);
  let addresses: string[];
  try {
    addresses = await checkedAddresses(policy, url);
  } catch (error) {
    if (error instanceof OutboundRefusal) return { kind: "failed", reason: `destino recusado: ${error.message}` };
    throw error;
  }
  return await new Promise<GuardedAnswer>((resolve) => {
    let settled = false;
    const settle = (answer: GuardedAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
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
      // One connection per request: a pooled one could outlive the check that allowed its address.
      agent: false,
      lookup: pinnedLookup(addresses),
      ...(policy.caCerts ? { ca: policy.caCerts } : {}),
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
      response.on("end", () => settle({ kind: "answered", status, excerpt }));
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
