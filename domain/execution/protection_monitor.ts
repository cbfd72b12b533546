/**
 * The protection monitor: between reconciliations, every account holding an
 * open position has its protection verified at the venue
 * (verify_account_protection.ts). Accounts are walked in bounded pages, each
 * one indexed query that starts from the open positions, so accounts without
 * one cost nothing; the event loop is yielded between accounts. Accounts whose
 * credential was refused are walked too (a read the venue accepts again
 * restores them), and so are revoked ones whose secret is kept while a position
 * is open. One account's failure (a venue down) is counted and the walk goes on.
 *
 * Left out: accounts whose every order change the venue pushes now (a leg
 * that stops working is pushed and read at once: push_states.ts), and, for
 * the rest of the run, while a keeper keeps pushes, a venue whose minute's
 * request budget is down to the share left to what pushes name.
 */
import { yieldToEventLoop } from "../concurrency.ts";
import { and, eq, getTableColumns, ne, or, sql } from "drizzle-orm";
import { positions, providerAccounts } from "../../db/schema.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { type ProviderId, VenueError } from "../../venues/types.ts";
import { accountsWithOrdersPushed, liveKeeper } from "./push_states.ts";
import { type AccountProtection, noProtectionVerified, verifyAccountProtection } from "./verify_account_protection.ts";

const PAGE_SIZE = 100;

export async function monitorProtection(ctx: Ctx) {
  const summary: AccountProtection & {
    accounts: number;
    failed: number;
    leftToPushes: number;
    leftForNextRun: number;
  } = {
    accounts: 0,
    failed: 0,
    leftToPushes: 0,
    leftForNextRun: 0,
    ...noProtectionVerified(0),
  };
  const pushed = await accountsWithOrdersPushed(ctx);
  const keeper = await liveKeeper(ctx);
  const spent = new Set<string>();
  let after = { clientId: 0, providerId: "" };
  for (;;) {
    const page = await ctx.db.read.select(getTableColumns(providerAccounts)).from(positions)
      .innerJoin(
        providerAccounts,
        and(eq(providerAccounts.clientId, positions.clientId), eq(providerAccounts.providerId, positions.providerId)),
      )
      .where(and(
        eq(positions.status, "OPEN"),
        sql`(${positions.clientId}, ${positions.providerId}) > (${after.clientId}, ${after.providerId})`,
        or(ne(providerAccounts.connection, "REVOKED"), eq(providerAccounts.secretRetainedForReconciliation, true)),
      ))
      .groupBy(positions.clientId, positions.providerId)
      .orderBy(positions.clientId, positions.providerId)
      .limit(PAGE_SIZE);
    for (const account of page) {
      if (pushed.has(`${account.clientId}:${account.providerId}`)) {
        summary.leftToPushes++;
        continue;
      }
      if (
        spent.has(account.providerId) ||
        (keeper && !(await ctx.egressBudgets[account.providerId as ProviderId].backgroundMayGoOn()))
      ) {
        spent.add(account.providerId);
        summary.leftForNextRun++;
        continue;
      }
      summary.accounts++;
      try {
        const verified = await verifyAccountProtection(ctx, account);
        for (const key of Object.keys(verified) as (keyof AccountProtection)[]) summary[key] += verified[key];
      } catch (error) {
        if (!(error instanceof ApiError || error instanceof VenueError)) throw error;
        summary.failed++;
      }
      await yieldToEventLoop();
    }
    if (page.length < PAGE_SIZE) return summary;
    after = { clientId: page[page.length - 1].clientId, providerId: page[page.length - 1].providerId };
  }
}
