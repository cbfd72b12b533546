/**
 * The hosted pages' JSON APIs (`/connect/api/*`, `/pay/api/*`), which the
 * OpenAPI documents leave out. A case names what it sends symbolically (the
 * current ticket of a slot, a spent token, a signature by the wrong wallet),
 * and `resolveHosted` turns it into a request against the world as it is at
 * that moment: the link still live, the message the session waits for signed
 * for real (EIP-712, viem), or with another chain id, nonce or wallet.
 */
import fc from "fast-check";
import { eq } from "drizzle-orm";
import { connectSessions, paymentSessions } from "../../db/schema.ts";
import { userSignedTypedData } from "../../venues/venue_b/signing.ts";
import { anyJson, type FuzzRequest, hostileString, oneIn, type Operation, valueOf } from "./fuzz.ts";
import type { FuzzWorld, Slot } from "./fuzz_world.ts";
import { SLOTS } from "./fuzz_world.ts";
import type { Wallet } from "../connect/connect_fixture.ts";

interface Endpoint {
  method: "GET" | "POST";
  path: string;
  /** Every status the route may answer (spec, Errors; 413 and 429 apply to all). */
  statuses: number[];
  /** What a plausible body holds. */
  body?: Record<string, fc.Arbitrary<unknown>>;
  /** The sessions a case is about, repeated for weight: mostly those of the endpoint's flow, some of another. */
  slots: Slot[];
}

const ANY_CONNECT: Slot[] = ["connectA", "connectA", "connectB", "connectB", "approvalB", "approvalB", "pay"];
const WALLET_FLOW: Slot[] = ["connectB", "connectB", "connectB", "approvalB", "approvalB", "connectA", "pay"];
const PAY_FLOW: Slot[] = ["pay", "pay", "pay", "pay", "connectB"];

/** A value chosen when the request is sent, from the world as it is then. */
export class Ref {
  constructor(readonly kind: RefKind, readonly variant: string) {}
}
type RefKind = "token" | "ticket" | "signature" | "wallet" | "apiKey" | "apiSecret";

const hex = (minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789abcdefABCDEF"), minLength, maxLength }).map((h) => `0x${h}`);
const ref = (kind: RefKind, ...variants: string[]) => fc.constantFrom(...variants).map((v) => new Ref(kind, v));

const TOKEN = ref("token", "own", "own", "own", "otherSlot", "spent", "ticket", "unknown");
const TICKET = ref("ticket", "own", "own", "own", "own", "own", "own", "otherSlot", "spent", "token", "unknown");
const SIGNATURE = fc.oneof(
  {
    weight: 4,
    arbitrary: ref(
      "signature",
      "owner",
      "owner",
      "owner",
      "stranger",
      "otherWallet",
      "replay",
      "otherChain",
      "otherNonce",
    ),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(
      hex(130, 130),
      fc.constantFrom(`0x${"00".repeat(65)}`, `0x${"ff".repeat(64)}1b`, `0x${"ab".repeat(65)}`, "0x1234", "0x"),
      hex(1, 140),
    ),
  },
);
const WALLET = fc.oneof(
  { weight: 4, arbitrary: ref("wallet", "owner", "owner", "ownerChecksum", "stranger", "otherWallet") },
  { weight: 1, arbitrary: fc.constantFrom(`0x${"0".repeat(40)}`, "0xZZ", `0x${"a".repeat(41)}`) },
);
const CHAIN_ID = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("0xa4b1", "0xa4b1", "0x66eee", "0xA4B1", "0x1", "0x0") },
  { weight: 1, arbitrary: fc.constantFrom("0xffffffffffffffff", "0x00000000000000001", "a4b1", "0x", "0xg") },
  { weight: 1, arbitrary: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map((n) => `0x${n.toString(16)}`) },
);

