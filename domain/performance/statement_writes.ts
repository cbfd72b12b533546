/**
 * Writing statements: a statement row (immutable), and the portions it
 * counts marked with it, so each confirmed portion is stated exactly once.
 */
import { sql } from "drizzle-orm";
import type { Tx } from "../../db/client.ts";
import { rowInsert } from "../../db/row_insert.ts";
import { performancePortions, statements } from "../../db/schema.ts";
import type { ContractRow } from "../partners/load_partner.ts";
import { QUOTE_CURRENCY } from "../setups/setup_values.ts";
import type { ProviderId } from "../../venues/types.ts";
import type { PeriodFigures } from "./figures.ts";

/** A period as obligations name it: `2026-11-02/2026-11-09` (start and end dates, UTC). */
export function periodReference(period: { start: number; end: number }): string {
  return `${new Date(period.start).toISOString().slice(0, 10)}/${new Date(period.end).toISOString().slice(0, 10)}`;
}

export interface StatementDraft {
  statementId: string;
  partnerId: string;
  pair: { clientId: number; providerId: string };
  kind: "ORIGINAL" | "ADJUSTMENT";
  adjustsStatementId: string | null;
  period: { start: number; end: number; contract: ContractRow };
  figures: PeriodFigures;
  creditMicros: number;
  reason: string;
  obligationId: string | null;
  now: number;
}

const statementInsert = rowInsert(statements);

export async function insertStatement(tx: Tx, draft: StatementDraft) {
  return await statementInsert.insert(tx, statementRow(draft));
}

/** Many statements at once (a period close's page), in order; answers their rows as `insertStatement` does. */
export async function insertStatements(tx: Tx, drafts: StatementDraft[]) {
  const rows = drafts.map((draft) => statementInsert.completed(statementRow(draft)));
  await statementInsert.insertAll(tx, rows);
  return rows;
}

function statementRow(draft: StatementDraft) {
  const { contract } = draft.period;
  return {
    statementId: draft.statementId,
    partnerId: draft.partnerId,
    clientId: draft.pair.clientId,
    providerId: draft.pair.providerId,
    kind: draft.kind,
    adjustsStatementId: draft.adjustsStatementId,
    contractVersion: contract.version,
    period: contract.performancePeriod,
    policy: contract.carryPolicy,
    periodStart: draft.period.start,
    periodEnd: draft.period.end,
    performanceFeePercent: contract.performanceFeePercent,
    currency: QUOTE_CURRENCY[draft.pair.providerId as ProviderId],
    ...draft.figures,
    creditMicros: draft.creditMicros,
    reason: draft.reason,
    obligationId: draft.obligationId,
    createdAt: draft.now,
  };
}

/** The confirmed portions of the pair's period not yet counted by a statement are counted by this one. */
export async function markPortionsStated(
  tx: Tx,
  pair: { clientId: number; providerId: string },
  period: { start: number; end: number },
  statementId: string,
): Promise<void> {
  await markPagePortionsStated(tx, [{ ...pair, statementId }], period);
}

/**
 * The same for a page of pairs, in one statement. Each pair reads its range of
 * the period index: left to itself, the planner walks every unstated portion
 * of the database once per pair.
 */
export async function markPagePortionsStated(
  tx: Tx,
  stated: { clientId: number; providerId: string; statementId: string }[],
  period: { start: number; end: number },
): Promise<void> {
  await tx.run(sql`WITH stated(client_id, provider_id, statement_id) AS MATERIALIZED
      (SELECT value->>'clientId', value->>'providerId', value->>'statementId' FROM json_each(${JSON.stringify(stated)}))
    UPDATE ${performancePortions} INDEXED BY performance_portions_period
    SET statement_id = stated.statement_id FROM stated
    WHERE ${performancePortions.clientId} = stated.client_id AND ${performancePortions.providerId} = stated.provider_id
      AND ${performancePortions.closedAt} >= ${period.start} AND ${performancePortions.closedAt} < ${period.end}
      AND ${performancePortions.status} = 'CONFIRMED' AND ${performancePortions.statementId} IS NULL`);
}
