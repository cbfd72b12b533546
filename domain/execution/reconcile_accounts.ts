/**
 * Reconciling every account whose credential the venue still accepts, one
 * bounded page at a time: each page is one indexed query, each account its
 * own short transactions, and the event loop is yielded between accounts.
 * One account's failure (a venue down, a refused key) is counted and the
 * walk goes on.
 */
import { and, asc, gt, inArray } from "drizzle-orm";
import { providerAccounts } from "../../db/schema.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { VenueError } from "../../venues/types.ts";
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
  };
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
      try {
        const result = await reconcileAccount(ctx, account);
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
