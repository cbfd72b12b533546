/**
 * Verifying one account's protection at its venue, between reconciliations.
 * One read lists the account's open protective orders; each open position's
 * legs to keep (protective_legs.ts) must be among them, matched by client
 * order id, or by the venue's order id where a listing carries only an id
 * derived from ours (VENUE_B's cloid). A leg missing from the list is first
 * settled by querying it (reconcile_intent.ts): a target may just have
 * filled, and a stop that may still be working is never placed twice. A leg
 * the venue no longer has makes the position PROTECTION_DEGRADED and is placed
 * again within the position's attempts, if the venue still holds the position
 * (read only then); the next run verifies it. A refused credential makes every
 * position PROVIDER_ACCESS_LOST. Nothing is written while all is as recorded.
 */
import { and, asc, eq, inArray } from "drizzle-orm";
import { intents, positions } from "../../db/schema.ts";
import { callWithAccount } from "../accounts/account_call.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { min } from "../../venues/decimal.ts";
import type { Order, Position } from "../../venues/types.ts";
import type { IntentRow } from "./intents.ts";
import { type Leg, placeLeg, type PositionRow, type ProtectionStatus, setProtection } from "./protection.ts";
import { claimAttempt, degradedReason, legsToKeep, PLACEMENT_ATTEMPTS, stopAt, WORKING } from "./protective_legs.ts";
import { reconcileIntent } from "./reconcile_intent.ts";

const ACCESS_LOST_REASON =
  "O provedor recusou a credencial armazenada: a proteção não pode ser verificada nem mantida até a conta ser reconectada.";

/** Positions of the account by what the run found, and the legs it placed again. */
export type AccountProtection = {
  positions: number;
  protected: number;
  degraded: number;
  /** Degraded with no placement attempt left: reported in the log, left as they are. */
  exhausted: number;
  accessLost: number;
  /** Left for a later run: still being protected at open, a leg's fate not yet known, or closing at the venue. */
  pending: number;
  legsPlacedAgain: number;
};

type Outcome = "protected" | "degraded" | "exhausted" | "accessLost" | "pending";

/** A tally with nothing counted yet, for `positions` open positions. */
export function noProtectionVerified(positions: number): AccountProtection {
  return { positions, protected: 0, degraded: 0, exhausted: 0, accessLost: 0, pending: 0, legsPlacedAgain: 0 };
}

export async function verifyAccountProtection(ctx: Ctx, account: AccountRow): Promise<AccountProtection> {
  const open = await ctx.db.read.select().from(positions).where(and(
    eq(positions.clientId, account.clientId),
    eq(positions.providerId, account.providerId),
    eq(positions.status, "OPEN"),
  ));
  const tally = noProtectionVerified(open.length);
  if (!open.length) return tally;
  const legs = await legsOf(ctx, open.map((position) => position.positionId));
  let listed: Order[];
  try {
    // One symbol, the usual case (one position per account), is the venue's cheapest listing.
    const symbol = open.every((position) => position.symbol === open[0].symbol) ? open[0].symbol : undefined;
    listed = await callWithAccount(ctx, account, (venue, credentials) => venue.listProtections(credentials, symbol));
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== "PROVIDER_CREDENTIAL_REJECTED") throw error;
    for (const position of open) await record(ctx, position, "PROVIDER_ACCESS_LOST", ACCESS_LOST_REASON);
    return { ...tally, accessLost: open.length };
  }
  const working = new Set(listed.flatMap((order) => [order.orderId, order.clientOrderId]));
  let held: Promise<Position[]> | undefined;
  const heldAtVenue = () =>
    held ??= callWithAccount(ctx, account, (venue, credentials) => venue.getAccount(credentials))
      .then((snapshot) => snapshot.positions);
  for (const position of open) {
    const own = legs.filter((leg) => leg.positionId === position.positionId);
    const { outcome, placed } = await verifyPosition(ctx, account, position, own, working, heldAtVenue);
    tally[outcome]++;
    tally.legsPlacedAgain += placed;
  }
  return tally;
}

async function verifyPosition(
  ctx: Ctx,
  account: AccountRow,
  position: PositionRow,
  legs: IntentRow[],
  working: Set<string | null>,
  heldAtVenue: () => Promise<Position[]>,
): Promise<{ outcome: Outcome; placed: number }> {
  const missing = await missingLegs(ctx, account, position, legs, working);
  if (missing === "protected") await record(ctx, position, "PROTECTED", null);
  if (!Array.isArray(missing)) return { outcome: missing, placed: 0 };
  const atVenue = (await heldAtVenue()).find((p) => p.symbol === position.symbol && p.side === position.side);
  // Gone at the venue: the reconciliation closes it and cancels what is left (a leg placed now would outlive it).
  if (!atVenue) return { outcome: "pending", placed: 0 };
  return await placeAgain(ctx, account, position, legs, missing, atVenue);
}

