/**
 * A client ready to trade except for its own setup and automation: partner
 * "Corretora Exemplo" (envelope: leverage 10, margin 500, 3 trades, daily loss
 * 200) with client "ana", strategy trend-follow published for both venues,
 * an entry policy on BTCUSDT, real execution validated on VENUE_A and ana's
 * VENUE_A account connected through the hosted page and reconciled once.
 */
import { connectedVenueA, setUp } from "../connect/connect_fixture.ts";
import { expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import type { TestEnv } from "../_helpers/env.ts";

export const TREND_FOLLOW = {
  version: "1.2.0",
  status: "PUBLISHED",
  displayName: "Trend follow",
  summary: "Segue a tendência.",
  supportedProviders: ["VENUE_A", "VENUE_B"],
  supportedMarkets: ["BTCUSDT", "ETHUSDT", "BTCUSDC"],
  configurableParameters: [],
  riskRequirements: { maxLeverage: 8, minMarginPerTradeUsd: 20 },
};

export const BTC_POLICY = {
  minNotionalUsd: 10,
  maxNotionalUsd: 20_000,
  maxSpreadBps: 20,
  maxSlippageBps: 30,
  maxBookFraction: 0.1,
};

/** A complete, enabled setup within the envelope that raises no safety flag. */
export function completeSetup(overrides: Record<string, unknown> = {}) {
  return {
    providerId: "VENUE_A",
    mode: "REAL",
    enabled: true,
    leverage: 5,
    orderSizeUsd: 200,
    maxConcurrentTrades: 1,
    maxMarginPerTradeUsd: 50,
    maxDailyLossUsd: 100,
    capitalBase: 1000,
    maxLossPerTrade: 20,
    entryTimeoutMinutes: 30,
    ...overrides,
  };
}

export function automationBody(overrides: Record<string, unknown> = {}) {
  return {
    providerId: "VENUE_A",
    strategyId: "trend-follow",
    enabled: true,
    risk: { leverage: 5, maxMarginPerTradeUsd: 50, maxConcurrentTrades: 1, maxDailyLossUsd: 100 },
    ...overrides,
  };
}

let keys = 0;
/** A fresh Idempotency-Key. */
export const ik = () => ({ "idempotency-key": `test-key-${++keys}-${crypto.randomUUID()}` });

export function putSetup(partner: TestPartner, body: Record<string, unknown>, user = "ana") {
  return partner.call("PUT", `/v1/users/${user}/setup`, { body, headers: ik() });
}

export function putAutomation(partner: TestPartner, body: Record<string, unknown>, user = "ana") {
  return partner.call("PUT", `/v1/users/${user}/automation`, { body, headers: ik() });
}

/** The automation view's entry for one provider. */
export async function automationOf(partner: TestPartner, providerId = "VENUE_A", user = "ana") {
  const view = await expectJson(await partner.call("GET", `/v1/users/${user}/automation`), 200);
  return view.providers.find((entry: { providerId: string }) => entry.providerId === providerId);
}

export async function readyClient(): Promise<{ env: TestEnv; partner: TestPartner; keys: { apiKey: string } }> {
  const { env, partner } = await setUp();
  await expectJson(await operator(env, "PUT", "/operator/v1/strategies/trend-follow", TREND_FOLLOW), 200);
  await expectJson(await operator(env, "PUT", "/operator/v1/asset-policies/VENUE_A/BTCUSDT", BTC_POLICY), 200);
  await expectJson(await operator(env, "PUT", "/operator/v1/providers/VENUE_A", { realExecution: true }), 200);
  const keys = await connectedVenueA(env, partner);
  // The reconcile job (every minute) reads the new account once; until then entries wait for it.
  await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
  return { env, partner, keys };
}
