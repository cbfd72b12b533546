/**
 * What the reconcile job leaves to the venues' pushes (account_pushes.ts
 * keeps them). Only rows the keeper holding the lease now wrote count, and
 * only while it renews it: a row of a keeper that went silent or whose lease
 * ran out counts as not live.
 *
 * The keeper records when an account's pushes began flowing; anything before
 * may have been missed, so the job keeps polling the account until one of
 * its reads started after that moment, and then records it live
 * (`confirmPushes`): from there the job leaves it to its pushes.
 */
import { and, eq, inArray, isNotNull, lte, sql } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { accountPushes, accountStates, intents, performancePortions, positions } from "../../db/schema.ts";
import { HOUR_MS, wallClockNow } from "../clock.ts";
import type { Ctx } from "../context.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import { serviceLeaseHolder } from "../jobs/service_leases.ts";
import { OPEN_STATUSES } from "./intents.ts";
import { FUNDING_PUBLICATION_MARGIN_MS } from "./reconcile_account.ts";

export const PUSH_KEEPER_LEASE = "account-pushes";
/** The keeper renews its lease every few seconds; another instance takes over half a minute after it died. */
export const PUSH_KEEPER_LEASE_MS = 30_000;
/**
 * A keeper silent this long (two of its rounds and some slack) no longer
 * counts for the job: its accounts are polled again at once, not only once
 * another instance may take its lease over.
 */
const KEEPER_SILENT_MS = 12_000;

/** How old the last read of an account whose changes are pushed may get before the job checks it again. */
export const SWEEP_INTERVAL_MS = HOUR_MS;

/**
 * What the reconcile job does with an account on this pass: leave it to its
 * pushes, read the funding owed (pushed_reads.ts), check it cheaply (its
 * positions' sizes against those the service keeps: a full read only when
 * they differ), read it whole, or read it whole at once to settle what is at
 * work there (never waiting for the budget's background share: a position's
 * protection may depend on it).
 */
export type ReadPlan = "LEAVE" | "FUNDING" | "SWEEP" | "READ" | "SETTLE";

/**
 * The reconcile job's plan for each account.
 * - Settled (read whole at every pass): an account never read, one with an entry
 *   still at work (its timeout is a matter of time, which no venue pushes),
 *   and one holding a position whose protection is unknown (its opener died
 *   before recording its stop).
 * - Pushes flow: left to them while its last read is within the sweep
 *   interval, its funding alone read when a close's result waits for the
 *   funding through its time (once the venue has had time to publish it).
 *   Past the interval, checked cheaply; read whole when funding is owed: a
 *   close waiting for it, or positions whose funding the venue does not push.
 * - No keeper keeps pushes (none runs, or it went silent): read whole at
 *   every pass.
 * - A keeper runs, but the account's pushes do not flow (lost, or not yet
 *   checked after they came back: thousands at once when a keeper starts):
 *   polled, its positions' sizes checked at every pass (a whole read when
 *   they differ: a fill, a fired stop); read whole when a close waits for
 *   funding or its positions' funding is not known within the interval. A
 *   whole read of each at every pass would, at the venues' budgets, reach
 *   each of thousands only every few hours, and hold back the keeper's
 *   checks that bring them back to their pushes. (The protection monitor
 *   still verifies their stops and targets.)
 */
