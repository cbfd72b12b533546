/**
 * Reconciling every account whose credential the venue still accepts, one
 * bounded page at a time: each page is one indexed query, each account its
 * own short transactions, and the event loop is yielded between accounts.
 * One account's failure (a venue down, a refused key) is counted and the
 * walk goes on.
 *
 * An account whose changes the venue pushes is left to its pushes, and
 * checked here cheaply once its last read is older than the sweep interval
 * (push_states.ts says which accounts and how).
 *
 * An account where an entry is at work (its entry lease is held) is left to
 * that entry and read at the next run: reading it between the entry's fill
 * and its position would see a position the service does not know yet. One
 * whose holder went silent is taken over (fencing the holder out), settled
 * and released. A free account is reconciled without claiming it, so the
 * walk never turns an entry away.
 */
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { accountStates, providerAccounts } from "../../db/schema.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { PROVIDER_IDS, type ProviderId, VenueError } from "../../venues/types.ts";
import { callWithAccount } from "../accounts/account_call.ts";
import { withTransaction } from "../../db/client.ts";
import { wallClockNow } from "../clock.ts";
import {
  type EntryLease,
  entryLeaseState,
  holdingEntryLease,
  newLeaseOwner,
  takeOverSilentLease,
} from "./entry_leases.ts";
import { reconcileAccount, sameSizes } from "./reconcile_account.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import { confirmPushes, type ReadPlan, type ReadPlans, readPlans } from "./push_states.ts";
import { readFunding, readNamedSymbols, WHOLE_READ_NEEDED } from "./pushed_reads.ts";

const PAGE_SIZE = 100;
/**
 * How long a pass may wait for its venues' budgets: it runs every minute,
 * and ends before the next begins.
 */
const PASS_MS = 50_000;

export async function reconcileAccounts(ctx: Ctx) {
  const summary = {
    accounts: 0,
    failed: 0,
    intentsChecked: 0,
    intentsStillUncertain: 0,
    newFacts: 0,
    positionsClosed: 0,
    stopsPlacedAgain: 0,
    entriesInProgress: 0,
    /** Accounts whose changes the venue pushes and that were read within the sweep interval: left to their pushes. */
    leftToPushes: 0,
    /** Pushed accounts checked cheaply (their positions' sizes), and how many of those then needed a full read. */
    swept: 0,
    sweptAndRead: 0,
    /** Pushed accounts whose funding was owed (a close waiting for it, funding not pushed): read for it alone. */
    fundingRead: 0,
    /**
     * Accounts of a venue that stopped answering, or whose request budget ran out or is down to the share
     * left to pushes' news, during this pass: next pass.
     */
    leftForNextPass: 0,
  };
  const plans = await readPlans(ctx);
  const walk = { owner: newLeaseOwner(), plans, summary, until: wallClockNow() + PASS_MS };
  // One walk per venue, side by side: a venue whose budget is spent, or down, never holds up the other.
  await Promise.all(PROVIDER_IDS.map((providerId) => walkVenue(ctx, providerId, walk)));
  return summary;
}

type Summary = Awaited<ReturnType<typeof reconcileAccounts>>;

/**
 * The venue's accounts, stalest first. While a keeper keeps pushes, before
 * each account that needs a read the walk waits while the minute's budget is
 * down to the share left to what pushes name, until the pass's end: what it
 * did not reach, the next pass reaches first.
 */
