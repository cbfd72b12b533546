/**
 * Positions and their protection. An entry's fill opens a position
 * (`position.opened`); its stop loss and take profits are then placed at the
 * venue as reduce-only protective intents. All accepted: PROTECTED. Any not
 * confirmed: PROTECTION_DEGRADED (`protection.degraded`), for the
 * reconciliation and the protection monitor to place again. A credential the
 * venue refuses: PROVIDER_ACCESS_LOST. Protection is maintenance: no entry
 * gate ever stands in its way.
 */
import { eq, sql } from "drizzle-orm";
import { rowInsert } from "../../db/row_insert.ts";
import { preparedFor, type Tx, withTransaction } from "../../db/client.ts";
import { clients, intents, positions, type TakeProfit } from "../../db/schema.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import type { Ctx } from "../context.ts";
import { emitEvent } from "../events/emit_event.ts";
import { iso } from "../clock.ts";
import { newId } from "../ids.ts";
import { cmp, isZero, mul, roundToStep, sub } from "../../venues/decimal.ts";
import type { ProviderId } from "../../venues/types.ts";
import { findMarket } from "../venues/markets.ts";
import { assertHoldsEntryLease, type EntryLease, releaseEntryLease } from "./entry_leases.ts";
import { insertIntent, insertSubmittingIntents, type IntentDraft, type IntentRow } from "./intents.ts";
import { degradedReason } from "./protective_legs.ts";
import { sendIntent, sendProtections } from "./send_intent.ts";

export type PositionRow = typeof positions.$inferSelect;

export interface ProtectionPlan {
  stopLossPrice: string | null;
  takeProfits: TakeProfit[];
  autoBreakEven: boolean;
  signalId: string | null;
}

const positionInsert = rowInsert(positions);

/**
 * The position an entry's fill opened, with `position.opened` in the same
 * transaction; by the entry's holder only, while it still holds the lease.
 */
export async function openPositionFromFill(
  ctx: Ctx,
  entry: IntentRow,
  plan: ProtectionPlan,
  lease?: EntryLease,
): Promise<PositionRow> {
  const now = ctx.clock.now();
  return await withTransaction(ctx.db, async (tx) => {
    if (lease) await assertHoldsEntryLease(tx, lease);
    const position = await positionInsert.insert(tx, {
      positionId: newId("pos", now),
      clientId: entry.clientId,
      providerId: entry.providerId,
      symbol: entry.symbol,
      side: entry.side === "BUY" ? "LONG" : "SHORT",
      quantity: entry.executedQuantity,
      entryPrice: entry.executedPrice ?? entry.price!,
      leverage: entry.leverage,
      stopLossPrice: plan.stopLossPrice,
      takeProfits: plan.takeProfits,
      autoBreakEven: plan.autoBreakEven,
      protectionStatus: "UNKNOWN",
      entryIntentId: entry.id,
      signalId: plan.signalId,
      status: "OPEN",
      openedAt: now,
      updatedAt: now,
    });
    await emitPositionEvent(tx, "position.opened", position, now);
    return position;
  });
}

/**
 * Place the position's stop and targets; answers the position with its
 * protection status. The reconciliation calls this for an open position with
 * no legs recorded (position_maintenance.ts): the legs are recorded only while
 * the position has none, in the transaction that checks it, so of two callers
 * one places them and the other answers the position as it is.
 */
export async function protectPosition(ctx: Ctx, position: PositionRow, account: AccountRow): Promise<PositionRow> {
  const step = await stepOf(ctx, position);
  const { partnerId } = (await partnerOfClient(ctx.db.read).get({ clientId: position.clientId }))!;
  const legs = await withTransaction(
    ctx.db,
    async (tx) =>
      await legOfPosition(tx).get({ positionId: position.positionId })
        ? null
        : await recordLegs(ctx, position, partnerId, step),
  );
  return legs ? await sendRecordedLegs(ctx, position, account, partnerId, legs) : position;
}

