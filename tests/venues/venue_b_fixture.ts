/**
 * Shared setup of the VENUE_B tests: a simulator served over real HTTP on
 * loopback, funded wallets, an approved agent sealed in a real secret box,
 * and an adapter pointed at it.
 */
import { bytesToBase64, createSecretBox, secretBinding, type SecretBox } from "../../domain/secrets/secret_box.ts";

/** The binding test agent keys are sealed under (no stored row owns them). */
export const AGENT_KEY_BINDING = secretBinding("test_credentials", "venue-b", "agent_private_key");
import type { HexAddress, VenueAdapter, VenueCredentials } from "../../venues/types.ts";
import { createVenueBAdapter, type VenueBAdapterDeps } from "../../venues/venue_b/adapter.ts";
import {
  approveAgentAction,
  approveBuilderFeeAction,
  generateAgentKey,
  type Hex,
  signUserSignedAction,
} from "../../venues/venue_b/signing.ts";
import { createVenueBSimulator, type VenueBSimulatorOptions } from "../../venues/sim/venue_b/mod.ts";

/** The builder address the tests approve and charge. */
export const BUILDER: HexAddress = "0x1111111111111111111111111111111111111111";

/** A key pair the tests sign with. */
export interface Wallet {
  privateKey: Hex;
  address: HexAddress;
}

/** A simulator served on loopback; `await using` shuts it down. */
export interface SimHandle extends AsyncDisposable {
  baseUrl: string;
  control<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T>;
  /** Posts straight to the venue endpoints, bypassing the adapter. */
  post(path: "/info" | "/exchange", body: unknown): Promise<{ status: number; body: unknown }>;
}

/** Serves a fresh simulator on 127.0.0.1 at a free port. */
export function startSim(options: VenueBSimulatorOptions = {}): SimHandle {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, createVenueBSimulator(options).fetch);
  const baseUrl = `http://127.0.0.1:${server.addr.port}`;
  return {
    baseUrl,
    async control<T>(method: string, path: string, body?: unknown) {
      const response = await fetch(`${baseUrl}/_control${path}`, {
        method,
        headers: { "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = await response.json();
      if (!response.ok) throw new Error(`Control ${method} ${path} failed: ${JSON.stringify(json)}`);
      return json as T;
    },
    async post(path, body) {
      const response = await fetch(`${baseUrl}${path}`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      const isJson = response.headers.get("Content-Type")?.includes("application/json");
      return { status: response.status, body: isJson ? JSON.parse(text) : text };
    },
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

/** A real AES-GCM secret box with a random master key. */
export async function newSecretBox(): Promise<SecretBox> {
  return await createSecretBox(bytesToBase64(crypto.getRandomValues(new Uint8Array(32))));
}

/** Funds a fresh wallet on the simulator. */
export async function fundedWallet(sim: SimHandle, usdc = "10000"): Promise<Wallet> {
  const wallet = generateAgentKey();
  await sim.control("POST", "/wallets", { address: wallet.address, usdc });
  return wallet;
}

let nonceClock = Date.now();
/** Distinct, increasing nonces for actions the tests sign themselves. */
export function testNonce(): number {
  nonceClock = Math.max(Date.now(), nonceClock + 1);
  return nonceClock;
}

/** A connected client of the tests. */
export interface Client {
  principal: Wallet;
  agent: Wallet;
  credentials: Extract<VenueCredentials, { scheme: "AGENT_WALLET" }>;
  adapter: VenueAdapter;
  box: SecretBox;
}

/**
 * A client as the connect flow leaves it: a funded principal wallet that
 * approved a fresh agent (and, when asked, the builder fee), and an adapter
 * holding the sealed agent key.
 */
export async function connectClient(
  sim: SimHandle,
  options: { usdc?: string; approveAgent?: boolean; builderFee?: number; adapter?: Partial<VenueBAdapterDeps> } = {},
): Promise<Client> {
  const principal = await fundedWallet(sim, options.usdc ?? "10000");
  const agent = generateAgentKey();
  const box = await newSecretBox();
  const adapter = createVenueBAdapter({ baseUrl: sim.baseUrl, secrets: box, ...options.adapter });
  if (options.approveAgent ?? true) {
    const action = approveAgentAction({
      isMainnet: true,
      agentAddress: agent.address,
      agentName: "svc",
      nonce: testNonce(),
    });
    await adapter.submitUserSignedAction!(signUserSignedAction(principal.privateKey, action));
  }
  if (options.builderFee !== undefined) {
    await approveBuilder(sim, adapter, principal, options.builderFee);
  }
  return {
    principal,
    agent,
    box,
    adapter,
    credentials: {
      scheme: "AGENT_WALLET",
      accountAddress: principal.address,
      agentAddress: agent.address,
      sealedAgentPrivateKey: await box.seal(agent.privateKey, AGENT_KEY_BINDING),
    },
  };
}

/** The builder needs 100 USDC of its own before anyone may approve it. */
export async function approveBuilder(sim: SimHandle, adapter: VenueAdapter, principal: Wallet, feeTenthsBps: number) {
  await sim.control("POST", "/wallets", { address: BUILDER, usdc: "100" });
  const action = approveBuilderFeeAction({
    isMainnet: true,
    builder: BUILDER,
    maxFeeTenthsBps: feeTenthsBps,
    nonce: testNonce(),
  });
  await adapter.submitUserSignedAction!(signUserSignedAction(principal.privateKey, action));
}

/** A fetch that records every JSON body sent to the venue. */
export function recordingFetch(): { fetch: typeof fetch; bodies: { url: string; body: Record<string, unknown> }[] } {
  const bodies: { url: string; body: Record<string, unknown> }[] = [];
  return {
    bodies,
    fetch: (input, init) => {
      bodies.push({ url: String(input), body: JSON.parse(String(init?.body ?? "{}")) });
      return fetch(input, init);
    },
  };
}
