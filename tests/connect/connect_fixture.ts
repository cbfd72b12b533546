/** Shared steps of the connect tests: a partner with a client, a link, the page's exchange, a simulator key. */
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

export async function openLink(env: TestEnv, partner: TestPartner, providerId = "VENUE_A") {
  const session = await expectJson(
    await partner.call("POST", "/v1/users/ana/connect-sessions", {
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
export async function connectedVenueA(env: TestEnv, partner: TestPartner, options: Record<string, unknown> = {}) {
  const { token } = await openLink(env, partner);
  const { ticket } = await exchange(env, token);
  const keys = await simulatorAccount(env, options);
  await expectJson(await submitKey(env, ticket, keys), 200);
  return keys;
}