async function walkVenue(
  ctx: Ctx,
  providerId: ProviderId,
  walk: { owner: string; plans: ReadPlans; summary: Summary; until: number },
) {
  const { summary } = walk;
  const order = await stalestFirst(ctx, providerId);
  for (let start = 0; start < order.length; start += PAGE_SIZE) {
    const ids = order.slice(start, start + PAGE_SIZE);
    const rows = new Map(
      (await ctx.db.read.select().from(providerAccounts).where(inArray(providerAccounts.accountId, ids)))
        .map((row) => [row.accountId, row]),
    );
    for (const [index, id] of ids.entries()) {
      const account = rows.get(id);
      if (!account || !isReconcilable(account)) continue;
      const plan = walk.plans.planOf(account);
      if (plan === "LEAVE") {
        summary.leftToPushes++;
        continue;
      }
      const background = walk.plans.keeper !== null && plan !== "SETTLE";
      if (background && !(await ctx.egressBudgets[providerId].backgroundRoomBy(walk.until))) {
        summary.leftForNextPass += order.length - start - index;
        return;
      }
      summary.accounts++;
      const readStartedAt = wallClockNow();
      const outcome = await readByPlan(ctx, account, plan, walk.owner, summary);
      if (outcome === "BUSY") summary.entriesInProgress++;
      else if (outcome === "FAILED") summary.failed++;
      else if (outcome === "UNAVAILABLE") {
        // Every other account of this venue would meet the same refusal: they wait for the next pass.
        summary.failed++;
        summary.leftForNextPass += order.length - start - index - 1;
        return;
      } else {
        const pushes = walk.plans.toConfirm(account);
        if (pushes && outcome !== "FUNDING_READ") await confirmPushes(ctx, account, pushes, readStartedAt);
        if (typeof outcome === "object") {
          summary.intentsChecked += outcome.intentsChecked;
          summary.intentsStillUncertain += outcome.intentsStillUncertain;
          summary.newFacts += outcome.newFacts;
          summary.positionsClosed += outcome.closed;
          summary.stopsPlacedAgain += outcome.replaced;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }
}

/**
 * The account read as its plan says: its funding alone, its positions' sizes
 * ("MATCHED", or read whole when they differ), or whole.
 */
async function readByPlan(
  ctx: Ctx,
  account: AccountRow,
  plan: Exclude<ReadPlan, "LEAVE">,
  owner: string,
  summary: { fundingRead: number; swept: number; sweptAndRead: number; newFacts: number },
) {
  if (plan === "FUNDING") {
    summary.fundingRead++;
    const funding = await orReadFailure(() => readFunding(ctx, account));
    if (typeof funding === "number") summary.newFacts += funding;
    if (funding !== WHOLE_READ_NEEDED) return typeof funding === "number" ? "FUNDING_READ" : funding;
  } else if (plan === "SWEEP") {
    summary.swept++;
    const sweep = await sweepPushedAccount(ctx, account);
    if (typeof sweep === "string" && sweep !== WHOLE_READ_NEEDED) return sweep;
    summary.sweptAndRead++;
    if (typeof sweep === "object") {
      // The symbols whose sizes differ are read as a push naming them would be; whole when that cannot judge.
      const read = await readAccountOnce(
        ctx,
        account,
        owner,
        (lease) => readNamedSymbols(ctx, account, sweep.differ, lease),
      );
      if (read !== WHOLE_READ_NEEDED) return read;
    }
  }
  return await reconcileAccountOnce(ctx, account, owner);
}

/**
 * The reconcilable accounts' ids, the longest unread first (never read:
 * first of all): a pass cut short by a venue or its budget resumes, at the
 * next, with the accounts it did not reach.
 */
async function stalestFirst(ctx: Ctx, providerId: ProviderId): Promise<string[]> {
  const rows = await ctx.db.read.select({ accountId: providerAccounts.accountId }).from(providerAccounts)
    .leftJoin(
      accountStates,
      and(
        eq(accountStates.clientId, providerAccounts.clientId),
        eq(accountStates.providerId, providerAccounts.providerId),
      ),
    )
    .where(and(reconcilable, eq(providerAccounts.providerId, providerId)))
    .orderBy(asc(sql`coalesce(${accountStates.reconciledAt}, 0)`), asc(providerAccounts.accountId));
  return rows.map((row) => row.accountId);
}

/** The accounts the service keeps reading: connected, and revoked ones whose secret was kept (a position was open). */
export const reconcilable = inArray(providerAccounts.connection, ["CONNECTED", "REVOKED"]);

/** `reconcilable`, row by row: a revoked account is read only while its secret is kept, until it is flat. */
export function isReconcilable(account: AccountRow): boolean {
  return account.connection === "CONNECTED" || account.secretRetainedForReconciliation;
}

/**
 * One account, unless an entry is at work there ("BUSY"; one whose holder
 * went silent is taken over, settled and released), the venue could not be
 * asked ("UNAVAILABLE": down, or this egress's request budget spent), or it
 * refused the account ("FAILED", e.g. its credential).
 */
export function reconcileAccountOnce(ctx: Ctx, account: AccountRow, owner: string) {
  return readAccountOnce(ctx, account, owner, (lease) => reconcileAccount(ctx, account, lease));
}

/** `read` of one account (a whole one, or what a push named) on the terms of `reconcileAccountOnce`. */
export async function readAccountOnce<T>(
  ctx: Ctx,
  account: AccountRow,
  owner: string,
  read: (lease?: EntryLease) => Promise<T>,
): Promise<T | ReadFailure | "BUSY"> {
  const key = { clientId: account.clientId, providerId: account.providerId };
  const state = await entryLeaseState(ctx.db.read, key);
  // A silent holder's lease another reconciliation took over first is held again: left to it.
  const lease = state === "SILENT" ? await withTransaction(ctx.db, (tx) => takeOverSilentLease(tx, key, owner)) : null;
  if (state === "HELD" || (state === "SILENT" && !lease)) return "BUSY";
  return await orReadFailure(() => lease ? holdingEntryLease(ctx, lease, () => read(lease)) : read());
}

export type ReadFailure = "UNAVAILABLE" | "FAILED";

/** `read`, or what its failure means: the venue down or the budget spent, or the account refused. */
export async function orReadFailure<T>(read: () => Promise<T>): Promise<T | ReadFailure> {
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof ApiError || error instanceof VenueError)) throw error;
    return error instanceof ApiError && error.code === "PROVIDER_DOWN" ? "UNAVAILABLE" : "FAILED";
  }
}

