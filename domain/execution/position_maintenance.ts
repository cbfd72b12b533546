/**
 * Keeping each open position protected, from what the reconciliation read at
 * the venue (its protective intents already settled by query):
 * - the venue holds no such position any more: its leftover protective
 *   orders are cancelled (a stale reduce-only target would act on the next
 *   position of the symbol) and it is CLOSED (`position.closed`);
 * - its size changed (a target filled): `position.updated`;
 * - its opener died between recording it and recording its stop and targets:
 *   they are placed as the opener would have;
 * - a target filled and `autoBreakEven`: the stop moves to the entry price;
 * - the stop is gone while the position is open: it is placed again, within
 *   the position's placement attempts (protective_legs.ts);
 * - a protective order replaced (break-even, SET_STOP_LOSS, SET_TAKE_PROFIT)
 *   by a process that died before cancelling it, or left working when its
 *   position closed, is cancelled;
 * and the protection status is recorded from the legs that should be working.
 * Maintenance: no gate applies, whatever the client's or contract's state.
 *
 * A stop is always replaced new-first: the new one is placed, and the one it
 * replaces cancelled only once the new one works. A crash in between leaves
 * two stops (the older one cancelled by a later run), never none.
 */
import { and, asc, eq, inArray } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { intents, positions } from "../../db/schema.ts";
import { callWithAccount } from "../accounts/account_call.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import { wallClockNow } from "../clock.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { cmp } from "../../venues/decimal.ts";
import { type PositionSize, VenueError } from "../../venues/types.ts";
import { type EntryLease, entryLeaseState } from "./entry_leases.ts";
import { intentById, type IntentRow, transitionIntent } from "./intents.ts";
import { emitPositionEvent, placeLeg, type PositionRow, protectPosition, recordProtection } from "./protection.ts";
import { claimAttempt, latestStop, legsToKeep, stopAt, WORKING } from "./protective_legs.ts";

export interface PositionMaintenance {
  closed: number;
  updated: number;
  replaced: number;
}

/**
 * How long a replaced protective order is left working before it counts as
 * left over: a partner's SET_TAKE_PROFIT places its new targets before it
 * records them on the position, and they must not be taken for leftovers
 * meanwhile. Wall-clock time, as the intents' sends are stamped.
 */
export const REPLACED_LEG_GRACE_MS = 30_000;

/**
 * `open`: the account's open positions as they were read before the venue
 * was. A position opened after that read (an entry that filled while the
 * account was being read) may be missing from `venuePositions` without being
 * closed, so it is left to the next run. `settled`: the account's intents
 * the reconciliation has just settled by query. `lease`: the account's entry
 * lease, when the caller holds it.
 */
export async function maintainPositions(
  ctx: Ctx,
  account: AccountRow,
  open: PositionRow[],
  venuePositions: PositionSize[],
  settled: IntentRow[],
  lease?: EntryLease,
): Promise<PositionMaintenance> {
  const summary: PositionMaintenance = { closed: 0, updated: 0, replaced: 0 };
  for (const read of open) {
    // As it is now: the protection monitor may have written it since it was read.
    const [position] = await ctx.db.read.select().from(positions).where(eq(positions.positionId, read.positionId));
    if (position.status !== "OPEN") continue;
    const legs = await ctx.db.read.select().from(intents)
      .where(eq(intents.positionId, position.positionId)).orderBy(asc(intents.id));
    const atVenue = venuePositions.find((p) => p.symbol === position.symbol && p.side === position.side);
    if (!atVenue) {
      await closePosition(ctx, account, position, legs);
      summary.closed++;
      continue;
    }
    let current = position;
    if (cmp(atVenue.quantity, position.quantity) !== 0) {
      current = await updatePosition(ctx, position, { quantity: atVenue.quantity });
      summary.updated++;
    }
    if (current.protectionStatus === "UNKNOWN" && legs.length === 0) {
      // Protection not yet judged and no stop or target recorded (an opener records them with the position,
      // so it had none to place, or the position predates that): its opener died before judging it, or is at
      // work right now, holding the account's entry lease, and is left to finish.
      const openerAtWork = !lease && await entryLeaseState(ctx.db.read, account) === "HELD";
      if (!openerAtWork) await protectPosition(ctx, current, account);
      continue;
    }
    const stop = latestStop(legs);
    const stopWorking = stop !== undefined && WORKING.has(stop.status);
    const targetFilled = legs.some((leg) => leg.type === "TAKE_PROFIT" && leg.status === "FILLED");
    if (current.autoBreakEven && !current.breakEvenDone && targetFilled && current.stopLossPrice) {
      // A run that died after placing the stop at the entry price placed it already.
      const placed = stopWorking && cmp(stop.triggerPrice!, current.entryPrice) === 0;
      if (!placed) {
        legs.push(await placeLeg(ctx, current, account, stopAt(current.entryPrice, atVenue.quantity), legs.length + 1));
      }
      await cancelReplacedStops(ctx, account, legs);
      current = await updatePosition(ctx, current, { stopLossPrice: current.entryPrice, breakEvenDone: true });
      summary.updated++;
    } else if (current.stopLossPrice && !stopWorking) {
      const stopLoss = stopAt(current.stopLossPrice, atVenue.quantity);
      const claimed = await claimAttempt(ctx, current);
      if (claimed) {
        current = claimed;
        legs.push(await placeLeg(ctx, current, account, stopLoss, legs.length + 1));
        summary.replaced++;
      }
    }
    await cancelLeftoverLegs(ctx, account, current, legs);
    await recordProtection(ctx, current, legsToKeep(current, legs));
  }
  const kept = new Set(open.map((position) => position.positionId));
  await cancelLegsOfClosedPositions(ctx, account, settled.filter((leg) => !kept.has(leg.positionId!)));
  return summary;
}