export async function readPlans(ctx: Ctx): Promise<ReadPlans> {
  const keeper = await liveKeeper(ctx);
  const rows = keeper
    ? await ctx.db.read.select({
      clientId: accountPushes.clientId,
      providerId: accountPushes.providerId,
      live: accountPushes.live,
      flowingSince: accountPushes.flowingSince,
      coversFunding: accountPushes.coversFunding,
    }).from(accountPushes).where(and(eq(accountPushes.owner, keeper), isNotNull(accountPushes.flowingSince)))
    : [];
  const pushed = new Map(rows.filter((row) => row.live).map((row) => [`${row.clientId}:${row.providerId}`, row]));
  const unconfirmed = new Map(
    rows.filter((row) => !row.live).map((row) => [`${row.clientId}:${row.providerId}`, row.flowingSince!]),
  );
  const states = new Map(
    (await ctx.db.read.select({
      clientId: accountStates.clientId,
      providerId: accountStates.providerId,
      reconciledAt: accountStates.reconciledAt,
      holding: sql<number>`json_array_length(${accountStates.positions}) > 0`,
      fundingKnownThrough: accountStates.fundingKnownThrough,
    }).from(accountStates)).map((row) => [`${row.clientId}:${row.providerId}`, row]),
  );
  const atWork = new Set(
    (await ctx.db.read.selectDistinct({ clientId: intents.clientId, providerId: intents.providerId }).from(intents)
      .where(and(eq(intents.opensPosition, true), inArray(intents.status, [...OPEN_STATUSES]))))
      .map((row) => `${row.clientId}:${row.providerId}`),
  );
  // A position whose protection is unknown (its opener died before recording its stop): read whole until it is known.
  for (
    const row of await ctx.db.read.selectDistinct({ clientId: positions.clientId, providerId: positions.providerId })
      .from(positions).where(and(eq(positions.status, "OPEN"), eq(positions.protectionStatus, "UNKNOWN")))
  ) atWork.add(`${row.clientId}:${row.providerId}`);
  // Venue times (closes, funding known through) are wall-clock times; the last read is the service clock's.
  const published = wallClockNow() - FUNDING_PUBLICATION_MARGIN_MS;
  const waitingForFunding = new Set(
    (await ctx.db.read.selectDistinct({
      clientId: performancePortions.clientId,
      providerId: performancePortions.providerId,
    }).from(performancePortions).where(and(
      eq(performancePortions.status, "PENDING"),
      eq(performancePortions.pendingReason, "FUNDING_PENDING"),
      lte(performancePortions.closedAt, published),
    ))).map((row) => `${row.clientId}:${row.providerId}`),
  );
  const now = ctx.clock.now();
  const planOf = (account: AccountRow): ReadPlan => {
    const key = `${account.clientId}:${account.providerId}`;
    const state = states.get(key);
    if (!state || atWork.has(key)) return "SETTLE";
    if (!keeper) return "READ";
    const waiting = waitingForFunding.has(key);
    const holding = Boolean(state.holding);
    const pushes = pushed.get(key);
    if (pushes) {
      if (now - state.reconciledAt < SWEEP_INTERVAL_MS) return waiting ? "FUNDING" : "LEAVE";
      return waiting || (holding && !pushes.coversFunding) ? "READ" : "SWEEP";
    }
    const fundingUnknown = holding && published - state.fundingKnownThrough > SWEEP_INTERVAL_MS;
    return waiting || fundingUnknown ? "READ" : "SWEEP";
  };
  /** The keeper's pushes flowing for the account since a moment no read has covered yet, or null. */
  const toConfirm = (account: AccountRow): PushesToConfirm | null => {
    const since = unconfirmed.get(`${account.clientId}:${account.providerId}`);
    return keeper && since !== undefined ? { keeper, since } : null;
  };
  return { keeper, planOf, toConfirm };
}

/**
 * The accounts ("clientId:providerId") whose every order change the venue
 * pushes now, live: a stop or target that stops working there is pushed, and
 * read at once (account_pushes.ts), so the protection monitor leaves them.
 */
export async function accountsWithOrdersPushed(ctx: Ctx): Promise<Set<string>> {
  const keeper = await liveKeeper(ctx);
  if (!keeper) return new Set();
  const rows = await ctx.db.read.select({ clientId: accountPushes.clientId, providerId: accountPushes.providerId })
    .from(accountPushes).where(and(
      eq(accountPushes.owner, keeper),
      eq(accountPushes.live, true),
      eq(accountPushes.coversOrders, true),
    ));
  return new Set(rows.map((row) => `${row.clientId}:${row.providerId}`));
}

/**
 * The keeper holding the lease, while it renews it. Only while one runs does
 * background work leave part of the budget to what pushes name: without one,
 * nothing is pushed.
 */
export function liveKeeper(ctx: Ctx): Promise<string | null> {
  return serviceLeaseHolder(ctx.db, PUSH_KEEPER_LEASE, PUSH_KEEPER_LEASE_MS - KEEPER_SILENT_MS);
}

export interface ReadPlans {
  /** The keeper of the pushes, while one runs. */
  keeper: string | null;
  planOf(account: AccountRow): ReadPlan;
  /** The keeper's pushes flowing for the account since a moment no read has covered yet, or null. */
  toConfirm(account: AccountRow): PushesToConfirm | null;
}

export interface PushesToConfirm {
  keeper: string;
  /** Wall clock at which they began flowing. */
  since: number;
}

/**
 * After a read of the account (its positions' sizes matched, or a whole
 * read) that started at `readStartedAt` (wall clock): the gap before its
 * pushes began flowing is covered, and the job may leave it to them. Only
 * while the row is as the plan saw it: pushes that dropped or came back
 * since (the keeper rewrote the row) wait for another read.
 */
export async function confirmPushes(
  ctx: Ctx,
  account: AccountRow,
  pushes: PushesToConfirm,
  readStartedAt: number,
): Promise<void> {
  if (readStartedAt <= pushes.since) return;
  await withTransaction(
    ctx.db,
    (tx) =>
      tx.update(accountPushes).set({ live: true, changedAt: wallClockNow() }).where(and(
        eq(accountPushes.clientId, account.clientId),
        eq(accountPushes.providerId, account.providerId),
        eq(accountPushes.owner, pushes.keeper),
        eq(accountPushes.flowingSince, pushes.since),
        eq(accountPushes.live, false),
      )),
  );
}
