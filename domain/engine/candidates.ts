/**
 * A signal's candidates, loaded in bulk: every enabled automation of the
 * signal's strategy at its provider, with the client, setup, account, last
 * reconciliation and today's result joined in one indexed query per page.
 * The engine never calls the venue per account to decide; an account's
 * exposure comes from its last reconciliation plus the entries sent since.
 * Each row comes back as one JSON array, decoded by column (db/row_parts.ts):
 * forty-odd values handed across the driver one by one cost more than
 * SQLite building the text and V8 parsing it (a third of the page's time).
 */
import { sql } from "drizzle-orm";
import type { Executor } from "../../db/client.ts";
import { columnsPart, tablePart } from "../../db/row_parts.ts";
import {
  accountStates,
  automations,
  clients,
  clientSetups,
  dailyResults,
  intents,
  obligations,
  positions,
  providerAccounts,
} from "../../db/schema.ts";
import { utcDay } from "../setups/daily_loss.ts";

export const CANDIDATE_PAGE_SIZE = 500;

const clientPart = columnsPart({
  id: clients.id,
  partnerId: clients.partnerId,
  tenantId: clients.tenantId,
  externalUserId: clients.externalUserId,
  status: clients.status,
  strategySelection: clients.strategySelection,
});
const automationPart = tablePart(automations);
const setupPart = tablePart(clientSetups);
const accountPart = columnsPart({
  accountId: providerAccounts.accountId,
  connection: providerAccounts.connection,
  problems: providerAccounts.problems,
  approvedBuilderFeeTenthsBps: providerAccounts.approvedBuilderFeeTenthsBps,
});
const statePart = columnsPart({
  reconciledAt: accountStates.reconciledAt,
  positions: accountStates.positions,
  restingEntries: accountStates.restingEntries,
});
const PARTS = [clientPart, automationPart, setupPart, accountPart, statePart] as const;

export interface Candidate {
  client: NonNullable<ReturnType<typeof clientPart.decode>>;
  automation: NonNullable<ReturnType<typeof automationPart.decode>>;
  setup: ReturnType<typeof setupPart.decode>;
  account: ReturnType<typeof accountPart.decode>;
  state: ReturnType<typeof statePart.decode>;
  /** Today's net realized result (decimal string), null before the first fact of the day. */
  realized: string | null;
  /** Entries answered after the last reconciliation read the account: slots it may not show yet. */
  entriesSinceReconciled: number;
  unsettledIntents: number;
  /** The service's open positions on the account that are not PROTECTED. */
  unprotectedPositions: number;
  /** The last reconciliation saw a position at the venue that none of the service's open positions explains. */
  externalExposure: boolean;
  /** The grace end of an open obligation already past it (new entries suspended), or null. */
  overdueSince: number | null;
}

/** One page of candidates after client `afterClientId`, in client order. */
export async function candidatePage(
  db: Executor,
  signal: { strategyId: string; providerId: string },
  afterClientId: number,
  now: number,
): Promise<Candidate[]> {
  const rows = (await db.values<[string]>(sql`SELECT json_array(${sql.join(PARTS.map((part) => part.sql), sql`, `)},
      ${dailyResults.realized},
      -- Answered after the reconciliation's read began: it may not show them.
      (SELECT count(*) FROM ${intents} WHERE ${intents.clientId} = ${clients.id}
        AND ${intents.providerId} = ${automations.providerId} AND ${intents.opensPosition} = 1
        AND ${intents.status} IN ('SUBMITTING', 'UNCERTAIN', 'ACCEPTED', 'PARTIALLY_FILLED', 'FILLED')
        AND ${intents.id} > coalesce(${accountStates.answeredThroughIntent}, 0)),
      (SELECT count(*) FROM ${intents} WHERE ${intents.clientId} = ${clients.id}
        AND ${intents.providerId} = ${automations.providerId} AND ${intents.status} IN ('SUBMITTING', 'UNCERTAIN')),
      (SELECT count(*) FROM ${positions} WHERE ${positions.clientId} = ${clients.id}
        AND ${positions.providerId} = ${automations.providerId} AND ${positions.status} = 'OPEN'
        AND ${positions.protectionStatus} <> 'PROTECTED'),
      EXISTS (SELECT 1 FROM json_each(${accountStates.positions}) AS held
        WHERE NOT EXISTS (SELECT 1 FROM ${positions} WHERE ${positions.clientId} = ${clients.id}
          AND ${positions.providerId} = ${automations.providerId} AND ${positions.status} = 'OPEN'
          AND ${positions.symbol} = held.value->>'symbol')),
      (SELECT min(${obligations.graceUntil}) FROM ${obligations} WHERE ${obligations.clientId} = ${clients.id}
        AND ${obligations.providerId} = ${automations.providerId} AND ${obligations.status} = 'OPEN'
        AND ${obligations.graceUntil} <= ${now}))
    FROM ${automations}
    JOIN ${clients} ON ${clients.id} = ${automations.clientId}
    LEFT JOIN ${clientSetups} ON ${clientSetups.clientId} = ${automations.clientId}
      AND ${clientSetups.providerId} = ${automations.providerId}
    LEFT JOIN ${providerAccounts} ON ${providerAccounts.clientId} = ${automations.clientId}
      AND ${providerAccounts.providerId} = ${automations.providerId}
    LEFT JOIN ${accountStates} ON ${accountStates.clientId} = ${automations.clientId}
      AND ${accountStates.providerId} = ${automations.providerId}
    LEFT JOIN ${dailyResults} ON ${dailyResults.clientId} = ${automations.clientId}
      AND ${dailyResults.providerId} = ${automations.providerId} AND ${dailyResults.day} = ${utcDay(now)}
    WHERE ${automations.strategyId} = ${signal.strategyId} AND ${automations.providerId} = ${signal.providerId}
      AND ${automations.enabled} = 1 AND ${automations.clientId} > ${afterClientId}
    ORDER BY ${automations.clientId}
    LIMIT ${CANDIDATE_PAGE_SIZE}`)).map(([json]) => JSON.parse(json) as unknown[]);
  return rows.map((row) => {
    let at = 0;
    const next = <T>(part: { width: number; decode(row: unknown[], at: number): T }) => {
      const decoded = part.decode(row, at);
      at += part.width;
      return decoded;
    };
    const client = next(clientPart)!;
    const automation = next(automationPart)!;
    const setup = next(setupPart);
    const account = next(accountPart);
    const state = next(statePart);
    return {
      client,
      automation,
      setup,
      account,
      state,
      realized: row[at] as string | null,
      entriesSinceReconciled: row[at + 1] as number,
      unsettledIntents: row[at + 2] as number,
      unprotectedPositions: row[at + 3] as number,
      externalExposure: row[at + 4] === 1,
      overdueSince: row[at + 5] as number | null,
    };
  });
}
