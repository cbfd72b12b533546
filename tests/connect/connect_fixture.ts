/**
 * Shared steps of the connect tests: a partner with a client, a link, the
 * page's exchange, a simulator key; for VENUE_B a funded wallet that signs
 * the page's typed data as a browser wallet would.
 */
import assert from "node:assert/strict";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { signRequest } from "../../venues/venue_a/auth.ts";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { call, createPartner, expectJson, type TestPartner } from "../_helpers/http.ts";

export async function simulatorAccount(env: TestEnv, options: Record<string, unknown> = {}) {
  const response = await fetch(`${env.venueUrls.venueA}/_control/accounts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ balances: { USDT: "1000" }, ...options }),
  });
  const keys = await response.json() as { apiKey: string; apiSecret: string };
  env.watchedSecrets.add("apiSecret", keys.apiSecret);
  return keys;
}

export async function openLink(env: TestEnv, partner: TestPartner, providerId = "VENUE_A", user = "ana") {
  const session = await expectJson(
    await partner.call("POST", `/v1/users/${user}/connect-sessions`, {
      body: { providerId, returnUrl: "https://app.partner.example/volta" },
    }),
    201,
  );
  const token = session.connectUrl.split("#t=")[1] as string;
  env.watchedSecrets.add("connect token", token);
  return { session, token };
}

export async function exchange(env: TestEnv, token: string) {
  const body = await expectJson(await call(env, "POST", "/connect/api/session", { body: { token } }), 200);
  env.watchedSecrets.add("page ticket", body.ticket);
  return body as { ticket: string; session: Record<string, unknown> };
}

export function submitKey(env: TestEnv, ticket: string, keys: { apiKey: string; apiSecret: string }) {
  return call(env, "POST", "/connect/api/api-key", { body: keys, headers: { authorization: `Bearer ${ticket}` } });
}

/** A test env with partner "Corretora Exemplo" (overrides apply) and its client "ana". */
export async function setUp(partnerOverrides: Record<string, unknown> = {}) {
  const env = await startTestEnv();
  const partner = await createPartner(env, { name: "Corretora Exemplo", ...partnerOverrides });
  await expectJson(
    await partner.call("POST", "/v1/users", {
      body: { externalUserId: "ana" },
      headers: { "idempotency-key": "ana-00001" },
    }),
    201,
  );
  return { env, partner };
}

/** A client whose VENUE_A account is connected through the page with a fresh simulator key. */
export async function connectedVenueA(
  env: TestEnv,
  partner: TestPartner,
  options: Record<string, unknown> = {},
  user = "ana",
) {
  const { token } = await openLink(env, partner, "VENUE_A", user);
  const { ticket } = await exchange(env, token);
  const keys = await simulatorAccount(env, options);
  await expectJson(await submitKey(env, ticket, keys), 200);
  return keys;
}

// ---------------------------------------------------------------- VENUE_B: the client's own wallet

export type Wallet = ReturnType<typeof privateKeyToAccount>;

/** A wallet funded with USDC on the VENUE_B simulator. */
export async function fund(env: TestEnv, address: string, usdc = "1000") {
  const response = await fetch(`${env.venueUrls.venueB}/_control/wallets`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ address, usdc }),
  });
  assert.equal(response.status, 200, await response.text());
}

/** Partner and client "ana" (builder fee as given) and a funded wallet of the client's own. */
export async function walletSetUp(builderFeeTenthsBps = 25) {
  const { env, partner } = await setUp({ builder: { feeTenthsBps: builderFeeTenthsBps } });
  const wallet = privateKeyToAccount(generatePrivateKey());
  await fund(env, wallet.address, "5000");
  return { env, partner, wallet };
}

/** A VENUE_B link opened on the page: the session and the page API with its ticket. */
export async function openPage(env: TestEnv, partner: TestPartner, purpose = "CONNECT") {
  const session = await expectJson(
    await partner.call("POST", "/v1/users/ana/connect-sessions", { body: { providerId: "VENUE_B", purpose } }),
    201,
  );
  const token = session.connectUrl.split("#t=")[1] as string;
  env.watchedSecrets.add("connect token", token);
  const page = await expectJson(await call(env, "POST", "/connect/api/session", { body: { token } }), 200);
  env.watchedSecrets.add("page ticket", page.ticket);
  const request = (path: string, body: unknown) =>
    call(env, "POST", `/connect/api${path}`, { body, headers: { authorization: `Bearer ${page.ticket}` } });
  return { session, request };
}

/** The whole wallet flow, every step signed by `wallet`: what the page does with a cooperative wallet. */
export async function connectWallet(request: (path: string, body: unknown) => Promise<Response>, wallet: Wallet) {
  let next = await expectJson(
    await request("/wallet/start", { walletAddress: wallet.address, chainId: "0xa4b1" }),
    200,
  );
  while (next.step) {
    next = await expectJson(
      await request("/wallet/sign", { signature: await signAsWallet(wallet, next.typedData) }),
      200,
    );
  }
  assert.equal(next.status, "CONNECTED");
}

/** What a browser wallet does with the typed data the page hands it. */
// deno-lint-ignore no-explicit-any
export function signAsWallet(wallet: Wallet, typedData: any) {
  const { EIP712Domain: _domainType, ...types } = typedData.types;
  return wallet.signTypedData({
    domain: typedData.domain,
    types,
    primaryType: typedData.primaryType,
    message: typedData.message,
  });
}

/** What the client does at the exchange after a settings refusal: the futures account back to one-way mode. */
export async function switchToOneWay(env: TestEnv, keys: { apiKey: string; apiSecret: string }) {
  const { body } = signRequest({
    method: "POST",
    params: { dualSidePosition: false },
    secret: keys.apiSecret,
    timestamp: Date.now(),
    recvWindow: 60_000,
  });
  const response = await fetch(`${env.venueUrls.venueA}/fapi/v1/positionSide/dual`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", "x-mbx-apikey": keys.apiKey },
    body,
  });
  assert.equal(response.status, 200, await response.text());
}
