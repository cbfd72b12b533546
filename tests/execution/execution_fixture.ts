/** What the execution tests share: the engine's context, simulator faults, and ana's VENUE_A account with intents. */
import { withTransaction } from "../../db/client.ts";
import { findAccount } from "../../domain/accounts/load_account.ts";
import { findClient } from "../../domain/clients/load_client.ts";
import type { Ctx } from "../../domain/context.ts";
import { insertIntent, type IntentDraft } from "../../domain/execution/intents.ts";
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
