/**
 * What the execution tests share: the engine's context, simulator faults, ana's
 * VENUE_A account with intents, and the manual opening and signal they send.
 */
import { withTransaction } from "../../db/client.ts";
import { findAccount } from "../../domain/accounts/load_account.ts";
import { findClient } from "../../domain/clients/load_client.ts";
import type { Ctx } from "../../domain/context.ts";
import { insertIntent, type IntentDraft } from "../../domain/execution/intents.ts";
import type { SignalInput } from "../../domain/engine/evaluate_signal.ts";
import type { TestEnv } from "../_helpers/env.ts";

/** The engine acts as a system job. */
export const engineCtx = (env: TestEnv): Ctx => ({
  ...env.deps,
  actor: { kind: "system", job: "test" },
  requestId: "test",
});

export function simulatorFault(env: TestEnv, mode: "NONE" | "DOWN" | "LOSE_RESPONSE" | "REJECT_KEYS") {
  return fetch(`${env.venueUrls.venueA}/_control/faults`, { method: "PUT", body: JSON.stringify({ mode }) })
    .then((response) => response.body?.cancel());
}

/** ana's client row and VENUE_A account, a market-entry intent draft, and recording one as SUBMITTING. */
export async function anaAtVenueA(env: TestEnv, partnerId: string) {
  const client = (await findClient(env.deps.db.read, partnerId, "ana"))!;
  const account = (await findAccount(env.deps.db.read, client.id, "VENUE_A"))!;
  const draft = (intentId: string, overrides: Partial<IntentDraft> = {}): IntentDraft => ({
    partnerId,
    intentId,
    clientId: client.id,
    providerId: "VENUE_A",
    type: "OPEN_POSITION",
    opensPosition: true,
    symbol: "BTCUSDT",
    side: "BUY",
    orderType: "MARKET",
    quantity: "0.002",
    reduceOnly: false,
    ...overrides,
  });
  const record = (intent: IntentDraft) =>
    withTransaction(env.deps.db, (tx) => insertIntent(tx, intent, "SUBMITTING", env.clock.now()));
  return { client, account, draft, record };
}

/** A manual opening on VENUE_A: BUY 0.003 BTC at 65,010 (crosses the ask: fills), a stop and two targets. */
export const opening = (overrides: Record<string, unknown> = {}) => ({
  externalUserId: "ana",
  type: "OPEN_POSITION",
  providerId: "VENUE_A",
  symbol: "BTCUSDT",
  side: "BUY",
  orderType: "LIMIT",
  price: 65010,
  quantity: 0.003,
  stopLossPrice: 63000,
  takeProfits: [{ price: 67000, share: 0.5 }, { price: 69000, share: 0.5 }],
  ...overrides,
});

/** A trend-follow signal on VENUE_A's BTCUSDT at `entryPrice` (65,010 crosses the ask: the entry fills). */
export const signal = (signalId: string, entryPrice = 65010) => ({
  signalId,
  strategyId: "trend-follow",
  providerId: "VENUE_A",
  symbol: "BTCUSDT",
  side: "BUY",
  entryPrice,
  stopLossPrice: entryPrice - 2000,
  takeProfits: [{ price: entryPrice + 2000, share: 0.5 }, { price: entryPrice + 4000, share: 0.5 }],
  confidence: 80,
});

/**
 * The trend-follow signal at 65,010 as the domain takes it (evaluateSignal:
 * judged and allocated, nothing sent), one target at 67,010.
 */
export const judgedSignal = (signalId: string): SignalInput => ({
  ...signal(signalId),
  providerId: "VENUE_A",
  side: "BUY",
  entryPrice: "65010",
  stopLossPrice: "63010",
  takeProfits: [{ price: "67010", share: "1" }],
});

/** The same signal on VENUE_B's BTCUSDC (its BTC perpetual). */
export const signalB = (signalId: string, entryPrice = 65100) => ({
  ...signal(signalId, entryPrice),
  providerId: "VENUE_B",
  symbol: "BTCUSDC",
});

/**
 * Counts the whole reads of accounts at `providerId` from now on: what a push
 * names is read at a fraction of their weight (pushed_reads.ts).
 */
export function countWholeReads(env: TestEnv, providerId: "VENUE_A" | "VENUE_B") {
  const venue = env.deps.venues[providerId];
  const getAccount = venue.getAccount.bind(venue);
  const counted = { wholeReads: 0 };
  venue.getAccount = (credentials) => {
    counted.wholeReads++;
    return getAccount(credentials);
  };
  return counted;
}

/** The protection the execution tests open positions with: a stop at 60,000 and half off at 67,000 and 69,000. */
export const TWO_TARGETS_PLAN = {
  stopLossPrice: "60000",
  takeProfits: [{ price: "67000", share: "0.5" }, { price: "69000", share: "0.5" }],
  autoBreakEven: false,
  signalId: null,
};
