/**
 * Keeping each open position protected, from what the reconciliation read at
 * the venue (its protective intents already settled by query):
 * - the venue holds no such position any more: its leftover protective
 *   orders are cancelled (a stale reduce-only target would act on the next
 *   position of the symbol) and it is CLOSED (`position.closed`);
 * - its size changed (a target filled): `position.updated`;
 * - a target filled and `autoBreakEven`: the stop moves to the entry price;
 * - the stop is gone while the position is open: it is placed again, within
 *   the position's placement attempts (protective_legs.ts);
 * and the protection status is recorded from the legs that should be working.
 * Maintenance: no gate applies, whatever the client's or contract's state.
 */
import { and, asc, eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { intents, positions } from "../../db/schema.ts";
import { callWithAccount } from "../accounts/account_call.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { cmp } from "../../venues/decimal.ts";
import { type Position, VenueError } from "../../venues/types.ts";
import { type IntentRow, transitionIntent } from "./intents.ts";
import { emitPositionEvent, placeLeg, type PositionRow, recordProtection } from "./protection.ts";
import { claimAttempt, latestStop, legsToKeep, stopAt, WORKING } from "./protective_legs.ts";

export interface PositionMaintenance {
  closed: number;
  updated: number;
  replaced: number;
}

export async function maintainPositions(
  ctx: Ctx,
  account: AccountRow,
  venuePositions: Position[],
): Promise<PositionMaintenance> {
  const summary: PositionMaintenance = { closed: 0, updated: 0, replaced: 0 };
  const open = await ctx.db.read.select().from(positions)
    .where(and(
      eq(positions.clientId, account.clientId),
      eq(positions.providerId, account.providerId),
      eq(positions.status, "OPEN"),
    ));
  for (const position of open) {
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
    const stop = latestStop(legs);
    const stopWorking = stop !== undefined && WORKING.has(stop.status);
    const targetFilled = legs.some((leg) => leg.type === "TAKE_PROFIT" && leg.status === "FILLED");
    if (current.autoBreakEven && !current.breakEvenDone && targetFilled && current.stopLossPrice) {
      if (stopWorking) await cancelLeg(ctx, account, stop);
      legs.push(await placeLeg(ctx, current, account, stopAt(current.entryPrice, atVenue.quantity), legs.length + 1));
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
    await recordProtection(ctx, current, legsToKeep(current, legs));
  }
  return summary;
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
 * Cancel a protective leg. One the venue no longer has (it fired, or was
 * cancelled elsewhere) is left for the next reconciliation to settle by query.
 */
async function cancelLeg(ctx: Ctx, account: AccountRow, leg: IntentRow): Promise<void> {
  try {
    await callWithAccount(
      ctx,
      account,
      (venue, credentials) => venue.cancelProtection(credentials, leg.symbol, leg.clientOrderId),
    );
  } catch (error) {
    if (error instanceof VenueError && error.kind === "INVALID_ORDER") return;
    if (error instanceof ApiError) return;
    throw error;
  }
  await withTransaction(ctx.db, (tx) => transitionIntent(tx, leg, { status: "CANCELED" }, ctx.clock.now()));
}
