/**
 * An on-chain checkout's world for tests: anvil with Arbitrum One's chain id
 * and a 6-decimal test USDT (payer and stranger funded), the service with
 * that node, a platform recipient and an invoice key, partner "payer" with
 * client ana; and the checkout's calls (the instruction, the link's
 * exchange, the page's status). `served: true` puts the service behind a
 * real HTTP server whose origin CONNECT_URL names, so a browser opens the
 * very `paymentUrl` the instruction answers.
 */
import assert from "node:assert/strict";
import type { Hex } from "viem";
import { HDKey } from "@scure/bip32";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { call, createPartner, expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import { DEV_KEYS } from "../_helpers/evm/anvil.ts";
import { startChain, type TestChain } from "../_helpers/evm/chain.ts";
import { ik } from "../setup/setup_fixture.ts";
import { clientIdOf } from "../performance/trade_fixture.ts";
import { openObligation } from "./obligation_fixture.ts";

export const RECIPIENT = "0x00000000000000000000000000000000000fee01";
export const RETURN_URL = "https://app.partner.example/billing";
export const PAYER = 1;
export const STRANGER = 2;
const XPUB = HDKey.fromMasterSeed(new Uint8Array(32).fill(9)).derive("m/44'/60'/0'").publicExtendedKey;
/** Arbitrum's confirmations in this world: enough to watch a transfer go 1, 2, 3 of 3. */
export const REQUIRED = 3;

export interface World {
  env: TestEnv;
  partner: TestPartner;
  clientId: number;
  chain: TestChain;
  usdt: Hex;
  payer: Hex;
  /** The payer's key (anvil's development wallet PAYER), for a browser's test wallet. */
  payerKey: Hex;
  /** Where the service answers over HTTP (`served: true`), else null. */
  origin: string | null;
}

export async function world(options: { served?: boolean } = {}): Promise<World> {
  const chain = await startChain(42161);
  const usdt = await chain.deployToken("USDT", 6);
  const payer = chain.wallet(PAYER).address;
  await chain.mint(usdt, payer, 10_000n * 10n ** 6n);
  await chain.mint(usdt, chain.wallet(STRANGER).address, 10_000n * 10n ** 6n);
  // The server listens before the env exists (CONNECT_URL names its port) and serves the env's app once set.
  const serving: { app?: TestEnv["app"] } = {};
  const server = options.served
    ? Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      (request, info) => serving.app!.fetch(request, info),
    )
    : null;
  const origin = server ? `http://127.0.0.1:${server.addr.port}` : null;
  const env = await startTestEnv({
    env: {
      EVM_RPC_ARBITRUM: chain.url,
      EVM_TOKENS: JSON.stringify({ arbitrum: { USDT: usdt } }),
      EVM_CONFIRMATIONS: JSON.stringify({ arbitrum: REQUIRED }),
      ...(origin ? { CONNECT_URL: origin } : {}),
    },
  });
  serving.app = env.app;
  if (server) {
    const close = env.close;
    env.close = async () => {
      await server.shutdown();
      await close();
    };
  }
  const partner = await createPartner(env, { partnerId: "payer" });
  await expectJson(await partner.call("POST", "/v1/users", { body: { externalUserId: "ana" }, headers: ik() }), 201);
  await expectJson(await operator(env, "PUT", "/operator/v1/payment-recipients/arbitrum", { address: RECIPIENT }), 200);
  await expectJson(await operator(env, "PUT", "/operator/v1/deposit-xpub/arbitrum", { xpub: XPUB }), 200);
  const clientId = await clientIdOf(env, "ana", "payer");
  return { env, partner, clientId, chain, usdt, payer, payerKey: DEV_KEYS[PAYER], origin };
}

export async function stop(w: World) {
  await w.env.close();
  await w.chain.stop();
}

/** An open VENUE_A obligation of ana, 49.9 USDT (a monthly subscription unless told). */
export function obligation(w: World, reference: string, source = "MONTHLY_SUBSCRIPTION") {
  return openObligation(w.env, { partnerId: "payer", clientId: w.clientId, reference, providerId: "VENUE_A", source });
}

export function instruct(w: World, obligationId: string, body: Record<string, unknown> = {}, headers = ik()) {
  return w.partner.call("POST", `/v1/users/ana/obligations/${obligationId}/payment-instructions`, {
    body: { networkId: "arbitrum", token: "USDT", payerAddress: w.payer, returnUrl: RETURN_URL, ...body },
    headers,
  });
}

export function tokenOf(paymentUrl: string): string {
  const match = /^http[^#]*\/pay#([A-Za-z0-9_-]{43})$/.exec(paymentUrl);
  assert.ok(match, `a page link with the token in the fragment: ${paymentUrl}`);
  return match[1];
}

export function exchange(w: World, token: string) {
  w.env.watchedSecrets.add("payment token", token);
  return call(w.env, "POST", "/pay/api/session", { body: { token } });
}

/** The page opened from its link: its ticket and the payment's view. */
export async function openPage(w: World, paymentUrl: string) {
  const page = await expectJson(await exchange(w, tokenOf(paymentUrl)), 200);
  w.env.watchedSecrets.add("payment ticket", page.ticket);
  return page;
}

export function status(w: World, ticket: string) {
  return call(w.env, "GET", "/pay/api/status", { headers: { authorization: `Bearer ${ticket}` } });
}

export async function statusOf(w: World, ticket: string) {
  return await expectJson(await status(w, ticket), 200);
}

/** The service's clock moves on by `ms` (the chain's stays on real time). */
export function later(w: World, ms: number) {
  w.env.clock.freeze(w.env.clock.now() + ms);
}

export async function runPayments(w: World) {
  return (await expectJson(await operator(w.env, "POST", "/operator/v1/jobs/payments/run"), 200)).summary;
}
