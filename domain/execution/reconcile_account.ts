/**
 * Reconciling one account with its venue: every open intent is settled by
 * querying its client order id (an entry resting past its timeout is
 * cancelled; a filled entry opens and protects its position, also one whose
 * process died before it could); the account's positions and resting entry
 * orders are read once and kept (the entry gates count them as taken slots
 * without calling the venue); fills and funding since the last cursor become
 * facts; the service's positions are kept (position_maintenance.ts) and a
 * position the venue holds that nothing of the service explains is reported
 * (external_positions.ts). Nothing is ever sent again from here: only cancels
 * and protection.
 */
import { wallClockNow } from "../clock.ts";
import { and, eq, inArray, ne, notExists, sql } from "drizzle-orm";
import { preparedFor, withTransaction } from "../../db/client.ts";
import { accountStates, intents, positions } from "../../db/schema.ts";
import { callWithAccount } from "../accounts/account_call.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import type { Ctx } from "../context.ts";
import type { ProviderId } from "../../venues/types.ts";
import { cancelTimedOutEntry, entryTimedOut } from "../engine/entry_timeout.ts";
import { protectFilledEntry } from "../engine/entry_fills.ts";
import { setupOfClient } from "../setups/setups.ts";
import { valuesOf } from "../setups/setup_values.ts";
import type { EntryLease } from "./entry_leases.ts";
import { type IntentRow, OPEN_STATUSES } from "./intents.ts";
import { openPositionsOf, reportExternalPositions } from "./external_positions.ts";
import { maintainPositions } from "./position_maintenance.ts";
import { reconcileIntent } from "./reconcile_intent.ts";
import { recordFill, recordFunding } from "./result_facts.ts";
import { derivePerformance, USD_FEE_ASSETS } from "../performance/portions.ts";
import { formatDec, parseDec } from "../../venues/decimal.ts";

/**
 * The account's entries that hold a fill (filled, or cancelled or expired
 * after a partial fill) and opened no position. `protectFilledEntry` decides
 * with the same rule; this only finds them, on the one-position-per-entry index.
 */
const filledEntriesWithoutPosition = preparedFor((db) =>
  db.select().from(intents).where(and(
    eq(intents.clientId, sql.placeholder("clientId")),
    eq(intents.providerId, sql.placeholder("providerId")),
    eq(intents.opensPosition, true),
    inArray(intents.status, ["FILLED", "CANCELED", "EXPIRED"]),
    ne(intents.executedQuantity, "0"),
    notExists(db.select({ one: sql`1` }).from(positions).where(eq(positions.entryIntentId, intents.id))),
  )).prepare()
);

/** How long after a funding instant the venue's income history is trusted to show it. */
export const FUNDING_PUBLICATION_MARGIN_MS = 60_000;

export interface AccountReconciliation {
  intentsChecked: number;
  intentsStillUncertain: number;
  newFacts: number;
  /** Fills whose fee is in an asset without a USD value (e.g. BNB): recorded, their portions wait for a value. */
  unvaluedFills: number;
  positions: number;
  restingEntries: number;
  /** Positions the service keeps: closed, resized or moved to break-even, stops placed again. */
  closed: number;
  updated: number;
  replaced: number;
}

/**
 * `lease`: the account's entry lease when the caller holds it (an opening
 * settling the account before its gates, or a reconciliation that took over
 * a silent holder's); positions are then opened only while it is still held.
 */
