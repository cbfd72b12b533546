/**
 * What follows an entry's fill, wherever the fill is first seen (the send's
 * answer, or the reconciliation of a resting entry): the position opens once
 * per entry and is protected with the signal's (or the manual order's) stop
 * and targets. A unique
 * index on the entry intent makes "once" hold across instances.
 */
import { eq, sql } from "drizzle-orm";
import { isUniqueViolation, preparedFor } from "../../db/client.ts";
import { positions, signals } from "../../db/schema.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import type { Ctx } from "../context.ts";
import { isZero } from "../../venues/decimal.ts";
import { type EntryLease, EntryLeaseLost } from "../execution/entry_leases.ts";
import type { IntentRow } from "../execution/intents.ts";
import { openProtectedPosition, sendRecordedLegs } from "../execution/protection.ts";
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
  const setup = valuesOf((await setupOfClient(ctx.db.read, intent.clientId, intent.providerId)) ?? null);
  // A signal's entry follows the setup's automatic stop and targets; a manual entry, what the partner asked for.
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
  let opened;
  try {
    opened = await openProtectedPosition(ctx, intent, {
      ...plan,
      autoBreakEven: setup.autoBreakEven,
      signalId: intent.signalId,
    }, lease);
  } catch (error) {
    // Another instance opened it first (one position per entry intent): that one protects it.
    if (isUniqueViolation(error, "positions.entry_intent_id") || error instanceof EntryLeaseLost) return;
    throw error;
  }
  await sendRecordedLegs(ctx, opened.position, account, intent.partnerId, opened.legs);
}
