/**
 * The entry timeout (setup `entryTimeoutMinutes`): a LIMIT entry still
 * resting after it is cancelled at the venue; a partial fill keeps its
 * position (and is protected like any fill). Measured on the service clock,
 * so the QA test clock moves it.
 */
import { withTransaction } from "../../db/client.ts";
import { callWithAccount } from "../accounts/account_call.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import type { Ctx } from "../context.ts";
import { intentById, type IntentRow, orderChanges, transitionIntent } from "../execution/intents.ts";

export function entryTimedOut(intent: IntentRow, entryTimeoutMinutes: number | null, now: number): boolean {
  if (!intent.opensPosition || entryTimeoutMinutes === null) return false;
  if (intent.status !== "ACCEPTED" && intent.status !== "PARTIALLY_FILLED") return false;
  return now - intent.createdAt >= entryTimeoutMinutes * 60_000;
}

export async function cancelTimedOutEntry(ctx: Ctx, intent: IntentRow, account: AccountRow): Promise<IntentRow> {
  const order = await callWithAccount(
    ctx,
    account,
    (venue, credentials) => venue.cancelOrder(credentials, intent.symbol, intent.clientOrderId),
  );
  const now = ctx.clock.now();
  const changes = orderChanges(order);
  // An entry that filled just before its cancel is FILLED, not timed out.
  if (changes.status === "CANCELED" || changes.status === "EXPIRED") {
    Object.assign(changes, { errorCode: "ENTRY_TIMEOUT", errorMessage: "Entrada cancelada: tempo limite." });
  }
  return await withTransaction(
    ctx.db,
    async (tx) => (await transitionIntent(tx, intent, changes, now)) ?? (await intentById(tx, intent.id)),
  );
}