/**
 * An entry's fill: its position opened and its legs recorded in one
 * transaction (`position.opened` with them), by the entry's holder only,
 * while it still holds the lease; or in the caller's transaction (the one
 * recording the fill, whose lease check covers it). The opener then sends
 * them (sendRecordedLegs); if it dies first, the reconciliation finds them
 * SUBMITTING and asks the venue. `step` is the market's (stepOf), read before
 * any transaction.
 */
export async function openProtectedPosition(
  ctx: Ctx,
  entry: IntentRow,
  plan: ProtectionPlan,
  step: string,
  lease?: EntryLease,
): Promise<OpenedPosition> {
  return await withTransaction(ctx.db, async () => {
    const position = await openPositionFromFill(ctx, entry, plan, lease);
    return { position, legs: await recordLegs(ctx, position, entry.partnerId, step) };
  });
}

export interface OpenedPosition {
  position: PositionRow;
  legs: IntentRow[];
}

/** The quantity step of the position's market: on a cold catalogue it asks the venue, which no write may wait for. */
export const stepOf = async (ctx: Ctx, { providerId, symbol }: { providerId: string; symbol: string }) =>
  (await findMarket(ctx, providerId as ProviderId, symbol))!.stepSize;

/** The position's stop and targets, recorded as SUBMITTING intents (in the caller's transaction, if any). */
async function recordLegs(ctx: Ctx, position: PositionRow, partnerId: string, step: string): Promise<IntentRow[]> {
  const legs: Leg[] = [];
  if (position.stopLossPrice) {
    legs.push({ kind: "STOP_LOSS", triggerPrice: position.stopLossPrice, quantity: position.quantity });
  }
  for (const target of takeProfitQuantities(position.quantity, position.takeProfits, step)) {
    legs.push({ kind: "TAKE_PROFIT", triggerPrice: target.price, quantity: target.quantity });
  }
  const drafts = legs.map((leg, index) => legDraft(partnerId, position, leg, index + 1));
  return await withTransaction(ctx.db, (tx) => insertSubmittingIntents(tx, drafts, ctx.clock.now()));
}

/**
 * Send the position's recorded legs (recorded together, sent together: the
 * position waits one venue round trip for its protection, not three) and
 * record its protection status. Usually no leg was crossed by the market, and
 * the status commits with the legs' outcomes; a crossed leg is executed first.
 */
export async function sendRecordedLegs(
  ctx: Ctx,
  position: PositionRow,
  account: AccountRow,
  partnerId: string,
  legs: IntentRow[],
  /** The opening entry's lease, freed with the protection status when that is the holder's last write. */
  lease?: EntryLease,
): Promise<PositionRow> {
  const { sent, recorded } = await sendProtections(ctx, legs, account, async (sent) => {
    if (sent.some(crossedByMarket)) return { sent, recorded: null };
    const recorded = await recordProtection(ctx, position, sent);
    if (lease) await withTransaction(ctx.db, (tx) => releaseEntryLease(tx, lease));
    return { sent, recorded };
  });
  if (recorded) return recorded;
  const settled: IntentRow[] = [];
  for (const leg of sent) settled.push(await executeIfCrossed(ctx, partnerId, position, account, leg));
  return await recordProtection(ctx, position, settled);
}

const legOfPosition = preparedFor((db) =>
  db.select({ id: intents.id }).from(intents).where(eq(intents.positionId, sql.placeholder("positionId"))).limit(1)
    .prepare()
);

const partnerOfClient = preparedFor((db) =>
  db.select({ partnerId: clients.partnerId }).from(clients).where(eq(clients.id, sql.placeholder("clientId"))).prepare()
);

export interface Leg {
  kind: "STOP_LOSS" | "TAKE_PROFIT";
  triggerPrice: string;
  quantity: string;
}

/**
 * One protective order of a position, as an intent (`<positionId>:<kind>:<seq>`),
 * sent reduce-only. The service's own placements (at open, break-even, placed
 * again) execute a leg the market has already crossed; a partner's
 * SET_STOP_LOSS / SET_TAKE_PROFIT passes `crossed: "refuse"` and is told.
 */