const ENDPOINTS: Endpoint[] = [
  {
    method: "POST",
    path: "/connect/api/session",
    statuses: [200, 400, 404, 409],
    body: { token: TOKEN },
    slots: ANY_CONNECT,
  },
  { method: "GET", path: "/connect/api/session", statuses: [200, 404, 409], slots: ANY_CONNECT },
  // A single-use link for a wallet's browser; 409: the session ended or this tab's ticket was replaced.
  { method: "POST", path: "/connect/api/handoff", statuses: [200, 400, 404, 409], slots: ANY_CONNECT },
  {
    method: "POST",
    path: "/connect/api/api-key",
    // 422: futures off, hedge mode or Multi-Assets, which the client fixes at the exchange (no attempt spent).
    statuses: [200, 400, 404, 409, 422],
    body: {
      apiKey: ref("apiKey", "good", "good", "other", "unknown"),
      apiSecret: ref("apiSecret", "own", "own", "other"),
    },
    slots: ["connectA", "connectA", "connectA", "connectA", "connectB", "pay"],
  },
  {
    method: "POST",
    path: "/connect/api/wallet/start",
    statuses: [200, 400, 403, 404, 409, 422],
    body: { walletAddress: WALLET, chainId: CHAIN_ID },
    slots: WALLET_FLOW,
  },
  {
    method: "POST",
    path: "/connect/api/wallet/sign",
    // 422: a wallet the venue does not know yet (deposit first).
    statuses: [200, 400, 403, 404, 409, 422],
    body: { signature: SIGNATURE },
    slots: WALLET_FLOW,
  },
  {
    method: "POST",
    path: "/connect/api/qa/test-credentials",
    statuses: [200, 400, 404, 409],
    body: { walletAddress: WALLET },
    slots: ANY_CONNECT,
  },
  // 409: the link's obligation was paid, cancelled or changed (or, for a signature, another link is sending).
  { method: "POST", path: "/pay/api/session", statuses: [200, 400, 409], body: { token: TOKEN }, slots: PAY_FLOW },
  {
    method: "POST",
    path: "/pay/api/wallet",
    statuses: [200, 400, 403, 409],
    body: { walletAddress: WALLET, chainId: CHAIN_ID },
    slots: PAY_FLOW,
  },
  // The on-chain checkout's status; a VENUE_B send's ticket is refused (400), as is any unusable ticket.
  { method: "GET", path: "/pay/api/status", statuses: [200, 400], slots: PAY_FLOW },
  {
    method: "POST",
    path: "/pay/api/signature",
    statuses: [200, 400, 403, 409],
    body: { signature: SIGNATURE },
    slots: PAY_FLOW,
  },
];

export const HOSTED_ENDPOINTS = ENDPOINTS.length;

export interface HostedCase {
  operation: Operation;
  endpoint: Endpoint;
  slot: Slot;
  /** Which one, where a ref has several to choose from (another slot, a spent token). */
  choice: number;
  auth: Ref | string | null;
  body: unknown;
  raw: string | null;
  contentType: string;
  /** The caller's address: mostly one of many, sometimes the one shared address the per-IP limit stops. */
  peer: number | "shared";
  /** Move the clock past every link's 15 minutes first. */
  expire: boolean;
}

const operationOf = (endpoint: Endpoint): Operation => ({
  api: "hosted",
  method: endpoint.method,
  path: endpoint.path,
  parameters: [],
  body: null,
  documented: new Set(endpoint.statuses.map(String)),
});

/** A plausible body, or one field of it wrong, extra fields, or any hostile value at all. */
function bodyOf(endpoint: Endpoint): fc.Arbitrary<unknown> {
  const fields = endpoint.body ?? {};
  const plausible = fc.record(fields);
  if (!Object.keys(fields).length) return fc.constant(undefined);
  const schema = {
    type: "object",
    properties: Object.fromEntries(Object.keys(fields).map((key) => [key, { type: "string" }])),
  };
  return fc.oneof(
    { weight: 8, arbitrary: plausible },
    {
      weight: 2,
      arbitrary: fc.tuple(plausible, fc.constantFrom(...Object.keys(fields)), fc.oneof(anyJson, hostileString))
        .map(([body, key, value]) => ({ ...body, [key]: value })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(plausible, fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 3 }))
        .map(([body, extra]) => ({ ...extra, ...body })),
    },
    { weight: 1, arbitrary: plausible.map(({ [Object.keys(fields)[0]]: _dropped, ...rest }) => rest) },
    { weight: 1, arbitrary: valueOf(schema) },
  );
}