/**
 * The cheap check of an account: the venue's cheapest read of its positions
 * (weight 5 at VENUE_A, 2 at VENUE_B, against a whole read's ~120 and ~85),
 * compared with the sizes the service keeps. Equal: nothing was missed, the
 * check counts as a read. Different: the symbols whose sizes differ, for the
 * caller to read (a fill, a fired stop, a push that was lost). Never read
 * whole before: a whole read is needed.
 */
export async function sweepPushedAccount(
  ctx: Ctx,
  account: AccountRow,
): Promise<ReadFailure | "MATCHED" | typeof WHOLE_READ_NEEDED | { differ: string[] }> {
  const key = { clientId: account.clientId, providerId: account.providerId };
  const [state] = await ctx.db.read.select().from(accountStates)
    .where(and(eq(accountStates.clientId, key.clientId), eq(accountStates.providerId, key.providerId)));
  if (!state) return WHOLE_READ_NEEDED;
  const readAt = ctx.clock.now();
  const sizes = await orReadFailure(() =>
    callWithAccount(ctx, account, (venue, credentials) => venue.getPositionSizes(credentials))
  );
  if (sizes === "UNAVAILABLE" || sizes === "FAILED") return sizes;
  const symbols = [...new Set([...sizes, ...state.positions].map((size) => size.symbol))];
  const differ = symbols.filter((symbol) =>
    !sameSizes(sizes.filter((size) => size.symbol === symbol), state.positions.filter((size) => size.symbol === symbol))
  );
  if (differ.length) return { differ };
  // Only if no read landed meanwhile: a newer state stays as it is.
  await withTransaction(ctx.db, (tx) =>
    tx.update(accountStates).set({ reconciledAt: readAt })
      .where(and(
        eq(accountStates.clientId, key.clientId),
        eq(accountStates.providerId, key.providerId),
        eq(accountStates.reconciledAt, state.reconciledAt),
      )));
  return "MATCHED";
}
