/**
 * Clients that trade, written straight to the database as the hosted page and
 * a first reconcile leave them: each with an enabled setup and automation on
 * trend-follow, a connected account sealed for it (a VENUE_A API key, or a
 * VENUE_B wallet with an agent and the builder fee approved) and its account
 * state, in bounded transactions. Shared by the fan-out benchmark and the soak.
 * Clients are `user-<providerId>-<i>`.
 */
import { withTransaction } from "../../db/client.ts";
import { accountStates, automations, clients, clientSetups, providerAccounts } from "../../db/schema.ts";
import { accountSecretBinding } from "../../domain/accounts/load_account.ts";
import type { TestEnv } from "../_helpers/env.ts";
import { expectJson, operator } from "../_helpers/http.ts";
import { BTC_POLICY, TREND_FOLLOW } from "../setup/setup_fixture.ts";
import {
  approveAgentAction,
  approveBuilderFeeAction,
  generateAgentKey,
  signUserSignedAction,
} from "../../venues/venue_b/signing.ts";
import { simControl } from "./simulator_process.ts";

export type ProviderId = "VENUE_A" | "VENUE_B";
export const SYMBOL = { VENUE_A: "BTCUSDT", VENUE_B: "BTCUSDC" } as const;
/** The simulators' market of each venue's symbol. */
export const SIM_MARKET = { VENUE_A: "BTCUSDT", VENUE_B: "BTC" } as const;
export const BUILDER_FEE_TENTHS_BPS = 25;
const BATCH = 500;

export interface SimulatorUrls {
  venueA: string;
  venueB: string;
}

/** One simulator account's credential row, sealed for the account it is stored under. */
export type SimCredential = (accountId: string) => Promise<Partial<typeof providerAccounts.$inferInsert>>;

/**
 * trend-follow published, BTC entry policies and real execution at both
 * venues, the simulators' limits lifted (a few simulator accounts stand for
 * thousands of real ones) and books deep enough that admission does not
 * refuse thousands of small entries for liquidity.
 */
export async function openTrading(env: TestEnv, venues: SimulatorUrls): Promise<void> {
  await expectJson(await operator(env, "PUT", "/operator/v1/strategies/trend-follow", TREND_FOLLOW), 200);
  for (const providerId of ["VENUE_A", "VENUE_B"] as const) {
    const policy = { ...BTC_POLICY, maxBookFraction: 1 };
    await expectJson(
      await operator(env, "PUT", `/operator/v1/asset-policies/${providerId}/${SYMBOL[providerId]}`, policy),
      200,
    );
    await expectJson(await operator(env, "PUT", `/operator/v1/providers/${providerId}`, { realExecution: true }), 200);
  }
  await simControl(venues.venueA, "PUT", "/limits", {
    requestWeightPerMinute: 100_000_000,
    ordersPer10Seconds: 1_000_000,
    ordersPerMinute: 1_000_000,
  });
  await simControl(venues.venueA, "PUT", "/markets/BTCUSDT", { markPrice: "65000", depth: "1000" });
  await simControl(venues.venueB, "PUT", "/markets/BTC", { markPrice: "65000", depth: "1000" });
}

export async function venueACredentials(venues: SimulatorUrls, env: TestEnv, count: number): Promise<SimCredential[]> {
  const made: SimCredential[] = [];
  for (let i = 0; i < count; i++) {
    const key = await simControl(venues.venueA, "POST", "/accounts", { balances: { USDT: "100000000" } });
    made.push(async (accountId) => ({
      scheme: "API_KEY",
      apiKey: key.apiKey,
      sealedSecret: (await env.deps.secrets.seal(key.apiSecret, accountSecretBinding(accountId))).sealed,
    }));
  }
  return made;
}

