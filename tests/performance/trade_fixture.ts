/**
 * Trades as the venues report them, written through the service's own fact
 * recording: a position with its entry and exit intents (the orders the
 * service placed), the fills and funding payments as venue facts, and the
 * funding horizon a reconciliation would have read. Golden tests drive
 * accounting from here with exact, hand-checked numbers instead of market
 * moves on a simulator.
 */
import { and, eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { accountStates, clients, intents, positions } from "../../db/schema.ts";
import { recordFill, recordFunding } from "../../domain/execution/result_facts.ts";
import { derivePerformance } from "../../domain/performance/portions.ts";
import type { ProviderId } from "../../venues/types.ts";
import type { TestEnv } from "../_helpers/env.ts";

export interface FillFacts {
  tradeId: string;
  quantity: string;
  price?: string;
  realizedPnl?: string;
  /** Commission including the builder fee (VENUE_B), in `feeAsset` (default the provider's quote). */
  fee: string;
  feeAsset?: string;
  builderFee?: string;
  at: string;
}

export interface TradeFacts {
  positionId: string;
  symbol?: string;
  entries: FillFacts[];
  exits: FillFacts[];
  funding?: { amount: string; at: string }[];
  /** Venue time through which funding is known (default: everything). */
  fundingKnownThrough?: string;
  /** A fill the service placed no order for (traded elsewhere on the account). */
  foreign?: FillFacts[];
  /** The position is still open (its closing fills come later, with `lateFills`). */
  open?: boolean;
}

/** A partner contract for accounting tests: 20 % monthly with carry, no subscription (its own tests add one). */
export function billingContract(overrides: Record<string, unknown> = {}) {
  return {
    subscriptionMonthlyUsd: 0,
    currency: "USDT",
    performanceFeePercent: 0.2,
    performancePeriod: "MONTHLY",
    carryPolicy: "CARRY",
    dueDays: 5,
    subscriptionProviders: [],
    ...overrides,
  };
}

export async function clientIdOf(env: TestEnv, externalUserId: string, partnerId: string): Promise<number> {
  const [row] = await env.deps.db.read.select({ id: clients.id }).from(clients)
    .where(and(eq(clients.partnerId, partnerId), eq(clients.externalUserId, externalUserId)));
  return row.id;
}

const QUOTE = { VENUE_A: "USDT", VENUE_B: "USDC" } as const;

/** Record one trade's facts for the client, then derive its performance as a reconciliation does. */
export async function recordTrade(
  env: TestEnv,
  partnerId: string,
  clientId: number,
  providerId: ProviderId,
  trade: TradeFacts,
): Promise<void> {
  const symbol = trade.symbol ?? (providerId === "VENUE_A" ? "BTCUSDT" : "BTCUSDC");
  const now = env.clock.now();
  const account = { clientId, providerId };
  // Position ids are global: the test's names are per client.
  const positionId = `${clientId}-${trade.positionId}`;
  await withTransaction(env.deps.db, async (tx) => {
    const order = (kind: "entry" | "exit") => ({
      partnerId,
      intentId: `${positionId}:${kind}`,
      clientId,
      providerId,
      type: kind === "entry" ? "ENTRY" : "TAKE_PROFIT",
      opensPosition: kind === "entry",
      symbol,
      side: kind === "entry" ? "BUY" : "SELL",
      orderType: kind === "entry" ? "LIMIT" : "TAKE_PROFIT_MARKET",
      quantity: "1",
      reduceOnly: kind === "exit",
      clientOrderId: `${positionId}-${kind}`,
      orderId: `${positionId}-${kind}-order`,
      positionId: kind === "exit" ? positionId : null,
      status: "FILLED",
      createdAt: now,
    });
    const [entry] = await tx.insert(intents).values(order("entry")).returning({ id: intents.id });
    await tx.insert(intents).values(order("exit"));
    await tx.insert(positions).values({
      positionId,
      clientId,
      providerId,
      symbol,
      side: "LONG",
      quantity: "1",
      entryPrice: "1",
      takeProfits: [],
      autoBreakEven: false,
      protectionStatus: "PROTECTED",
      entryIntentId: entry.id,
      status: trade.open ? "OPEN" : "CLOSED",
      openedAt: now,
      closedAt: trade.open ? null : now,
      updatedAt: now,
    });
    const fill = (facts: FillFacts, kind: "entry" | "exit" | "foreign") =>
      recordVenueFill(tx, account, symbol, positionId, facts, kind, now);
    for (const facts of trade.entries) await fill(facts, "entry");
    for (const facts of trade.exits) await fill(facts, "exit");
    for (const facts of trade.foreign ?? []) await fill(facts, "foreign");
    for (const payment of trade.funding ?? []) {
      await recordFunding(
        tx,
        account,
        { symbol, amount: payment.amount, asset: QUOTE[providerId], time: Date.parse(payment.at) },
        now,
      );
    }
    await setFundingKnownThrough(tx, account, trade.fundingKnownThrough);
    await derivePerformance(tx, account, now);
  });
}

type Tx = Parameters<Parameters<typeof withTransaction>[1]>[0];

function recordVenueFill(
  tx: Tx,
  account: { clientId: number; providerId: ProviderId },
  symbol: string,
  positionId: string,
  facts: FillFacts,
  kind: "entry" | "exit" | "foreign",
  now: number,
) {
  return recordFill(tx, account, {
    tradeId: facts.tradeId,
    orderId: kind === "foreign" ? `elsewhere-${facts.tradeId}` : `${positionId}-${kind}-order`,
    clientOrderId: null,
    symbol,
    side: kind === "exit" ? "SELL" : "BUY",
    price: facts.price ?? "65000",
    quantity: facts.quantity,
    realizedPnl: facts.realizedPnl ?? "0",
    fee: facts.fee,
    feeAsset: facts.feeAsset ?? QUOTE[account.providerId],
    builderFee: facts.builderFee ?? (account.providerId === "VENUE_B" ? "0" : null),
    time: Date.parse(facts.at),
  }, now);
}

/** Fills of an already recorded trade that the venue reported late (its entry or closing fills), then the derivation. */
export async function lateFills(
  env: TestEnv,
  clientId: number,
  providerId: ProviderId,
  trade: Pick<TradeFacts, "positionId" | "symbol">,
  kind: "entry" | "exit",
  fills: FillFacts[],
) {
  const symbol = trade.symbol ?? (providerId === "VENUE_A" ? "BTCUSDT" : "BTCUSDC");
  const account = { clientId, providerId };
  await withTransaction(env.deps.db, async (tx) => {
    for (const facts of fills) {
      await recordVenueFill(tx, account, symbol, `${clientId}-${trade.positionId}`, facts, kind, env.clock.now());
    }
    await derivePerformance(tx, account, env.clock.now());
  });
}

/** Funding payments of an already recorded trade, then the derivation. */
export async function lateFunding(
  env: TestEnv,
  clientId: number,
  providerId: ProviderId,
  trade: Pick<TradeFacts, "positionId" | "symbol">,
  funding: { amount: string; at: string }[],
) {
  const symbol = trade.symbol ?? (providerId === "VENUE_A" ? "BTCUSDT" : "BTCUSDC");
  const account = { clientId, providerId };
  await withTransaction(env.deps.db, async (tx) => {
    for (const payment of funding) {
      await recordFunding(
        tx,
        account,
        { symbol, amount: payment.amount, asset: QUOTE[providerId], time: Date.parse(payment.at) },
        env.clock.now(),
      );
    }
    await derivePerformance(tx, account, env.clock.now());
  });
}

/** An open trade's position closed (the venue shows none): funding after its last close is not its own. */
export async function positionClosed(env: TestEnv, clientId: number, trade: Pick<TradeFacts, "positionId">) {
  const now = env.clock.now();
  await withTransaction(
    env.deps.db,
    (tx) =>
      tx.update(positions).set({ status: "CLOSED", closedAt: now, updatedAt: now })
        .where(eq(positions.positionId, `${clientId}-${trade.positionId}`)),
  );
}

/** What a reconciliation records after reading the account's funding through `through` (default: all). */
export async function fundingReadThrough(env: TestEnv, clientId: number, providerId: ProviderId, through: string) {
  await withTransaction(env.deps.db, async (tx) => {
    await setFundingKnownThrough(tx, { clientId, providerId }, through);
    await derivePerformance(tx, { clientId, providerId }, env.clock.now());
  });
}

async function setFundingKnownThrough(
  tx: Tx,
  account: { clientId: number; providerId: ProviderId },
  through: string | undefined,
) {
  const fundingKnownThrough = through === undefined ? Date.parse("2100-01-01T00:00:00Z") : Date.parse(through);
  const [existing] = await tx.select().from(accountStates)
    .where(and(eq(accountStates.clientId, account.clientId), eq(accountStates.providerId, account.providerId)));
  if (existing) {
    await tx.update(accountStates).set({ fundingKnownThrough })
      .where(and(eq(accountStates.clientId, account.clientId), eq(accountStates.providerId, account.providerId)));
  } else {
    await tx.insert(accountStates).values({
      ...account,
      positions: [],
      restingEntries: 0,
      factsCursor: 0,
      reconciledAt: 0,
      fundingKnownThrough,
    });
  }
}
