/**
 * Where the service may send a request on someone else's behalf (today: a
 * partner's webhook endpoint). A target is checked by the addresses it
 * resolves to, every one of them, when it is registered and again before
 * every request, and the request connects only to an address that was
 * checked (guarded_post.ts), so a name that answers a public address at
 * registration and a private one later (DNS rebinding) reaches nothing.
 *
 * URLs from the operator's own configuration (venue hosts, EVM RPC nodes,
 * the QA simulators) are trusted and do not pass through here.
 */
import { lookup } from "node:dns/promises";
import { type AddressRefusal, addressRefusal, ipLiteralOf } from "./address_policy.ts";

export interface OutboundPolicy {
  /**
   * Loopback targets (127.0.0.0/8, ::1, localhost), over http too: only for a
   * receiver on the same machine in QA and tests (OUTBOUND_ALLOW_LOOPBACK;
   * production refuses to start with it).
   */
  allowLoopback: boolean;
  /** Every address `hostname` resolves to now (A and AAAA), or none. */
  resolveHost(hostname: string): Promise<string[]>;
  /** Trusted roots instead of the system's (a test's own certificate authority). */
  caCerts?: string[];
}

/** The system resolver, as any other request of this machine would resolve the name. */
export async function systemResolveHost(hostname: string): Promise<string[]> {
  try {
    return (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);
  } catch {
    return [];
  }
}

export function outboundPolicy(
  config: { allowLoopbackTargets: boolean },
  overrides: Partial<OutboundPolicy> = {},
): OutboundPolicy {
  return { allowLoopback: config.allowLoopbackTargets, resolveHost: systemResolveHost, ...overrides };
}

/** Why a target may not be reached, in words for the operator (pt-BR). */
export class OutboundRefusal extends Error {}

/**
 * The addresses a request to `url` may connect to: all that its host
 * resolves to, each allowed. Refuses (OutboundRefusal) a scheme other than
 * https (http only to an allowed loopback), credentials in the URL, a host
 * that does not resolve, and any refused address among the answers: one bad
 * answer is enough, since the connection could pick it.
 */
export async function checkedAddresses(policy: OutboundPolicy, url: URL): Promise<string[]> {
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new OutboundRefusal("só https é aceito");
  if (url.username || url.password) throw new OutboundRefusal("a URL não pode ter credenciais");
  const addresses = await addressesOf(policy, url.hostname);
  if (!addresses.length) throw new OutboundRefusal(`o nome ${url.hostname} não resolve para nenhum endereço`);
  for (const address of addresses) {
    const refusal = addressRefusal(address);
    if (refusal && !(refusal === "loopback" && policy.allowLoopback)) throw refusedAddress(address, refusal);
  }
  const allLoopback = addresses.every((address) => addressRefusal(address) === "loopback");
  if (url.protocol === "http:" && !allLoopback) {
    throw new OutboundRefusal("só https é aceito (http apenas para loopback em QA, com OUTBOUND_ALLOW_LOOPBACK)");
  }
  return addresses;
}

/** An IP literal is its own address; `localhost` and its subdomains are loopback whatever a resolver says. */
async function addressesOf(policy: OutboundPolicy, hostname: string): Promise<string[]> {
  const literal = ipLiteralOf(hostname);
  if (literal !== null) return [literal];
  const name = hostname.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return ["127.0.0.1", "::1"];
  return await policy.resolveHost(name);
}

function refusedAddress(address: string, refusal: AddressRefusal): OutboundRefusal {
  return new OutboundRefusal(`o destino ${address} é um endereço ${refusal}; só endereços públicos são aceitos`);
}