/** Funded wallets, each with an agent and the builder fee approved through the adapter, as the hosted page leaves them. */
export async function venueBCredentials(venues: SimulatorUrls, env: TestEnv, count: number): Promise<SimCredential[]> {
  const made: SimCredential[] = [];
  let nonce = Date.now();
  for (let i = 0; i < count; i++) {
    const wallet = generateAgentKey();
    const agent = generateAgentKey();
    await simControl(venues.venueB, "POST", "/wallets", { address: wallet.address, usdc: "100000000" });
    const isMainnet = env.deps.config.venueBMainnet;
    for (
      const action of [
        approveAgentAction({ isMainnet, agentAddress: agent.address, agentName: "svc", nonce: ++nonce }),
        approveBuilderFeeAction({
          isMainnet,
          builder: env.deps.config.venueBBuilderAddress,
          maxFeeTenthsBps: BUILDER_FEE_TENTHS_BPS,
          nonce: ++nonce,
        }),
      ]
    ) await env.deps.venues.VENUE_B.submitUserSignedAction!(signUserSignedAction(wallet.privateKey, action));
    made.push(async (accountId) => ({
      scheme: "AGENT_WALLET",
      accountAddress: wallet.address,
      agentAddress: agent.address,
      approvedBuilderFeeTenthsBps: BUILDER_FEE_TENTHS_BPS,
      sealedSecret: (await env.deps.secrets.seal(agent.privateKey, accountSecretBinding(accountId))).sealed,
    }));
  }
  return made;
}

export interface TradersInput {
  partnerId: string;
  providerId: ProviderId;
  count: number;
  /** Shared round-robin when fewer than `count`. */
  credentials: SimCredential[];
  now: number;
  autoBreakEven?: boolean;
}

export async function seedTraders(env: TestEnv, input: TradersInput): Promise<void> {
  const { partnerId, providerId, count, credentials, now } = input;
  for (let first = 0; first < count; first += BATCH) {
    const size = Math.min(BATCH, count - first);
    const accounts = await Promise.all(Array.from({ length: size }, async (_, i) => {
      const accountId = `acc_${partnerId}_${providerId}_${first + i}`;
      return { accountId, ...(await credentials[(first + i) % credentials.length](accountId)) };
    }));
    await withTransaction(env.deps.db, async (tx) => {
      const rows = await tx.insert(clients).values(Array.from({ length: size }, (_, i) => ({
        partnerId,
        tenantId: partnerId,
        externalUserId: `user-${providerId}-${first + i}`,
        status: "ACTIVE",
        strategySelection: null,
        createdAt: now,
        updatedAt: now,
      }))).returning({ id: clients.id });
      await tx.insert(clientSetups).values(rows.map(({ id }) => ({
        clientId: id,
        providerId,
        enabled: true,
        leverage: 5,
        maxMarginPerTradeMicros: 50e6,
        maxConcurrentTrades: 1,
        maxDailyLossMicros: 100e6,
        orderSizeMicros: 150e6,
        capitalBaseMicros: 1000e6,
        maxLossPerTradeMicros: 20e6,
        entryTimeoutMinutes: 30,
        autoBreakEven: input.autoBreakEven ?? false,
        updatedAt: now,
      })));
      await tx.insert(automations).values(rows.map(({ id }) => ({
        clientId: id,
        providerId,
        strategyId: "trend-follow",
        strategyVersion: TREND_FOLLOW.version,
        enabled: true,
        risk: { leverage: 5, maxMarginPerTradeMicros: 50e6, maxConcurrentTrades: 1, maxDailyLossMicros: 100e6 },
        conditions: {},
        updatedAt: now,
      })));
      await tx.insert(providerAccounts).values(rows.map(({ id }, i) => ({
        ...accounts[i],
        accountId: accounts[i].accountId,
        clientId: id,
        providerId,
        scheme: accounts[i].scheme!,
        sealedSecret: accounts[i].sealedSecret!,
        connection: "CONNECTED",
        permissions: { canRead: true, canFutures: true, canWithdraw: false },
        connectedAt: now,
        updatedAt: now,
      })));
      await tx.insert(accountStates).values(rows.map(({ id }) => ({
        clientId: id,
        providerId,
        positions: [],
        restingEntries: 0,
        factsCursor: now,
        reconciledAt: now,
        // As after a first entry: the leverage and margin mode are already set.
        symbolSettings: { [SYMBOL[providerId]]: { leverage: 5, marginMode: "ISOLATED" } },
      })));
    });
  }
}