export async function placeLeg(
  ctx: Ctx,
  position: PositionRow,
  account: AccountRow,
  leg: Leg,
  seq: number,
  crossed: "execute" | "refuse" = "execute",
): Promise<IntentRow> {
  const { partnerId } = (await partnerOfClient(ctx.db.read).get({ clientId: position.clientId }))!;
  const intent = await withTransaction(
    ctx.db,
    (tx) => insertIntent(tx, legDraft(partnerId, position, leg, seq), "SUBMITTING", ctx.clock.now()),
  );
  const sent = await sendIntent(ctx, intent, account);
  return crossed === "execute" ? await executeIfCrossed(ctx, partnerId, position, account, sent) : sent;
}

/**
 * A stop or target whose trigger the market has already passed is refused by
 * the venue (it would fire at once), which would leave the position without
 * it. The leg then does now what its trigger would have done: a reduce-only
 * market order of its quantity, recorded as an intent of its own
 * (`<leg>:NOW`) of the same kind and trigger price, so the legs' bookkeeping
 * sees the stop or target filled rather than missing (and never places it again).
 */
async function executeIfCrossed(
  ctx: Ctx,
  partnerId: string,
  position: PositionRow,
  account: AccountRow,
  leg: IntentRow,
): Promise<IntentRow> {
  if (!crossedByMarket(leg)) return leg;
  const draft: IntentDraft = {
    ...legDraft(partnerId, position, {
      kind: leg.type as Leg["kind"],
      triggerPrice: leg.triggerPrice!,
      quantity: leg.quantity,
    }, 0),
    intentId: `${leg.intentId}:NOW`,
    orderType: "MARKET",
  };
  const intent = await withTransaction(ctx.db, (tx) => insertIntent(tx, draft, "SUBMITTING", ctx.clock.now()));
  ctx.logger.info("protective leg crossed by the market: executed now", {
    requestId: ctx.requestId,
    positionId: position.positionId,
    kind: leg.type,
  });
  return await sendIntent(ctx, intent, account);
}

/** The venue refused the leg because the market had already passed its trigger. */
const crossedByMarket = (leg: IntentRow) => leg.status === "REJECTED" && leg.errorCode === "TRIGGER_CROSSED";

function legDraft(partnerId: string, position: PositionRow, leg: Leg, seq: number): IntentDraft {
  return {
    partnerId,
    intentId: `${position.positionId}:${leg.kind}:${seq}`,
    clientId: position.clientId,
    providerId: position.providerId,
    type: leg.kind,
    opensPosition: false,
    symbol: position.symbol,
    side: position.side === "LONG" ? "SELL" : "BUY",
    orderType: leg.kind === "STOP_LOSS" ? "STOP_MARKET" : "TAKE_PROFIT_MARKET",
    quantity: leg.quantity,
    triggerPrice: leg.triggerPrice,
    reduceOnly: true,
    positionId: position.positionId,
  };
}

/**
 * Each target's quantity, rounded down to the step; the last one takes what
 * is left, so the targets together close exactly the position.
 */
export function takeProfitQuantities(quantity: string, targets: TakeProfit[], step: string) {
  let left = quantity;
  return targets.map((target, index) => {
    const share = index === targets.length - 1 ? left : roundToStep(mul(quantity, target.share), step, "DOWN");
    const taken = cmp(share, left) > 0 ? left : share;
    left = sub(left, taken);
    return { price: target.price, quantity: taken };
  }).filter((target) => !isZero(target.quantity));
}

/** The position's protection status from its protective legs' latest state (at open, after a reconciliation). */
export async function recordProtection(ctx: Ctx, position: PositionRow, legs: IntentRow[]): Promise<PositionRow> {
  const accessLost = legs.some((leg) => leg.errorCode === "PROVIDER_CREDENTIAL_REJECTED");
  // A leg executed at once (crossed by the market) did its work: the reconciliation takes the position from there.
  const unconfirmed = legs.filter((leg) => leg.status !== "ACCEPTED" && leg.status !== "FILLED");
  const status = accessLost ? "PROVIDER_ACCESS_LOST" : unconfirmed.length ? "PROTECTION_DEGRADED" : "PROTECTED";
  return await setProtection(ctx, position, status, unconfirmed.length ? degradedReason(position, unconfirmed) : null);
}

