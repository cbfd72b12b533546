/**
 * Reconciling every account whose credential the venue still accepts, one
 * bounded page at a time: each page is one indexed query, each account its
 * own short transactions, and the event loop is yielded between accounts.
 * One account's failure (a venue down, a refused key) is counted and the
 * walk goes on.
 *
 * An account where an entry is at work (its entry lease is held) is left to
 * that entry and read at the next run: reading it between the entry's fill
 * and its position would see a position the service does not know yet. One
 * whose holder went silent is taken over (fencing the holder out), settled
 * and released. A free account is reconciled without claiming it, so the
 * walk never turns an entry away.
 */
import { and, asc, gt, inArray } from "drizzle-orm";
import { providerAccounts } from "../../db/schema.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { VenueError } from "../../venues/types.ts";
import { withTransaction } from "../../db/client.ts";
import { entryLeaseState, holdingEntryLease, newLeaseOwner, takeOverSilentLease } from "./entry_leases.ts";
import { reconcileAccount } from "./reconcile_account.ts";

const PAGE_SIZE = 100;

export async function reconcileAccounts(ctx: Ctx) {
  const summary = {
    accounts: 0,
    failed: 0,
    intentsChecked: 0,
    intentsStillUncertain: 0,
    newFacts: 0,
    positionsClosed: 0,
    stopsPlacedAgain: 0,
    entriesInProgress: 0,
  };
  const owner = newLeaseOwner();
  let after = "";
  for (;;) {
    const page = await ctx.db.read.select().from(providerAccounts)
      .where(and(
        gt(providerAccounts.accountId, after),
        // A revoked account whose secret was kept (a position was open) is reconciled until it is flat.
        inArray(providerAccounts.connection, ["CONNECTED", "REVOKED"]),
      ))
      .orderBy(asc(providerAccounts.accountId))
      .limit(PAGE_SIZE);
    for (const account of page) {
      if (account.connection === "REVOKED" && !account.secretRetainedForReconciliation) continue;
      summary.accounts++;
      const key = { clientId: account.clientId, providerId: account.providerId };
      const state = await entryLeaseState(ctx.db.read, key);
      // A silent holder's lease another reconciliation took over first is held again: left to it.
      const lease = state === "SILENT"
        ? await withTransaction(ctx.db, (tx) => takeOverSilentLease(tx, key, owner))
        : null;
      if (state === "HELD" || (state === "SILENT" && !lease)) {
        summary.entriesInProgress++;
        continue;
      }
      try {
        const result = lease
          ? await holdingEntryLease(ctx, lease, () => reconcileAccount(ctx, account, lease))
          : await reconcileAccount(ctx, account);
        summary.intentsChecked += result.intentsChecked;
        summary.intentsStillUncertain += result.intentsStillUncertain;
        summary.newFacts += result.newFacts;
        summary.positionsClosed += result.closed;
        summary.stopsPlacedAgain += result.replaced;
      } catch (error) {
        if (!(error instanceof ApiError || error instanceof VenueError)) throw error;
        summary.failed++;
      }
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    if (page.length < PAGE_SIZE) return summary;
    after = page[page.length - 1].accountId;
  }
}
