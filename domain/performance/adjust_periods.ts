/**
 * Late facts (spec, Performance rule 9): a closing portion confirmed after
 * its period was closed is stated by an ADJUSTMENT holding the differences
 * from what the period's statements said, never a second charge. A higher
 * fee is a new obligation; a lower one reduces the open obligations (the
 * period's own first) and what is left becomes credit. Under CARRY the later
 * stated periods of the pair are recomputed with the new carry, each change
 * an ADJUSTMENT of its own. One transaction per client and provider.
 */
import { and, asc, eq, gte, sql } from "drizzle-orm";
import { type Executor, type Tx, withTransaction } from "../../db/client.ts";
import { clients, performancePortions, periodCloses, statements } from "../../db/schema.ts";
import {
  createObligation,
  performanceFeeSource,
  recordCredit,
  reduceOpenObligations,
} from "../billing/fee_obligations.ts";
import { yieldToEventLoop } from "../concurrency.ts";
import type { Ctx } from "../context.ts";
import { emitEvent } from "../events/emit_event.ts";
import { errorFields } from "../logger.ts";
import { newId } from "../ids.ts";
import { type ContractRow, loadContractVersions } from "../partners/load_partner.ts";
import { insertStatement, markPortionsStated, periodReference } from "./statement_writes.ts";
import {
  type CarryPolicy,
  figuresDifference,
  figuresSum,
  NO_SUMS,
  type PeriodFigures,
  periodFigures,
  sameFigures,
} from "./figures.ts";
import { carriesIn, type Pair, pairKey, pairPeriodSums } from "./period_reads.ts";
import { statementView } from "./statement_view.ts";

const PAIRS_PER_BATCH = 100;

interface LateWork extends Pair {
  partnerId: string;
  periodStart: number;
}

export interface AdjustmentSummary {
  adjustments: number;
  /** Pairs whose adjustment failed this run (logged; retried by the next run): the others are still adjusted. */
  failedPairs: number;
}

/** Adjust every stated period that gained confirmed portions. */
export async function adjustStatedPeriods(ctx: Ctx): Promise<AdjustmentSummary> {
  const summary: AdjustmentSummary = { adjustments: 0, failedPairs: 0 };
  const failed: string[] = [];
  for (;;) {
    const work = await lateWork(ctx.db.read, failed);
    if (!work.length) return summary;
    for (const item of work) {
      try {
        summary.adjustments += await adjustPair(ctx, item);
      } catch (error) {
        // One pair's odd record never stops the adjustments of the others; it is not asked for again this run.
        failed.push(pairKey(item));
        summary.failedPairs++;
        ctx.logger.error("period adjustment failed", {
          partnerId: item.partnerId,
          providerId: item.providerId,
          ...errorFields(error),
        });
      }
    }
    await yieldToEventLoop();
  }
}

/**
 * Pairs with confirmed portions no statement counted, in periods already
 * closed (the earliest per pair), leaving out the pairs that failed this run
 * and the partners with a period being closed: a carry recalculated now would
 * miss the statements that close has yet to write (it failed part way, or
 * another instance is at it), so they wait for it to finish.
 */
async function lateWork(db: Executor, failed: string[]): Promise<LateWork[]> {
  const rows = await db.values<[number, string, string, number]>(sql`
    SELECT p.client_id, p.provider_id, c.partner_id, min(pc.period_start)
    FROM ${performancePortions} p
    JOIN ${clients} c ON c.id = p.client_id
    JOIN ${periodCloses} pc ON pc.partner_id = c.partner_id AND pc.status = 'DONE'
      AND p.closed_at >= pc.period_start AND p.closed_at < pc.period_end
    WHERE p.status = 'CONFIRMED' AND p.statement_id IS NULL
      AND p.client_id || ':' || p.provider_id NOT IN (SELECT value FROM json_each(${JSON.stringify(failed)}))
      AND NOT EXISTS (SELECT 1 FROM ${periodCloses} r WHERE r.partner_id = c.partner_id AND r.status = 'RUNNING')
    GROUP BY p.client_id, p.provider_id
    LIMIT ${PAIRS_PER_BATCH}`);
  return rows.map(([clientId, providerId, partnerId, periodStart]) => ({
    clientId,
    providerId,
    partnerId,
    periodStart,
  }));
}