export type ProtectionStatus = "PROTECTED" | "PROTECTION_DEGRADED" | "PROVIDER_ACCESS_LOST";

const NOT_PROTECTED = new Set(["PROTECTION_DEGRADED", "PROVIDER_ACCESS_LOST"]);

/**
 * Write a position's protection status. Entering PROTECTION_DEGRADED or
 * PROVIDER_ACCESS_LOST emits `protection.degraded`, and coming back from
 * either to PROTECTED emits `position.updated`, in the same transaction,
 * which reads the status it replaces: concurrent writers report a transition
 * once. PROTECTED gives the position its placement attempts back. A position
 * closed meanwhile is left as it is.
 */
export async function setProtection(
  ctx: Ctx,
  position: PositionRow,
  status: ProtectionStatus,
  reason: string | null,
): Promise<PositionRow> {
  const now = ctx.clock.now();
  return await withTransaction(ctx.db, async (tx) => {
    const before = (await positionById(tx).get({ positionId: position.positionId }))!;
    if (before.status !== "OPEN") return before;
    const changes = {
      protectionStatus: status,
      protectionReason: reason,
      protectionAttempts: status === "PROTECTED" ? 0 : before.protectionAttempts,
      updatedAt: now,
    };
    await protectionWrite(tx).run({ ...changes, positionId: position.positionId });
    // Read in this transaction, so the row as written is `before` with the changes.
    const row: PositionRow = { ...before, ...changes };
    if (status !== before.protectionStatus && NOT_PROTECTED.has(status)) {
      await emitPositionEvent(tx, "protection.degraded", row, now);
    }
    if (status === "PROTECTED" && NOT_PROTECTED.has(before.protectionStatus)) {
      await emitPositionEvent(tx, "position.updated", row, now);
    }
    return row;
  });
}

const positionById = preparedFor((db) =>
  db.select().from(positions).where(eq(positions.positionId, sql.placeholder("positionId"))).prepare()
);

const protectionWrite = preparedFor((db) =>
  db.update(positions).set({
    protectionStatus: sql`${sql.placeholder("protectionStatus")}`,
    protectionReason: sql`${sql.placeholder("protectionReason")}`,
    protectionAttempts: sql`${sql.placeholder("protectionAttempts")}`,
    updatedAt: sql`${sql.placeholder("updatedAt")}`,
  }).where(eq(positions.positionId, sql.placeholder("positionId"))).prepare()
);

const eventPartiesOfClient = preparedFor((db) =>
  db.select({ partnerId: clients.partnerId, tenantId: clients.tenantId, externalUserId: clients.externalUserId })
    .from(clients).where(eq(clients.id, sql.placeholder("clientId"))).prepare()
);

export async function emitPositionEvent(
  tx: Tx,
  type: "position.opened" | "position.updated" | "position.closed" | "protection.degraded",
  position: PositionRow,
  now: number,
): Promise<void> {
  const client = (await eventPartiesOfClient(tx).get({ clientId: position.clientId }))!;
  await emitEvent(tx, {
    type,
    ...client,
    occurredAt: now,
    data: { ...positionView(position), status: position.status },
  });
}

/** The Position resource (spec, Position and protection), also the data of the position events. */
export function positionView(position: PositionRow) {
  return {
    positionId: position.positionId,
    providerId: position.providerId,
    symbol: position.symbol,
    side: position.side as "LONG" | "SHORT",
    quantity: Number(position.quantity),
    entryPrice: Number(position.entryPrice),
    leverage: position.leverage,
    protection: {
      status: position.protectionStatus,
      stopLossPrice: position.stopLossPrice === null ? null : Number(position.stopLossPrice),
      // The first target: the next one to fill.
      takeProfitPrice: position.takeProfits.length ? Number(position.takeProfits[0].price) : null,
      reason: position.protectionReason,
    },
    openedAt: iso(position.openedAt),
  };
}
