/**
 * Requests through the app as a partner or the operator, and partner set-up.
 * Every secret field of a request or JSON answer is remembered in the env's
 * `watchedSecrets`, so `env.close()` can check the log holds none of them.
 */
import assert from "node:assert/strict";
import type { TestEnv } from "./env.ts";
import { OPERATOR_TOKEN } from "./env.ts";

export interface CallOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** Raw body text, sent as is (for malformed-JSON tests). */
  raw?: string;
}

export async function call(env: TestEnv, method: string, path: string, options: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  env.watchedSecrets.addFromHeaders(headers);
  env.watchedSecrets.addFromJson(options.body);
  const response = await env.app.request(path, { method, headers, body });
  await env.watchedSecrets.addFromResponse(response);
  return response;
}

export function operator(env: TestEnv, method: string, path: string, body?: unknown): Promise<Response> {
  return call(env, method, path, { body, headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
}

export function basicAuth(clientId: string, clientSecret: string): Record<string, string> {
  return { authorization: `Basic ${btoa(`${clientId}:${clientSecret}`)}` };
}

export interface TestPartner {
  partnerId: string;
  clientId: string;
  clientSecret: string;
  headers: Record<string, string>;
  call(method: string, path: string, options?: CallOptions): Promise<Response>;
}

export function partnerBody(overrides: Record<string, unknown> = {}) {
  return {
    name: "Corretora Exemplo",
    grants: {
      providers: ["VENUE_A", "VENUE_B"],
      strategies: ["trend-follow", "mean-revert"],
      capabilities: ["PERP_TRADING", "LEVERAGE", "STOP_LOSS", "TAKE_PROFIT", "BUILDER_FEE", "AGENT_WALLET"],
    },
    riskEnvelope: { maxLeverage: 10, maxMarginPerTradeUsd: 500, maxConcurrentTrades: 3, maxDailyLossUsd: 200 },
    contract: {
      subscriptionMonthlyUsd: 49.9,
      currency: "USDT",
      performanceFeePercent: 0.2,
      performancePeriod: "MONTHLY",
      carryPolicy: "CARRY",
      dueDays: 5,
      subscriptionProviders: ["VENUE_A"],
    },
    builder: { feeTenthsBps: 25 },
    returnUrlOrigins: ["https://app.partner.example"],
    limits: { requestsPerMinute: 1000, ordersPerMinute: 100 },
    ...overrides,
  };
}

export function asPartner(env: TestEnv, partnerId: string, clientId: string, clientSecret: string): TestPartner {
  env.watchedSecrets.add("clientSecret", clientSecret);
  const headers = basicAuth(clientId, clientSecret);
  return {
    partnerId,
    clientId,
    clientSecret,
    headers,
    call: (method, path, options = {}) =>
      call(env, method, path, { ...options, headers: { ...headers, ...options.headers } }),
  };
}

export async function createPartner(env: TestEnv, overrides: Record<string, unknown> = {}): Promise<TestPartner> {
  const response = await operator(env, "POST", "/operator/v1/partners", partnerBody(overrides));
  const body = await response.json();
  assert.equal(response.status, 201, JSON.stringify(body));
  return asPartner(env, body.partner.partnerId, body.credential.clientId, body.credential.clientSecret);
}

/** Assert status and JSON content type, then return the body. */
// deno-lint-ignore no-explicit-any
export async function expectJson(response: Response, status: number): Promise<Record<string, any>> {
  const text = await response.text();
  assert.equal(response.status, status, text);
  assert.match(response.headers.get("content-type") ?? "", /application\/json/);
  return JSON.parse(text);
}

// deno-lint-ignore no-explicit-any
export async function expectError(response: Response, status: number, code: string): Promise<Record<string, any>> {
  const body = await expectJson(response, status);
  assert.equal(body.error?.code, code, JSON.stringify(body));
  assert.equal(typeof body.error.message, "string");
  assert.equal(body.error.requestId, response.headers.get("x-request-id"));
  return body;
}