export function hostedCases(): fc.Arbitrary<HostedCase> {
  return fc.constantFrom(...ENDPOINTS.map((endpoint) => [endpoint, operationOf(endpoint)] as const)).chain((
    [endpoint, operation],
  ) =>
    fc.record({
      operation: fc.constant(operation),
      endpoint: fc.constant(endpoint),
      slot: fc.constantFrom(...endpoint.slots),
      choice: fc.nat(),
      auth: fc.oneof(
        { weight: 8, arbitrary: TICKET },
        { weight: 1, arbitrary: fc.constant(null) },
        {
          weight: 1,
          arbitrary: fc.oneof(
            // What a header can carry of a hostile string: Latin-1 without control characters.
            hostileString.map((s) => `Bearer ${s.slice(0, 200).replace(/[^\x20-\x7e\xa0-\xff]/g, "?")}`),
            fc.constantFrom("Bearer", "bearer x", "Basic Zm9vOmJhcg==", `Bearer ${"A".repeat(44)}`),
          ),
        },
      ),
      body: bodyOf(endpoint),
      raw: oneIn(10, fc.constantFrom("{", "not json", "[]", "null", '{"token":' + "[".repeat(100))),
      contentType: fc.oneof(
        { weight: 12, arbitrary: fc.constant("application/json") },
        { weight: 1, arbitrary: fc.constantFrom("text/plain", "application/x-www-form-urlencoded") },
      ),
      // Enough from the shared address to pass its 60 a minute between two moves of the clock.
      peer: fc.oneof({ weight: 3, arbitrary: fc.nat(65_535) }, {
        weight: 1,
        arbitrary: fc.constant("shared" as const),
      }),
      expire: fc.oneof({ weight: 299, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    })
  );
}

/**
 * The request a case stands for, and what to learn from its answer (the
 * ticket a fuzzed exchange of a live token answers replaces the slot's).
 * Everything the world does to get there happens here, before the caller
 * takes the database digest.
 */
export async function resolveHosted(
  world: FuzzWorld,
  c: HostedCase,
): Promise<{ request: FuzzRequest; learn(status: number, text: string): void }> {
  const link = await world.link(c.slot);
  const others = SLOTS.filter((slot) => slot !== c.slot);
  const pick = <T>(values: T[]) => values[c.choice % values.length];
  let apiKeys: { apiKey: string; apiSecret: string } | undefined;
  const value = async (r: Ref): Promise<unknown> => {
    switch (`${r.kind}:${r.variant}`) {
      case "token:own":
        return link.token;
      case "ticket:own":
        return link.ticket;
      case "token:otherSlot":
        return world.current(pick(others)).token;
      case "ticket:otherSlot":
        return world.current(pick(others)).ticket;
      case "token:spent":
        return pick(world.spent.tokens);
      case "ticket:spent":
        return pick(world.spent.tickets);
      case "token:ticket":
        return link.ticket;
      case "ticket:token":
        return link.token;
      case "wallet:owner":
        return owner(world, c.slot).address.toLowerCase();
      case "wallet:ownerChecksum":
        return owner(world, c.slot).address;
      case "wallet:otherWallet":
        return (c.slot === "connectB" ? world.wallets.eva : world.wallets.davi).address;
      case "wallet:stranger":
        return world.wallets.stranger.address;
      case "apiKey:good":
        return (apiKeys ??= await world.keys.good()).apiKey;
      case "apiKey:other":
        return world.keys.futuresOff.apiKey;
      case "apiSecret:own":
        return (apiKeys ??= await world.keys.good()).apiSecret;
      case "apiSecret:other":
        return world.keys.futuresOff.apiSecret;
      default:
        if (r.kind === "signature") return await signature(world, c.slot, r.variant);
        return "A".repeat(r.kind === "apiKey" || r.kind === "apiSecret" ? 64 : 43);
    }
  };
  const resolved = new Map<Ref, unknown>();
  for (const r of refsIn([c.auth, c.body])) resolved.set(r, await value(r));
  const replacer = (_key: string, v: unknown) => v instanceof Ref ? resolved.get(v) : v;
  const auth = c.auth instanceof Ref ? `Bearer ${resolved.get(c.auth)}` : c.auth;
  if (c.expire) world.env.clock.freeze(world.env.clock.now() + 16 * 60_000);
  const body = c.endpoint.method === "GET"
    ? undefined
    : c.raw ?? (c.body === undefined ? undefined : JSON.stringify(c.body, replacer));
  const token = c.body && typeof c.body === "object"
    ? resolved.get((c.body as { token?: Ref }).token as Ref)
    : undefined;
  return {
    request: {
      operation: c.operation,
      path: c.endpoint.path,
      headers: { "content-type": c.contentType, ...(auth === null ? {} : { authorization: auth }) },
      body,
      env: c.peer === "shared"
        ? { remoteAddr: { hostname: "203.0.113.7" } }
        : { remoteAddr: { hostname: `10.77.${c.peer >> 8}.${c.peer & 255}` } },
    },
    learn(status, text) {
      if (status !== 200 || !c.endpoint.path.endsWith("/session") || c.endpoint.method !== "POST") return;
      if (typeof token === "string") world.learnTicket(token, JSON.parse(text).ticket);
    },
  };
}

function refsIn(value: unknown, out: Ref[] = []): Ref[] {
  if (value instanceof Ref) out.push(value);
  else if (value && typeof value === "object") { for (const item of Object.values(value)) refsIn(item, out); }
  return out;
}

function owner(world: FuzzWorld, slot: Slot): Wallet {
  return slot === "connectB" ? world.wallets.davi : world.wallets.eva;
}

/**
 * A signature of the message the slot's session waits for: by its owner
 * (valid), by another wallet, of the same message on another chain or with
 * another nonce, or the last valid one again. When nothing waits yet, the
 * world connects the owner's wallet first (as the page would).
 */
async function signature(world: FuzzWorld, slot: Slot, variant: string): Promise<string> {
  if (variant === "replay") return world.lastSignature;
  const action = await pendingAction(world, slot) ??
    (await startFlow(world, slot), await pendingAction(world, slot));
  if (!action) return world.lastSignature;
  const signer = variant === "stranger"
    ? world.wallets.stranger
    : variant === "otherWallet"
    ? (slot === "connectB" ? world.wallets.eva : world.wallets.davi)
    : owner(world, slot);
  const nonceField = "nonce" in action ? "nonce" : "time";
  const signed = variant === "otherChain"
    ? { ...action, signatureChainId: "0x1" }
    : variant === "otherNonce"
    ? { ...action, [nonceField]: Number(action[nonceField]) + 1 }
    : action;
  // deno-lint-ignore no-explicit-any
  const sig = await signer.signTypedData(userSignedTypedData(signed) as any);
  if (variant === "owner") world.lastSignature = sig;
  return sig;
}

async function pendingAction(world: FuzzWorld, slot: Slot): Promise<Record<string, unknown> | null> {
  const link = world.current(slot);
  if (slot === "pay") {
    const [row] = await world.env.deps.db.read.select().from(paymentSessions)
      .where(eq(paymentSessions.paymentId, link.id));
    return row?.pendingAction ?? null;
  }
  const [row] = await world.env.deps.db.read.select().from(connectSessions)
    .where(eq(connectSessions.sessionId, link.id));
  return (row?.pendingAction as { action?: Record<string, unknown> } | null)?.action ?? null;
}

/** What the page does once its wallet is connected: ask the service for the message to sign. */
async function startFlow(world: FuzzWorld, slot: Slot): Promise<void> {
  if (slot === "connectA") return;
  const path = slot === "pay" ? "/pay/api/wallet" : "/connect/api/wallet/start";
  const response = await world.env.app.request(path, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${world.current(slot).ticket}` },
    body: JSON.stringify({ walletAddress: owner(world, slot).address, chainId: "0xa4b1" }),
  }, world.peer());
  await response.body?.cancel();
}