async function adjustPair(ctx: Ctx, work: LateWork): Promise<number> {
  const versions = await loadContractVersions(ctx.db.read, work.partnerId);
  const now = ctx.clock.now();
  return await withTransaction(ctx.db, async (tx) => {
    // The late period, then (CARRY) every later period the pair was stated in.
    const closes = await tx.select().from(periodCloses).where(and(
      eq(periodCloses.partnerId, work.partnerId),
      eq(periodCloses.status, "DONE"),
      gte(periodCloses.periodStart, work.periodStart),
    )).orderBy(asc(periodCloses.periodStart));
    let written = 0;
    for (const [index, close] of closes.entries()) {
      const contract = versions.find((version) => version.version === close.contractVersion)!;
      const period = { start: close.periodStart, end: close.periodEnd, contract };
      const stated = await statedRows(tx, work, period.start);
      if (index > 0 && !stated.length) continue;
      const sums = await pairPeriodSums(tx, work, period);
      const carryIn = (await carriesIn(tx, [work], period.start)).get(pairKey(work)) ?? 0;
      const after = periodFigures(sums, carryIn, contract.carryPolicy as CarryPolicy, contract.performanceFeePercent);
      const before = stated.length ? figuresSum(stated) : periodFigures(NO_SUMS, 0, "NO_CARRY", "0");
      if (sameFigures(after, before)) {
        // Nothing changed (a portion of zero result): it is counted by the period's latest statement.
        if (stated.length) await markPortionsStated(tx, work, period, stated[stated.length - 1].statementId);
        continue;
      }
      await writeAdjustment(tx, work, period, stated, figuresDifference(after, before), {
        reason: index === 0 ? "LATE_FACTS" : "CARRY_RECALCULATED",
        parties: sums,
        now,
      });
      written++;
    }
    return written;
  });
}

function statedRows(tx: Tx, pair: Pair, periodStart: number) {
  return tx.select().from(statements).where(and(
    eq(statements.clientId, pair.clientId),
    eq(statements.providerId, pair.providerId),
    eq(statements.periodStart, periodStart),
  )).orderBy(asc(statements.createdAt));
}

async function writeAdjustment(
  tx: Tx,
  work: LateWork,
  period: { start: number; end: number; contract: ContractRow },
  stated: (typeof statements.$inferSelect)[],
  difference: PeriodFigures,
  context: { reason: string; parties: { tenantId: string | null; externalUserId: string }; now: number },
) {
  const { now } = context;
  const statementId = newId("stm", now);
  const parties = { partnerId: work.partnerId, ...context.parties };
  let obligationId: string | null = null;
  let creditGranted = 0;
  if (difference.feeMicros > 0) {
    const obligation = await createObligation(tx, parties, {
      clientId: work.clientId,
      providerId: work.providerId,
      source: performanceFeeSource(period.contract.performancePeriod),
      reference: `${periodReference(period)}#${statementId}`,
      amountMicros: difference.feeMicros,
      dueFrom: now,
      dueDays: period.contract.dueDays,
      statementId,
    }, now);
    obligationId = obligation?.obligationId ?? null;
  } else if (difference.feeMicros < 0) {
    const own = stated.flatMap((row) => row.obligationId ? [row.obligationId] : []);
    creditGranted = await reduceOpenObligations(tx, work, -difference.feeMicros, own, statementId, now);
    if (creditGranted > 0) await recordCredit(tx, work, statementId, creditGranted, now);
  }
  const row = await insertStatement(tx, {
    statementId,
    partnerId: work.partnerId,
    pair: work,
    kind: "ADJUSTMENT",
    adjustsStatementId: stated[0]?.statementId ?? null,
    period,
    figures: difference,
    creditMicros: creditGranted,
    reason: context.reason,
    obligationId,
    now,
  });
  await markPortionsStated(tx, work, period, statementId);
  await emitEvent(tx, {
    type: "statement.adjusted",
    ...parties,
    occurredAt: now,
    data: statementView(row, parties.tenantId),
  });
}
