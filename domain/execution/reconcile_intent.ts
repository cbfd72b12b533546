/**
 * Settling an intent by asking the venue what became of its client order id,
 * never by sending it again. An order the venue does not know is NOT_PLACED
 * only once its send's deadline has passed (send_intent.ts: the venue refuses
 * the request after it, even if it arrives), with a margin for clock skew and
 * transit; before that it stays UNCERTAIN and is asked again later.
 */
import { wallClockNow } from "../clock.ts";
import { withTransaction } from "../../db/client.ts";
import { callWithAccount } from "../accounts/account_call.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import type { Ctx } from "../context.ts";
import { intentById, type IntentRow, OPEN_STATUSES, orderChanges, transitionIntent } from "./intents.ts";
import { sendDeadline } from "./send_intent.ts";

/** How far our wall clock and the venue's may disagree, plus a request's time on the way. */
const SKEW_AND_TRANSIT_MS = 1000;

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
  const deadline = sendDeadline(ctx, intent);
  const windowPassed = deadline === undefined || wallClockNow() > deadline + SKEW_AND_TRANSIT_MS;
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
