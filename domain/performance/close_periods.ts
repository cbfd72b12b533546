/**
 * Closing performance periods (job `period-close`; spec, Statement and
 * period). For each partner, every period that has ended is closed in turn:
 * each client and provider with a closing portion in it gets a CLOSED
 * ORIGINAL statement (`statement.created`) under the contract version in
 * force at the period start, and a positive fee, less any credit, becomes an
 * obligation (`obligation.created`). The work goes by pages of clients, one
 * short transaction each, yielding between them; the page cursor is kept in
 * `period_closes`, so a close cut short resumes where it stopped and two
 * instances never state a page twice. Late facts are then adjusted
 * (adjust_periods.ts).
 */
import { and, desc, eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { partners, periodCloses } from "../../db/schema.ts";
import { contractPeriodAt, contractStart } from "../billing/periods.ts";
import { createObligation, performanceFeeSource, recordCredit } from "../billing/fee_obligations.ts";
import { yieldToEventLoop } from "../concurrency.ts";
import type { Ctx } from "../context.ts";
import { emitEvent } from "../events/emit_event.ts";
import { newId } from "../ids.ts";
import { type ContractRow, loadContractVersions } from "../partners/load_partner.ts";
import { type CarryPolicy, periodFigures } from "./figures.ts";
import { insertStatement, markPagePortionsStated, periodReference } from "./statement_writes.ts";
import { carriesIn, creditBalances, pairKey, type PairSums, periodPairsPage } from "./period_reads.ts";
import { adjustStatedPeriods } from "./adjust_periods.ts";
import { statementView } from "./statement_view.ts";

/** Clients stated per transaction: a page holds the writer (and the event loop) for a few tens of ms. */
const CLIENTS_PER_PAGE = 100;

export interface PeriodCloseSummary {
  periodsClosed: number;
  statements: number;
  obligations: number;
  adjustments: number;
}

export async function closePeriods(ctx: Ctx): Promise<PeriodCloseSummary> {
  const summary: PeriodCloseSummary = { periodsClosed: 0, statements: 0, obligations: 0, adjustments: 0 };
  const partnerIds = await ctx.db.read.select({ partnerId: partners.partnerId }).from(partners);
  for (const { partnerId } of partnerIds) {
    const versions = await loadContractVersions(ctx.db.read, partnerId);
    for (;;) {
      const period = await periodToClose(ctx, partnerId, versions);
      if (!period || period.end > ctx.clock.now()) break;
      await closePeriod(ctx, partnerId, period, summary);
      summary.periodsClosed++;
    }
  }
  summary.adjustments = await adjustStatedPeriods(ctx);
  return summary;
}

interface OpenPeriod {
  start: number;
  end: number;
  contract: ContractRow;
  afterClientId: number;
}

/** The partner's oldest period not closed yet: one being closed, else the one after the last closed. */
async function periodToClose(ctx: Ctx, partnerId: string, versions: ContractRow[]): Promise<OpenPeriod | null> {
  if (!versions.length) return null;
  const [last] = await ctx.db.read.select().from(periodCloses).where(eq(periodCloses.partnerId, partnerId))
    .orderBy(desc(periodCloses.periodStart)).limit(1);
  if (last?.status === "RUNNING") {
    const contract = versions.find((version) => version.version === last.contractVersion)!;
    return { start: last.periodStart, end: last.periodEnd, contract, afterClientId: last.afterClientId };
  }
  const period = contractPeriodAt(versions, last ? last.periodEnd : contractStart(versions));
  return { ...period, afterClientId: 0 };
}

async function closePeriod(ctx: Ctx, partnerId: string, period: OpenPeriod, summary: PeriodCloseSummary) {
  const now = ctx.clock.now();
  await withTransaction(ctx.db, (tx) =>
    tx.insert(periodCloses).values({
      partnerId,
      periodStart: period.start,
      periodEnd: period.end,
      contractVersion: period.contract.version,
      status: "RUNNING",
      startedAt: now,
    }).onConflictDoNothing());
  let after = period.afterClientId;
  for (;;) {
    const page = await periodPairsPage(ctx.db.read, partnerId, period, after, CLIENTS_PER_PAGE);
    if (!page.length) break;
    const next = page[page.length - 1].clientId;
    const written = await statePage(ctx, partnerId, period, page, after, next);
    if (written === null) {
      // Another instance stated this page first: continue from where it is.
      const [row] = await ctx.db.read.select({ after: periodCloses.afterClientId }).from(periodCloses)
        .where(and(eq(periodCloses.partnerId, partnerId), eq(periodCloses.periodStart, period.start)));
      after = row.after;
      continue;
    }
    summary.statements += written.statements;
    summary.obligations += written.obligations;
    after = next;
    await yieldToEventLoop();
  }
  await withTransaction(ctx.db, (tx) =>
    tx.update(periodCloses).set({ status: "DONE", closedAt: ctx.clock.now() })
      .where(and(eq(periodCloses.partnerId, partnerId), eq(periodCloses.periodStart, period.start))));
}

/**
 * One page of ORIGINAL statements in one transaction, claimed by moving the
 * period's cursor from `from` to `to` (null when another instance moved it).
 */
async function statePage(
  ctx: Ctx,
  partnerId: string,
  period: OpenPeriod,
  page: PairSums[],
  from: number,
  to: number,
): Promise<{ statements: number; obligations: number } | null> {
  const contract = period.contract;
  const policy = contract.carryPolicy as CarryPolicy;
  const carries = policy === "CARRY" ? await carriesIn(ctx.db.read, page, period.start) : new Map<string, number>();
  const balances = await creditBalances(ctx.db.read, page);
  const now = ctx.clock.now();
  return await withTransaction(ctx.db, async (tx) => {
    const claimed = await tx.update(periodCloses).set({ afterClientId: to })
      .where(and(
        eq(periodCloses.partnerId, partnerId),
        eq(periodCloses.periodStart, period.start),
        eq(periodCloses.afterClientId, from),
      )).returning({ after: periodCloses.afterClientId });
    if (!claimed.length) return null;
    const reference = periodReference(period);
    let obligationsMade = 0;
    const stated: { clientId: number; providerId: string; statementId: string }[] = [];
    for (const pair of page) {
      const figures = periodFigures(pair, carries.get(pairKey(pair)) ?? 0, policy, contract.performanceFeePercent);
      const creditUsed = Math.min(figures.feeMicros, Math.max(0, balances.get(pairKey(pair)) ?? 0));
      const statementId = newId("stm", now);
      const parties = { partnerId, tenantId: pair.tenantId, externalUserId: pair.externalUserId };
      const obligation = figures.feeMicros - creditUsed > 0
        ? await createObligation(tx, parties, {
          clientId: pair.clientId,
          providerId: pair.providerId,
          source: performanceFeeSource(contract.performancePeriod),
          reference,
          amountMicros: figures.feeMicros - creditUsed,
          dueFrom: period.end,
          dueDays: contract.dueDays,
          statementId,
        }, now)
        : null;
      if (obligation) obligationsMade++;
      if (creditUsed > 0) await recordCredit(tx, pair, statementId, -creditUsed, now);
      const row = await insertStatement(tx, {
        statementId,
        partnerId,
        pair,
        kind: "ORIGINAL",
        adjustsStatementId: null,
        period,
        figures,
        creditMicros: creditUsed,
        reason: pair.pendingPortions ? "PERIOD_CLOSED_WITH_PENDING_PORTIONS" : "PERIOD_CLOSED",
        obligationId: obligation?.obligationId ?? null,
        now,
      });
      stated.push({ clientId: pair.clientId, providerId: pair.providerId, statementId });
      await emitEvent(tx, {
        type: "statement.created",
        ...parties,
        occurredAt: now,
        data: statementView(row, pair.tenantId),
      });
    }
    await markPagePortionsStated(tx, stated, period);
    return { statements: page.length, obligations: obligationsMade };
  });
}