export async function reconcileAccount(
  ctx: Ctx,
  account: AccountRow,
  lease?: EntryLease,
): Promise<AccountReconciliation> {
  const providerId = account.providerId as ProviderId;
  const key = { clientId: account.clientId, providerId };
  const { open, stillUncertain, settled } = await settleOpenIntents(ctx, account, lease);

  const [state] = await ctx.db.read.select().from(accountStates)
    .where(and(eq(accountStates.clientId, account.clientId), eq(accountStates.providerId, providerId)));
  // Venue times are wall-clock times: a QA test clock set ahead must not skip the account's first fills.
  const since = state?.factsCursor ?? Math.min(account.connectedAt, wallClockNow());
  const answeredThroughIntent = await entriesAnsweredThrough(ctx, key);
  // Read before the venue is: a position opened after this read (an entry filling while the account is
  // read) may be missing from the read, and must not be taken for one the venue no longer holds.
  const held = await openPositionsOf(ctx.db.read).all(key);
  const readFrom = wallClockNow();
  // The account is as read from here: a keeper whose pushes began flowing before it needs no check of its own.
  const readAt = ctx.clock.now();
  const read = await callWithAccount(ctx, account, async (venue, credentials) => ({
    snapshot: await venue.getAccount(credentials),
    fills: await venue.getFills(credentials, { since }),
    funding: await venue.getFunding(credentials, { since }),
  }));
  const heldAtVenue = read.snapshot.positions.map(({ symbol, side, quantity }) => ({ symbol, side, quantity }));
  const restingEntries = read.snapshot.openOrders.filter((order) => !order.reduceOnly).length;
  const now = ctx.clock.now();

  const added = await withTransaction(ctx.db, async (tx) => {
    let added = 0;
    for (const fill of read.fills) if (await recordFill(tx, key, fill, now)) added++;
    for (const payment of read.funding) if (await recordFunding(tx, key, payment, now)) added++;
    const seen = [...read.fills.map((fill) => fill.time), ...read.funding.map((payment) => payment.time)];
    const row = {
      ...key,
      positions: heldAtVenue,
      restingEntries,
      factsCursor: Math.max(since, ...seen),
      // Funding the venue books at an instant may show up a little later: trust the read up to a margin before it.
      fundingKnownThrough: Math.max(state?.fundingKnownThrough ?? 0, readFrom - FUNDING_PUBLICATION_MARGIN_MS),
      reconciledAt: readAt,
      answeredThroughIntent,
    };
    await tx.insert(accountStates).values(row)
      .onConflictDoUpdate({ target: [accountStates.clientId, accountStates.providerId], set: row });
    await derivePerformance(tx, key, now);
    return added;
  });
  const unvalued = read.fills.filter((fill) => !USD_FEE_ASSETS.has(fill.feeAsset)).length;
  const maintenance = await maintainPositions(ctx, account, held, read.snapshot.positions, settled, lease);
  await reportExternalPositions(ctx, account, read.snapshot.positions, held, lease);
  return {
    intentsChecked: open,
    intentsStillUncertain: stillUncertain,
    newFacts: added,
    unvaluedFills: unvalued,
    positions: heldAtVenue.length,
    restingEntries,
    ...maintenance,
  };
}

/**
 * Every open intent of the account settled by querying its client order id
 * (an entry resting past its timeout cancelled, a filled entry's position
 * opened and protected), and filled entries whose position a dead process
 * never opened: the first step of every read of an account.
 */
export async function settleOpenIntents(ctx: Ctx, account: AccountRow, lease?: EntryLease) {
  const key = { clientId: account.clientId, providerId: account.providerId };
  const open = await ctx.db.read.select().from(intents)
    .where(and(
      eq(intents.clientId, account.clientId),
      eq(intents.providerId, account.providerId),
      inArray(intents.status, [...OPEN_STATUSES]),
    ));
  const { entryTimeoutMinutes } = valuesOf(
    (await setupOfClient(ctx.db.read, account.clientId, account.providerId as ProviderId)) ?? null,
  );
  let stillUncertain = 0;
  const settled: IntentRow[] = [];
  for (const intent of open) {
    const answer = await reconcileIntent(ctx, intent, account);
    if (!answer.resolved) stillUncertain++;
    let current = answer.intent;
    if (entryTimedOut(current, entryTimeoutMinutes, ctx.clock.now())) {
      current = await cancelTimedOutEntry(ctx, current, account);
    }
    settled.push(current);
    await protectFilledEntry(ctx, current, account, lease);
  }
  // A process that died between an entry's fill and its position (the send's answer was recorded, the
  // position not yet opened) left a filled entry that no open intent points to: it opens and is protected here.
  for (const entry of await filledEntriesWithoutPosition(ctx.db.read).all(key)) {
    await protectFilledEntry(ctx, entry, account, lease);
  }
  return { open: open.length, stillUncertain, settled };
}

/**
 * The highest intent id below which every entry of the account has had its
 * venue answer: the account read that follows shows all of them, and entries
 * after it are counted as taken slots until the next reconciliation.
 */
async function entriesAnsweredThrough(ctx: Ctx, key: { clientId: number; providerId: string }) {
  const [row] = await ctx.db.read.select({
    firstUnanswered: sql<number | null>`min(CASE WHEN ${intents.status} IN ('SUBMITTING', 'UNCERTAIN')
      AND ${intents.opensPosition} = 1 THEN ${intents.id} END)`,
    last: sql<number | null>`max(${intents.id})`,
  }).from(intents).where(and(eq(intents.clientId, key.clientId), eq(intents.providerId, key.providerId)));
  return row.firstUnanswered !== null ? row.firstUnanswered - 1 : row.last ?? 0;
}

type Size = { symbol: string; side: string; quantity: string };

/** Whether two reads of an account's positions' sizes tell the same (in any order, any decimal spelling). */
export function sameSizes(venue: Size[], kept: Size[]): boolean {
  const text = (sizes: Size[]) =>
    sizes.map(({ symbol, side, quantity }) => `${symbol}:${side}:${formatDec(parseDec(quantity))}`).sort().join(",");
  return text(venue) === text(kept);
}
