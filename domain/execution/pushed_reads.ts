/**
 * Reading what a push named, at a fraction of a whole read's request
 * weight (~120 at VENUE_A, ~85 at VENUE_B): at the venues' published budgets
 * a whole read per push would leave a fill or a fired stop unknown for
 * minutes once a few dozen accounts trade at once.
 *
 * A push is never taken as the fact; what it named is read:
 * - an order or a trade in a symbol (`readNamedSymbols`): the account's open
 *   intents settled by query (weight 1–2 each), its positions' sizes (the
 *   cheapest read: 5 and 2) and its fills in those symbols since its cursor
 *   (5 and 20); its positions are then kept exactly as after a whole read
 *   (closed, resized, stops placed again: position_maintenance.ts);
 * - a funding payment (`readFunding`): the funding booked since it was last
 *   known (30 and 20).
 * Whatever such a read cannot judge is left to a whole read, which the
 * caller makes at once: a position the venue holds that the service does
 * not, a size that changed in a symbol the push did not name, an account
 * never read whole.
 *
 * Neither moves the account's facts cursor (fills of other symbols are not
 * read) nor its last whole read: the hourly sweep still checks the account.
 */
import { and, eq, lt } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { accountStates } from "../../db/schema.ts";
import { callWithAccount } from "../accounts/account_call.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import { wallClockNow } from "../clock.ts";
import type { Ctx } from "../context.ts";
import { derivePerformance, USD_FEE_ASSETS } from "../performance/portions.ts";
import type { ProviderId } from "../../venues/types.ts";
import type { EntryLease } from "./entry_leases.ts";
import { openPositionsOf } from "./external_positions.ts";
import { maintainPositions } from "./position_maintenance.ts";
import {
  type AccountReconciliation,
  FUNDING_PUBLICATION_MARGIN_MS,
  sameSizes,
  settleOpenIntents,
} from "./reconcile_account.ts";
import { recordFill, recordFunding } from "./result_facts.ts";

/** The answer of a read that cannot judge what it found: the account is to be read whole. */
export const WHOLE_READ_NEEDED = "WHOLE_READ_NEEDED";

/**
 * The account after a push named `symbols`: its intents settled, its
 * positions' sizes and its fills in those symbols read, its positions kept.
 * `lease` as for `reconcileAccount`.
 */
export async function readNamedSymbols(
  ctx: Ctx,
  account: AccountRow,
  symbols: string[],
  lease?: EntryLease,
): Promise<AccountReconciliation | typeof WHOLE_READ_NEEDED> {
  const key = { clientId: account.clientId, providerId: account.providerId as ProviderId };
  const state = await stateOf(ctx, account);
  if (!state) return WHOLE_READ_NEEDED;
  const { open, stillUncertain, settled } = await settleOpenIntents(ctx, account, lease);
  // As for a whole read: the positions held before the venue is read (one opened after may be missing from it).
  const held = await openPositionsOf(ctx.db.read).all(key);
  const read = await callWithAccount(ctx, account, async (venue, credentials) => ({
    sizes: await venue.getPositionSizes(credentials),
    fills: (await Promise.all(
      symbols.map((symbol) => venue.getFills(credentials, { symbol, since: state.factsCursor })),
    )).flat(),
  }));
  type Size = { symbol: string; side: string };
  const named = (size: Size) => symbols.includes(size.symbol);
  const ours = (size: Size) => held.some((position) => position.symbol === size.symbol && position.side === size.side);
  const judged = read.sizes.every(ours) && state.positions.every(ours) &&
    sameSizes(read.sizes.filter((size) => !named(size)), state.positions.filter((size) => !named(size)));
  if (!judged) return WHOLE_READ_NEEDED;
  const now = ctx.clock.now();
  const added = await withTransaction(ctx.db, async (tx) => {
    let added = 0;
    for (const fill of read.fills) if (await recordFill(tx, key, fill, now)) added++;
    await tx.update(accountStates).set({ positions: read.sizes }).where(matching(key));
    await derivePerformance(tx, key, now);
    return added;
  });
  const maintenance = await maintainPositions(ctx, account, held, read.sizes, settled, lease);
  return {
    intentsChecked: open,
    intentsStillUncertain: stillUncertain,
    newFacts: added,
    unvaluedFills: read.fills.filter((fill) => !USD_FEE_ASSETS.has(fill.feeAsset)).length,
    positions: read.sizes.length,
    restingEntries: state.restingEntries,
    ...maintenance,
  };
}

/**
 * The funding booked for the account since funding was last known through,
 * recorded; known through a margin before this read from then on (the
 * closing portions waiting for it are confirmed). Answers the new payments.
 */
export async function readFunding(ctx: Ctx, account: AccountRow): Promise<number | typeof WHOLE_READ_NEEDED> {
  const key = { clientId: account.clientId, providerId: account.providerId as ProviderId };
  const state = await stateOf(ctx, account);
  if (!state || state.fundingKnownThrough === 0) return WHOLE_READ_NEEDED;
  const readFrom = wallClockNow();
  const funding = await callWithAccount(
    ctx,
    account,
    (venue, credentials) => venue.getFunding(credentials, { since: state.fundingKnownThrough }),
  );
  const now = ctx.clock.now();
  return await withTransaction(ctx.db, async (tx) => {
    let added = 0;
    for (const payment of funding) if (await recordFunding(tx, key, payment, now)) added++;
    const knownThrough = readFrom - FUNDING_PUBLICATION_MARGIN_MS;
    await tx.update(accountStates).set({ fundingKnownThrough: knownThrough })
      .where(and(matching(key), lt(accountStates.fundingKnownThrough, knownThrough)));
    await derivePerformance(tx, key, now);
    return added;
  });
}

async function stateOf(ctx: Ctx, account: AccountRow) {
  const [state] = await ctx.db.read.select().from(accountStates).where(matching(account));
  return state;
}

function matching(key: { clientId: number; providerId: string }) {
  return and(eq(accountStates.clientId, key.clientId), eq(accountStates.providerId, key.providerId));
}
