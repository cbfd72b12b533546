/**
 * The watch benchmark's accounts: every connected account its own simulator
 * account (a VENUE_A API key, hence its own listen key; a VENUE_B wallet with
 * its own approved agent and the builder fee), made through the simulators'
 * bulk control routes and written to the service's database as
 * seed_accounts.ts writes them; and some of them holding a protected
 * position, opened and protected through the service's own verbs so the
 * service knows the position, its stop and its target as it would after an
 * entry.
 */
import { bytesToHex } from "@noble/hashes/utils.js";
import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { accountStates, providerAccounts } from "../../db/schema.ts";
import { type AccountRow, accountSecretBinding } from "../../domain/accounts/load_account.ts";
import type { Ctx } from "../../domain/context.ts";
import { insertIntent } from "../../domain/execution/intents.ts";
import { openPositionFromFill, protectPosition } from "../../domain/execution/protection.ts";
import { sendIntent } from "../../domain/execution/send_intent.ts";
import type { PositionRow } from "../../domain/execution/protection.ts";
import { generateAgentKey } from "../../venues/venue_b/signing.ts";
import type { TestEnv } from "../_helpers/env.ts";
import { BUILDER_FEE_TENTHS_BPS, type ProviderId, seedTraders, type SimCredential, SYMBOL } from "./seed_accounts.ts";
import { simControl, type startSimulatorProcess } from "./simulator_process.ts";

type SimulatorUrls = Awaited<ReturnType<typeof startSimulatorProcess>>["urls"];

/** Each VENUE_A account its own API key. */
async function venueAKeys(env: TestEnv, urls: SimulatorUrls, count: number): Promise<SimCredential[]> {
  const { accounts } = await simControl(urls.venueA, "POST", "/accounts/bulk", {
    count,
    balances: { USDT: "10000" },
  }) as { accounts: { apiKey: string; apiSecret: string }[] };
  return accounts.map(({ apiKey, apiSecret }) => async (accountId) => ({
    scheme: "API_KEY",
    apiKey,
    sealedSecret: (await env.deps.secrets.seal(apiSecret, accountSecretBinding(accountId))).sealed,
  }));
}

/** Each VENUE_B account its own wallet, its own agent and the builder fee approved. */
async function venueBWallets(env: TestEnv, urls: SimulatorUrls, count: number): Promise<SimCredential[]> {
  const wallets = Array.from({ length: count }, () => ({
    address: `0x${bytesToHex(crypto.getRandomValues(new Uint8Array(20)))}` as const,
    agent: generateAgentKey(),
  }));
  const made = await simControl(urls.venueB, "POST", "/wallets/bulk", {
    usdc: "10000",
    builder: { address: env.deps.config.venueBBuilderAddress, maxFeeTenthsBps: BUILDER_FEE_TENTHS_BPS },
    wallets: wallets.map(({ address, agent }) => ({ address, agentAddress: agent.address })),
  });
  if (made.wallets !== count) throw new Error(`The VENUE_B simulator made no wallets: ${JSON.stringify(made)}`);
  return wallets.map(({ address, agent }) => async (accountId) => ({
    scheme: "AGENT_WALLET",
    accountAddress: address,
    agentAddress: agent.address,
    approvedBuilderFeeTenthsBps: BUILDER_FEE_TENTHS_BPS,
    sealedSecret: (await env.deps.secrets.seal(agent.privateKey, accountSecretBinding(accountId))).sealed,
  }));
}

/** `perVenue` connected accounts at each venue, each its own simulator account; answers their rows, in order. */
export async function seedWatchedAccounts(
  env: TestEnv,
  urls: SimulatorUrls,
  input: { partnerId: string; perVenue: Record<ProviderId, number> },
): Promise<Record<ProviderId, AccountRow[]>> {
  const now = Date.now();
  const rows = {} as Record<ProviderId, AccountRow[]>;
  for (const providerId of ["VENUE_A", "VENUE_B"] as const) {
    const credentials = providerId === "VENUE_A"
      ? await venueAKeys(env, urls, input.perVenue[providerId])
      : await venueBWallets(env, urls, input.perVenue[providerId]);
    const count = input.perVenue[providerId];
    await seedTraders(env, { partnerId: input.partnerId, providerId, count, credentials, now });
    // As a first read with nothing to record leaves them: facts from the connection on, funding known through a
    // minute before the read (seedTraders predates the column; left at 0 every account would owe a full read).
    await withTransaction(
      env.deps.db,
      (tx) =>
        tx.update(accountStates).set({ factsCursor: now - 60_000, fundingKnownThrough: now - 60_000 })
          .where(eq(accountStates.providerId, providerId)),
    );
    const seeded = await env.deps.db.read.select().from(providerAccounts)
      .where(eq(providerAccounts.providerId, providerId));
    const index = (row: AccountRow) => Number(row.accountId.slice(row.accountId.lastIndexOf("_") + 1));
    rows[providerId] = seeded.sort((a, b) => index(a) - index(b));
  }
  return rows;
}

/** Where a protected position's stop and target sit. */
export interface Levels {
  stopLossPrice: string;
  takeProfitPrice: string;
}

/**
 * An entry filled at the venue (market BUY of `quantity`), its position
 * opened and protected with one stop and one target (the whole quantity),
 * through the service's own verbs; answers the protected position.
 */
export async function openProtectedPosition(
  ctx: Ctx,
  account: AccountRow,
  input: { partnerId: string; intentId: string; quantity: string; levels: Levels },
): Promise<PositionRow> {
  const providerId = account.providerId as ProviderId;
  const intent = await withTransaction(ctx.db, (tx) =>
    insertIntent(
      tx,
      {
        partnerId: input.partnerId,
        intentId: input.intentId,
        clientId: account.clientId,
        providerId,
        type: "OPEN_POSITION",
        opensPosition: true,
        symbol: SYMBOL[providerId],
        side: "BUY",
        orderType: "MARKET",
        quantity: input.quantity,
        reduceOnly: false,
      },
      "SUBMITTING",
      ctx.clock.now(),
    ));
  const entry = await sendIntent(ctx, intent, account);
  if (entry.status !== "FILLED") {
    throw new Error(`The entry of ${account.accountId} did not fill: ${entry.status} ${entry.errorCode ?? ""}`);
  }
  const position = await openPositionFromFill(ctx, entry, {
    stopLossPrice: input.levels.stopLossPrice,
    takeProfits: [{ price: input.levels.takeProfitPrice, share: "1" }],
    autoBreakEven: false,
    signalId: null,
  });
  const protectedPosition = await protectPosition(ctx, position, account);
  if (protectedPosition.protectionStatus !== "PROTECTED") {
    throw new Error(
      `The position of ${account.accountId} is ${protectedPosition.protectionStatus}: ${
        protectedPosition.protectionReason ?? ""
      }`,
    );
  }
  return protectedPosition;
}

/** Runs `work` over `items`, `concurrency` at a time. */
export async function inParallel<T, R>(items: T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]);
    }
  }));
  return results;
}