/**
 * Once the position's latest stop works at the venue, the older stops still
 * working are cancelled (never before: the position would be left without
 * one). `legs` is updated as they are.
 */
async function cancelReplacedStops(ctx: Ctx, account: AccountRow, legs: IntentRow[]): Promise<void> {
  const latest = latestStop(legs);
  if (latest?.status !== "ACCEPTED") return;
  for (const [index, leg] of legs.entries()) {
    if (leg.type === "STOP_LOSS" && leg !== latest && leg.status === "ACCEPTED") {
      legs[index] = await cancelLeg(ctx, account, leg);
    }
  }
}

/**
 * Protective orders still working that the position no longer wants (a stop
 * or target replaced by a process that died before cancelling it), once past
 * REPLACED_LEG_GRACE_MS; a stop only while a newer one works.
 */
async function cancelLeftoverLegs(ctx: Ctx, account: AccountRow, position: PositionRow, legs: IntentRow[]) {
  const kept = new Set(legsToKeep(position, legs));
  const latest = latestStop(legs);
  const replacedBefore = wallClockNow() - REPLACED_LEG_GRACE_MS;
  for (const [index, leg] of legs.entries()) {
    if (leg.status !== "ACCEPTED" || kept.has(leg) || (leg.sentWallAt ?? 0) > replacedBefore) continue;
    if (leg.type === "STOP_LOSS" && latest?.status !== "ACCEPTED") continue;
    legs[index] = await cancelLeg(ctx, account, leg);
  }
}

/**
 * A protective order still working though its position closed (at an
 * earlier run: this run's closes cancel their own): its cancel failed then
 * (the venue did not answer), or it had fired and could not be cancelled. A
 * reduce-only order left working would act on the account's next position of
 * the symbol.
 */
async function cancelLegsOfClosedPositions(ctx: Ctx, account: AccountRow, settled: IntentRow[]) {
  const working = settled.filter((leg) => leg.positionId !== null && leg.status === "ACCEPTED");
  if (!working.length) return;
  const closed = new Set(
    (await ctx.db.read.select({ positionId: positions.positionId }).from(positions).where(and(
      inArray(positions.positionId, [...new Set(working.map((leg) => leg.positionId!))]),
      eq(positions.status, "CLOSED"),
    ))).map((row) => row.positionId),
  );
  for (const leg of working) if (closed.has(leg.positionId!)) await cancelLeg(ctx, account, leg);
}

async function closePosition(ctx: Ctx, account: AccountRow, position: PositionRow, legs: IntentRow[]) {
  for (const leg of legs) if (leg.status === "ACCEPTED") await cancelLeg(ctx, account, leg);
  const now = ctx.clock.now();
  await withTransaction(ctx.db, async (tx) => {
    const [row] = await tx.update(positions).set({ status: "CLOSED", closedAt: now, updatedAt: now })
      .where(and(eq(positions.positionId, position.positionId), eq(positions.status, "OPEN")))
      .returning();
    if (row) await emitPositionEvent(tx, "position.closed", row, now);
  });
}

async function updatePosition(
  ctx: Ctx,
  position: PositionRow,
  changes: Partial<Pick<PositionRow, "quantity" | "stopLossPrice" | "breakEvenDone">>,
): Promise<PositionRow> {
  const now = ctx.clock.now();
  return await withTransaction(ctx.db, async (tx) => {
    const [row] = await tx.update(positions).set({ ...changes, updatedAt: now })
      .where(eq(positions.positionId, position.positionId)).returning();
    await emitPositionEvent(tx, "position.updated", row, now);
    return row;
  });
}

/**
 * Cancel a protective leg; answers it as recorded. One the venue no longer
 * has (it fired, or was cancelled elsewhere), or whose cancel the venue did
 * not answer, is left as it is, for the next reconciliation to settle by
 * query (and cancel again if it still works).
 */
async function cancelLeg(ctx: Ctx, account: AccountRow, leg: IntentRow): Promise<IntentRow> {
  try {
    await callWithAccount(
      ctx,
      account,
      (venue, credentials) => venue.cancelProtection(credentials, leg.symbol, leg.clientOrderId),
    );
  } catch (error) {
    if (error instanceof VenueError && error.kind === "INVALID_ORDER") return leg;
    if (error instanceof ApiError) return leg;
    throw error;
  }
  return await withTransaction(
    ctx.db,
    async (tx) =>
      (await transitionIntent(tx, leg, { status: "CANCELED" }, ctx.clock.now())) ?? await intentById(tx, leg.id),
  );
}
