/**
 * Credentials the venue ends by itself: a VENUE_B agent approval lasts until
 * its `valid_until`, then the venue prunes the agent and refuses every action
 * it signs. The job `access-expiry` watches them, so the partner hears of the
 * end before it comes and the account is marked lost only once it did:
 * - an account whose end is within ACCESS_EXPIRY_NOTICE_MS is announced once
 *   (`provider.access_expiring`): the partner sends the client a connect link
 *   (purpose CONNECT), which approves a new agent with a new validity;
 * - an account whose end has passed is asked about at the venue: no longer
 *   held, it becomes ACCESS_LOST (`provider.access_lost`); still held (the
 *   venue's clock, a validity the venue moved), it stays CONNECTED with what
 *   the venue now says;
 * - an account connected before the service asked for the validity has it
 *   read once.
 * The announcement is database work, a page at a time. Venue reads go through
 * the shared request budget, so each run makes at most VENUE_READS_PER_RUN,
 * the lapsed accounts first; one failing read never stops the others.
 */
import { and, asc, eq, gt, isNull, lte, sql } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { clients, providerAccounts } from "../../db/schema.ts";
import { iso } from "../clock.ts";
import { yieldToEventLoop } from "../concurrency.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { emitEvent } from "../events/emit_event.ts";
import { errorFields } from "../logger.ts";
import { type CredentialCheck, VenueError } from "../../venues/types.ts";
import { callWithAccount } from "./account_call.ts";
import type { AccountRow } from "./load_account.ts";

/** How long before the end the partner is told: time to reach the client and have them sign again. */
export const ACCESS_EXPIRY_NOTICE_MS = 14 * 86_400_000;
/**
 * Venue reads a run may make (VENUE_B's extraAgents weighs 20 of the IP's
 * 1,200 a minute; the job runs every five minutes, so this is 40 a minute).
 */
const VENUE_READS_PER_RUN = 10;
const PAGE = 500;

export type AccessExpirySummary = {
  announced: number;
  lapsed: number;
  stillHeld: number;
  validityRead: number;
  failed: number;
};

export async function watchAccessExpiry(ctx: Ctx): Promise<AccessExpirySummary> {
  const summary: AccessExpirySummary = { announced: 0, lapsed: 0, stillHeld: 0, validityRead: 0, failed: 0 };
  summary.announced = await announceExpiring(ctx);
  const now = ctx.clock.now();
  const lapsed = await connectedAccounts(ctx, lte(providerAccounts.accessExpiresAt, now), VENUE_READS_PER_RUN);
  const unread = await connectedAccounts(
    ctx,
    and(eq(providerAccounts.scheme, "AGENT_WALLET"), isNull(providerAccounts.accessCheckedAt)),
    VENUE_READS_PER_RUN - lapsed.length,
  );
  for (const account of [...lapsed, ...unread]) {
    const outcome = await readValidity(ctx, account);
    if (outcome === "LAPSED") summary.lapsed++;
    else if (outcome === "FAILED") summary.failed++;
    else if (account.accessCheckedAt === null) summary.validityRead++;
    else summary.stillHeld++;
  }
  return summary;
}

/** The stored validity a credential check leaves on the account; a new end is announced anew. */
export function accessValidity(check: CredentialCheck, now: number, stored?: AccountRow) {
  const unchanged = stored !== undefined && stored.accessExpiresAt === check.accessExpiresAt;
  return {
    accessExpiresAt: check.accessExpiresAt,
    accessCheckedAt: now,
    accessExpiryWarnedAt: unchanged ? stored.accessExpiryWarnedAt : null,
  };
}

/** `provider.access_expiring` once per end, for every connected account whose end is near, a page at a time. */
async function announceExpiring(ctx: Ctx): Promise<number> {
  let announced = 0;
  for (;;) {
    const now = ctx.clock.now();
    const page = await ctx.db.read.select({
      accountId: providerAccounts.accountId,
      providerId: providerAccounts.providerId,
      accessExpiresAt: providerAccounts.accessExpiresAt,
      partnerId: clients.partnerId,
      tenantId: clients.tenantId,
      externalUserId: clients.externalUserId,
    }).from(providerAccounts)
      .innerJoin(clients, eq(clients.id, providerAccounts.clientId))
      .where(and(
        eq(providerAccounts.connection, "CONNECTED"),
        gt(providerAccounts.accessExpiresAt, now),
        lte(providerAccounts.accessExpiresAt, now + ACCESS_EXPIRY_NOTICE_MS),
        isNull(providerAccounts.accessExpiryWarnedAt),
      ))
      .limit(PAGE);
    if (!page.length) return announced;
    await withTransaction(ctx.db, async (tx) => {
      for (const account of page) {
        // Only the end that was read: a renewal in between has its own, announced when near.
        const claimed = await tx.update(providerAccounts).set({ accessExpiryWarnedAt: now })
          .where(and(
            eq(providerAccounts.accountId, account.accountId),
            eq(providerAccounts.accessExpiresAt, account.accessExpiresAt!),
            isNull(providerAccounts.accessExpiryWarnedAt),
          ))
          .returning({ accountId: providerAccounts.accountId });
        if (!claimed.length) continue;
        await emitEvent(tx, {
          type: "provider.access_expiring",
          partnerId: account.partnerId,
          tenantId: account.tenantId,
          externalUserId: account.externalUserId,
          occurredAt: now,
          data: {
            providerId: account.providerId,
            connection: "CONNECTED",
            accessExpiresAt: iso(account.accessExpiresAt!),
          },
        });
        announced++;
      }
    });
    await yieldToEventLoop();
  }
}

function connectedAccounts(ctx: Ctx, condition: ReturnType<typeof and>, limit: number): Promise<AccountRow[]> {
  if (limit <= 0) return Promise.resolve([]);
  return ctx.db.read.select().from(providerAccounts)
    .where(and(eq(providerAccounts.connection, "CONNECTED"), condition))
    .orderBy(asc(sql`coalesce(${providerAccounts.accessExpiresAt}, 0)`), asc(providerAccounts.accountId))
    .limit(limit);
}

/**
 * Ask the venue whether it still holds the account's credential, and until
 * when. Not held, the account call moves it to ACCESS_LOST with its event.
 */
async function readValidity(ctx: Ctx, account: AccountRow): Promise<"LAPSED" | "HELD" | "FAILED"> {
  try {
    const check = await callWithAccount(ctx, account, async (venue, credentials) => {
      const check = await venue.testCredentials(credentials);
      if (check.problems.includes("AGENT_NOT_APPROVED")) {
        throw new VenueError("CREDENTIAL_REJECTED", "The venue no longer holds the agent", {
          providerId: venue.providerId,
        });
      }
      return check;
    });
    await withTransaction(ctx.db, async (tx) => {
      // The credential that was read: a reconnection in between stored its own validity.
      await tx.update(providerAccounts).set(accessValidity(check, ctx.clock.now(), account))
        .where(and(
          eq(providerAccounts.accountId, account.accountId),
          eq(providerAccounts.sealedSecret, account.sealedSecret),
        ));
    });
    return "HELD";
  } catch (error) {
    if (error instanceof ApiError && error.code === "PROVIDER_CREDENTIAL_REJECTED") return "LAPSED";
    ctx.logger.warn("access expiry: the venue could not be asked", {
      accountId: account.accountId,
      providerId: account.providerId,
      ...errorFields(error),
    });
    return "FAILED";
  }
}
