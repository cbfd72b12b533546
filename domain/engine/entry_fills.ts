/**
 * What follows an entry's fill, wherever the fill is first seen (the send's
 * answer, or the reconciliation of a resting entry): the position opens once
 * per entry and is protected with the signal's (or the manual order's) stop
 * and targets. A unique index on the entry intent makes "once" hold across
 * instances; the send's own answer opens it in the transaction that records
 * the fill, which only the sender's compare-and-set can write.
 */
import { eq, sql } from "drizzle-orm";
import { isUniqueViolation, preparedFor } from "../../db/client.ts";
import { positions, signals } from "../../db/schema.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import type { Ctx } from "../context.ts";
import { isZero } from "../../venues/decimal.ts";
import { type EntryLease, EntryLeaseLost, releaseEntryLease } from "../execution/entry_leases.ts";
import type { IntentRow } from "../execution/intents.ts";
import {
  type OpenedPosition,
  openProtectedPosition,
  type ProtectionPlan,
  sendRecordedLegs,
  stepOf,
} from "../execution/protection.ts";
import { sendIntent } from "../execution/send_intent.ts";
import type { PlaceOrderRequest } from "../../venues/types.ts";
import { setupOfClient } from "../setups/setups.ts";
import { valuesOf } from "../setups/setup_values.ts";

const positionOfEntry = preparedFor((db) =>
  db.select({ positionId: positions.positionId }).from(positions)
    .where(eq(positions.entryIntentId, sql.placeholder("entryIntentId"))).prepare()
);

const signalById = preparedFor((db) =>
  db.select().from(signals).where(eq(signals.signalId, sql.placeholder("signalId"))).prepare()
);

/** A filled entry, or one cancelled after a partial fill, holds a position to protect. */
function holdsPosition(intent: IntentRow): boolean {
  if (!intent.opensPosition || isZero(intent.executedQuantity)) return false;
  return intent.status === "FILLED" || intent.status === "CANCELED" || intent.status === "EXPIRED";
}

/**
 * Send an entry under its lease and follow its answer. A fill opens its
 * position and records its legs in the transaction that records the answer
 * (one write, not two), then the legs go; an entry with nothing more to do
 * under the lease (resting, refused, uncertain) frees its account in that
 * same transaction. Answers the entry as recorded.
 */
export async function sendEntry(
  ctx: Ctx,
  intent: IntentRow,
  account: AccountRow,
  { builder, lease, signal }: {
    builder?: PlaceOrderRequest["builder"];
    lease: EntryLease;
    /** The entry's signal when the caller holds it already (a fan-out): a signal never changes once recorded. */
    signal?: typeof signals.$inferSelect;
  },
): Promise<IntentRow> {
  // What would protect a fill is read while the order travels: the send never waits for it (nor fails with it), and
  // the answer's transaction uses it only if it is already in hand, never waiting inside the write. Otherwise, as
  // when a reconciliation settles the entry first, the fill is followed after the answer is recorded.
  let protection: Protection | undefined;
  protectionOf(ctx, intent, signal).then((read) => protection = read, () => {});
  let opened: OpenedPosition | undefined;
  const sent = await sendIntent(ctx, intent, account, {
    builder,
    lease,
    withOutcome: async (tx, recorded) => {
      if (!holdsPosition(recorded)) await releaseEntryLease(tx, lease);
      else if (protection) opened = await openProtectedPosition(ctx, recorded, protection.plan, protection.step);
    },
  });
  if (opened) await sendRecordedLegs(ctx, opened.position, account, intent.partnerId, opened.legs, lease);
  else await protectFilledEntry(ctx, sent, account, lease, signal);
  return sent;
}

/**
 * Open and protect the position of a filled entry, once. Under the entry's
 * lease, only while it is still the caller's: a holder taken over leaves it
 * to the new one.
 */
export async function protectFilledEntry(
  ctx: Ctx,
  intent: IntentRow,
  account: AccountRow,
  lease?: EntryLease,
  /** The entry's signal when the caller holds it already (a fan-out): a signal never changes once recorded. */
  knownSignal?: typeof signals.$inferSelect,
): Promise<void> {
  if (!holdsPosition(intent)) return;
  if (await positionOfEntry(ctx.db.read).get({ entryIntentId: intent.id })) return;
  // Read now, not when the entry went: a paced fan-out fills minutes after, and the setup may have changed since.
  const { plan, step } = await protectionOf(ctx, intent, knownSignal);
  let opened;
  try {
    opened = await openProtectedPosition(ctx, intent, plan, step, lease);
  } catch (error) {
    // Another instance opened it first (one position per entry intent): that one protects it.
    if (isUniqueViolation(error, "positions.entry_intent_id") || error instanceof EntryLeaseLost) return;
    throw error;
  }
  await sendRecordedLegs(ctx, opened.position, account, intent.partnerId, opened.legs);
}

interface Protection {
  plan: ProtectionPlan;
  /** The market's quantity step, which the targets' quantities follow. */
  step: string;
}

/** What would protect the entry's position, and its market's step, read together. */
async function protectionOf(
  ctx: Ctx,
  intent: IntentRow,
  knownSignal?: typeof signals.$inferSelect,
): Promise<Protection> {
  const [plan, step] = await Promise.all([protectionPlanOf(ctx, intent, knownSignal), stepOf(ctx, intent)]);
  return { plan, step };
}

/**
 * What protects an entry's position: a signal's entry, the setup's automatic
 * stop and targets (the setup as it is now); a manual entry, what the
 * partner asked for.
 */
async function protectionPlanOf(
  ctx: Ctx,
  intent: IntentRow,
  knownSignal?: typeof signals.$inferSelect,
): Promise<ProtectionPlan> {
  const setup = valuesOf((await setupOfClient(ctx.db.read, intent.clientId, intent.providerId)) ?? null);
  const signal = intent.signalId
    ? knownSignal?.signalId === intent.signalId
      ? knownSignal
      : await signalById(ctx.db.read).get({ signalId: intent.signalId })
    : undefined;
  const plan = signal
    ? {
      stopLossPrice: setup.autoStopLoss ? signal.stopLossPrice : null,
      takeProfits: setup.autoTakeProfit ? signal.takeProfits : [],
    }
    : intent.protectionPlan ?? { stopLossPrice: null, takeProfits: [] };
  return { ...plan, autoBreakEven: setup.autoBreakEven, signalId: intent.signalId };
}
