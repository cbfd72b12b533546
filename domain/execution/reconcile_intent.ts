/**
 * Settling an intent by asking the venue what became of its client order id,
 * never by sending it again. An order the venue does not know is NOT_PLACED
 * only once the venue's action window has passed since the send (after it,
 * the venue refuses the request even if it arrives); before that it stays
 * UNCERTAIN and is asked again later.
 */
import { wallClockNow } from "../clock.ts";
import { withTransaction } from "../../db/client.ts";
import { callWithAccount } from "../accounts/account_call.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import type { Ctx } from "../context.ts";
import type { ProviderId } from "../../venues/types.ts";
import { intentById, type IntentRow, OPEN_STATUSES, orderChanges, transitionIntent } from "./intents.ts";

export interface IntentReconciliation {
  intent: IntentRow;
  /** The venue's answer settled the intent (or it needed nothing). */
  resolved: boolean;
}

export async function reconcileIntent(ctx: Ctx, intent: IntentRow, account: AccountRow): Promise<IntentReconciliation> {
  if (!OPEN_STATUSES.has(intent.status)) return { intent, resolved: true };
  const order = await callWithAccount(
    ctx,
    account,
    (venue, credentials) => venue.getOrder(credentials, intent.symbol, intent.clientOrderId),
  );
  const now = ctx.clock.now();
  const windowMs = ctx.venues[intent.providerId as ProviderId].actionWindowMs;
  const windowPassed = intent.sentWallAt === null || wallClockNow() > intent.sentWallAt + windowMs;
  const changes = order ? { ...orderChanges(order), reconciledAt: now } : windowPassed
    ? {
      status: "NOT_PLACED",
      errorCode: "NOT_AT_VENUE",
      errorMessage: "O provedor nunca recebeu esta ordem.",
      reconciledAt: now,
    }
    : { status: "UNCERTAIN", reconciledAt: now };
  const row = await withTransaction(
    ctx.db,
    async (tx) => (await transitionIntent(tx, intent, changes, now)) ?? (await intentById(tx, intent.id)),
  );
  return { intent: row, resolved: changes.status !== "UNCERTAIN" };
}
