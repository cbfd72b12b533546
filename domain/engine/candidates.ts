/**
 * A signal's candidates, loaded in bulk: every enabled automation of the
 * signal's strategy at its provider, with the client, setup, account, last
 * reconciliation and today's result joined in one indexed query per page.
 * The engine never calls the venue per account to decide; an account's
 * exposure comes from its last reconciliation plus the entries sent since.
 */
import { and, asc, eq, gt, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.ts";
import {
  accountStates,
  automations,
  clients,
  clientSetups,
  dailyResults,
  intents,
  providerAccounts,
} from "../../db/schema.ts";
import { utcDay } from "../setups/daily_loss.ts";

export const CANDIDATE_PAGE_SIZE = 500;

export type Candidate = Awaited<ReturnType<typeof candidatePage>>[number];

/** One page of candidates after client `afterClientId`, in client order. */
export async function candidatePage(
  db: Executor,
  signal: { strategyId: string; providerId: string },
  afterClientId: number,
  now: number,
) {
  return await db.select({
    client: {
      id: clients.id,
      partnerId: clients.partnerId,
      tenantId: clients.tenantId,
      externalUserId: clients.externalUserId,
      status: clients.status,
      strategySelection: clients.strategySelection,
    },
    automation: automations,
    setup: clientSetups,
    account: {
      accountId: providerAccounts.accountId,
      connection: providerAccounts.connection,
      problems: providerAccounts.problems,
      approvedBuilderFeeTenthsBps: providerAccounts.approvedBuilderFeeTenthsBps,
    },
    state: {
      positions: accountStates.positions,
      restingEntries: accountStates.restingEntries,
      reconciledAt: accountStates.reconciledAt,
    },
    realized: dailyResults.realized,
    // Entries sent since the last reconciliation: slots the venue may not have shown it yet.
    entriesSinceReconciled: sql<number>`(SELECT count(*) FROM ${intents} WHERE ${intents.clientId} = ${clients.id}
      AND ${intents.providerId} = ${automations.providerId} AND ${intents.opensPosition} = 1
      AND ${intents.status} IN ('SUBMITTING', 'UNCERTAIN', 'ACCEPTED', 'PARTIALLY_FILLED', 'FILLED')
      AND ${intents.createdAt} > coalesce(${accountStates.reconciledAt}, 0))`,
    unsettledIntents: sql<number>`(SELECT count(*) FROM ${intents} WHERE ${intents.clientId} = ${clients.id}
      AND ${intents.providerId} = ${automations.providerId} AND ${intents.status} IN ('SUBMITTING', 'UNCERTAIN'))`,
  }).from(automations)
    .innerJoin(clients, eq(clients.id, automations.clientId))
    .leftJoin(
      clientSetups,
      and(eq(clientSetups.clientId, automations.clientId), eq(clientSetups.providerId, automations.providerId)),
    )
    .leftJoin(
      providerAccounts,
      and(eq(providerAccounts.clientId, automations.clientId), eq(providerAccounts.providerId, automations.providerId)),
    )
    .leftJoin(
      accountStates,
      and(eq(accountStates.clientId, automations.clientId), eq(accountStates.providerId, automations.providerId)),
    )
    .leftJoin(
      dailyResults,
      and(
        eq(dailyResults.clientId, automations.clientId),
        eq(dailyResults.providerId, automations.providerId),
        eq(dailyResults.day, utcDay(now)),
      ),
    )
    .where(and(
      eq(automations.strategyId, signal.strategyId),
      eq(automations.providerId, signal.providerId),
      eq(automations.enabled, true),
      gt(automations.clientId, afterClientId),
    ))
    .orderBy(asc(automations.clientId))
    .limit(CANDIDATE_PAGE_SIZE);
}
