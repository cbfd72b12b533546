/**
 * What the reconcile job leaves to the venues' pushes (account_pushes.ts
 * keeps them): an account whose pushes flow, recorded by the keeper that
 * holds the lease now, and whose last read is younger than the sweep interval
 * for what is pushed. A row of a keeper whose lease ran out counts as not live.
 */
import { and, eq } from "drizzle-orm";
import { accountPushes, accountStates } from "../../db/schema.ts";
import { HOUR_MS, MINUTE_MS } from "../clock.ts";
import type { Ctx } from "../context.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import { serviceLeaseHolder } from "../jobs/service_leases.ts";
import type { PushCoverage } from "../../venues/types.ts";

export const PUSH_KEEPER_LEASE = "account-pushes";

/**
 * How old an account's last read may get while the venue pushes its
 * changes. Everything pushed: an hourly sweep is the safety net. Only its
 * fills (VENUE_B beyond its per-IP users): cancels without a trade and funding
 * are not pushed, so it is read every quarter of an hour.
 */
export function sweepIntervalMs(coverage: PushCoverage): number {
  return coverage.orders && coverage.funding ? HOUR_MS : 15 * MINUTE_MS;
}

/** The reconcile job's view: which accounts to leave to their pushes on this pass. */
export async function pushedAccounts(ctx: Ctx) {
  const keeper = await serviceLeaseHolder(ctx.db, PUSH_KEEPER_LEASE);
  const rows = keeper
    ? await ctx.db.read.select({
      clientId: accountPushes.clientId,
      providerId: accountPushes.providerId,
      coversOrders: accountPushes.coversOrders,
      coversFunding: accountPushes.coversFunding,
      reconciledAt: accountStates.reconciledAt,
    }).from(accountPushes)
      .innerJoin(
        accountStates,
        and(
          eq(accountStates.clientId, accountPushes.clientId),
          eq(accountStates.providerId, accountPushes.providerId),
        ),
      )
      .where(and(eq(accountPushes.live, true), eq(accountPushes.owner, keeper)))
    : [];
  const now = ctx.clock.now();
  const fresh = new Set(
    rows.filter((row) =>
      now - row.reconciledAt < sweepIntervalMs({ orders: row.coversOrders, funding: row.coversFunding })
    ).map((row) => `${row.clientId}:${row.providerId}`),
  );
  return { leavesToPushes: (account: AccountRow) => fresh.has(`${account.clientId}:${account.providerId}`) };
}