function legsOf(ctx: Ctx, positionIds: string[]) {
  return ctx.db.read.select().from(intents).where(inArray(intents.positionId, positionIds)).orderBy(asc(intents.id));
}

/** The position's legs the venue no longer has, or what to record when none is missing. */
async function missingLegs(
  ctx: Ctx,
  account: AccountRow,
  position: PositionRow,
  legs: IntentRow[],
  working: Set<string | null>,
): Promise<IntentRow[] | "protected" | "pending"> {
  // Its opener is still placing its legs (or died doing so, and the reconciliation protects it).
  if (position.protectionStatus === "UNKNOWN") return "pending";
  const missing: IntentRow[] = [];
  let unsettled = false;
  for (const leg of legsToKeep(position, legs)) {
    if (working.has(leg.clientOrderId) || (leg.orderId !== null && working.has(leg.orderId))) continue;
    const { intent } = await reconcileIntent(ctx, leg, account);
    // A stop that filled closed the position, which the reconciliation closes; a target that filled is done.
    if (intent.status === "FILLED") {
      if (intent.type === "STOP_LOSS") return "pending";
    } else if (intent.status === "SUBMITTING" || intent.status === "UNCERTAIN") unsettled = true;
    else if (!WORKING.has(intent.status)) missing.push(intent);
  }
  if (missing.length) return missing;
  return unsettled ? "pending" : "protected";
}

/**
 * PROTECTION_DEGRADED, and the missing legs placed again on a claimed attempt
 * (a stop covering the position as the venue now holds it).
 */
async function placeAgain(
  ctx: Ctx,
  account: AccountRow,
  position: PositionRow,
  legs: IntentRow[],
  missing: IntentRow[],
  atVenue: Position,
): Promise<{ outcome: Outcome; placed: number }> {
  // The reconciliation may be keeping this position right now: act only while it is as it was read.
  const [current] = await ctx.db.read.select().from(positions).where(eq(positions.positionId, position.positionId));
  if (current.updatedAt !== position.updatedAt || (await legsOf(ctx, [position.positionId])).length !== legs.length) {
    return { outcome: "pending", placed: 0 };
  }
  if (position.protectionAttempts >= PLACEMENT_ATTEMPTS) {
    await record(ctx, position, "PROTECTION_DEGRADED", degradedReason(position, missing));
    ctx.logger.warn("protection not restored: no placement attempt left", {
      requestId: ctx.requestId,
      positionId: position.positionId,
    });
    return { outcome: "exhausted", placed: 0 };
  }
  const claimed = await claimAttempt(ctx, position);
  if (!claimed) return { outcome: "pending", placed: 0 };
  await record(ctx, claimed, "PROTECTION_DEGRADED", degradedReason(claimed, missing));
  const placed: IntentRow[] = [];
  for (const leg of missing) {
    const again: Leg = leg.type === "STOP_LOSS"
      ? stopAt(leg.triggerPrice!, atVenue.quantity)
      : { kind: "TAKE_PROFIT", triggerPrice: leg.triggerPrice!, quantity: min(leg.quantity, atVenue.quantity) };
    placed.push(await placeLeg(ctx, claimed, account, again, legs.length + placed.length + 1));
  }
  // Venues whose reads need no signature (VENUE_B) tell of a refused credential only here.
  if (placed.some((leg) => leg.errorCode === "PROVIDER_CREDENTIAL_REJECTED")) {
    await setProtection(ctx, claimed, "PROVIDER_ACCESS_LOST", ACCESS_LOST_REASON);
    return { outcome: "accessLost", placed: placed.length };
  }
  return { outcome: "degraded", placed: placed.length };
}

/** Write the status only when it differs from what the position holds: a run that finds all in order writes nothing. */
async function record(ctx: Ctx, position: PositionRow, status: ProtectionStatus, reason: string | null) {
  const unchanged = position.protectionStatus === status && position.protectionReason === reason &&
    (status !== "PROTECTED" || position.protectionAttempts === 0);
  if (!unchanged) await setProtection(ctx, position, status, reason);
}
