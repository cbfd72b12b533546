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
import {
  insertObligations,
  obligationCreated,
  performanceFeeSource,
  recordCredit,
} from "../billing/fee_obligations.ts";
import { yieldToEventLoop } from "../concurrency.ts";
import type { Ctx } from "../context.ts";
import { emitEvents, type NewEvent } from "../events/emit_event.ts";
import { errorFields } from "../logger.ts";
import { newId } from "../ids.ts";
import { type ContractRow, loadContractVersions } from "../partners/load_partner.ts";
import { type CarryPolicy, periodFigures } from "./figures.ts";
import { insertStatements, markPagePortionsStated, periodReference } from "./statement_writes.ts";
import { carriesIn, creditBalances, pairKey, periodPairsPage } from "./period_reads.ts";
import { adjustStatedPeriods } from "./adjust_periods.ts";
import { statementView } from "./statement_view.ts";

/**
 * Clients stated per transaction: a page holds the writer (and the event
 * loop) for a few tens of ms. 150 (from 100) once the page's writes went in
 * multi-row INSERTs: the close of 100,000 clients took 8.5 s instead of
 * 10.2 s, with status p99 22-28 ms meanwhile (bench target < 50 ms).
 */
const CLIENTS_PER_PAGE = 150;

export interface PeriodCloseSummary {
  periodsClosed: number;
  statements: number;
  obligations: number;
  adjustments: number;
  /** Partners whose close failed this run (logged; retried by the next run): the others still close. */
  failedPartners: number;
  /** Client and provider pairs whose late facts could not be adjusted this run (logged; retried next run). */
  failedPairs: number;
}

export async function closePeriods(ctx: Ctx): Promise<PeriodCloseSummary> {
  const summary: PeriodCloseSummary = {
    periodsClosed: 0,
    statements: 0,
    obligations: 0,
    adjustments: 0,
    failedPartners: 0,
    failedPairs: 0,
  };
  const partnerIds = await ctx.db.read.select({ partnerId: partners.partnerId }).from(partners);
  for (const { partnerId } of partnerIds) {
    try {
      await closePartnerPeriods(ctx, partnerId, summary);
    } catch (error) {
      // One partner's odd record (a contract no close can use) never stops the close of the others.
      summary.failedPartners++;
      ctx.logger.error("period close failed", { partnerId, ...errorFields(error) });
    }
  }
  const adjusted = await adjustStatedPeriods(ctx);
  summary.adjustments = adjusted.adjustments;
  summary.failedPairs = adjusted.failedPairs;
  return summary;
}

async function closePartnerPeriods(ctx: Ctx, partnerId: string, summary: PeriodCloseSummary) {
  const versions = await loadContractVersions(ctx.db.read, partnerId);
  for (;;) {
    const period = await periodToClose(ctx, partnerId, versions);
    if (!period || period.end > ctx.clock.now()) return;
    await closePeriod(ctx, partnerId, period, summary);
    summary.periodsClosed++;
  }
}

type PageOutcome =
  | "PERIOD_DONE"
  | { moved: true; after: number }
  | { moved: false; after: number; statements: number; obligations: number };

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
    const written = await statePage(ctx, partnerId, period, after);
    if (written === "PERIOD_DONE") break;
    if (written.moved) {
      // Another instance stated this page first: continue from where it is.
      after = written.after;
      continue;
    }
    summary.statements += written.statements;
    summary.obligations += written.obligations;
    after = written.after;
    await yieldToEventLoop();
  }
  await withTransaction(ctx.db, (tx) =>
    tx.update(periodCloses).set({ status: "DONE", closedAt: ctx.clock.now() })
      .where(and(eq(periodCloses.partnerId, partnerId), eq(periodCloses.periodStart, period.start))));
}

/**
 * One page of ORIGINAL statements in one transaction, claimed by moving the
 * period's cursor past the page's last client. What the statements sum, the
 * carry they bring in and the credit they use are read inside that
 * transaction: a result confirmed meanwhile (the reconcile job runs beside
 * the close) is then either summed here or, confirmed after the commit, left
 * uncounted for an ADJUSTMENT; never marked counted without being summed.
 */
async function statePage(
  ctx: Ctx,
  partnerId: string,
  period: OpenPeriod,
  from: number,
): Promise<PageOutcome> {
  const contract = period.contract;
  const policy = contract.carryPolicy as CarryPolicy;
  const now = ctx.clock.now();
  return await withTransaction(ctx.db, async (tx) => {
    const [cursor] = await tx.select({ after: periodCloses.afterClientId }).from(periodCloses)
      .where(and(eq(periodCloses.partnerId, partnerId), eq(periodCloses.periodStart, period.start)));
    if (cursor.after !== from) return { moved: true, after: cursor.after };
    const page = await periodPairsPage(tx, partnerId, period, from, CLIENTS_PER_PAGE);
    if (!page.length) return "PERIOD_DONE";
    const to = page[page.length - 1].clientId;
    await tx.update(periodCloses).set({ afterClientId: to })
      .where(and(eq(periodCloses.partnerId, partnerId), eq(periodCloses.periodStart, period.start)));
    const carries = policy === "CARRY" ? await carriesIn(tx, page, period.start) : new Map<string, number>();
    const balances = await creditBalances(tx, page);
    const reference = periodReference(period);
    // The page's rows are written a table at a time (multi-row INSERTs), its events in the order stating each pair
    // in turn would emit them: its obligation.created, then its statement.created.
    const drafts = page.map((pair) => {
      const figures = periodFigures(pair, carries.get(pairKey(pair)) ?? 0, policy, contract.performanceFeePercent);
      const creditUsed = Math.min(figures.feeMicros, Math.max(0, balances.get(pairKey(pair)) ?? 0));
      const parties = { partnerId, tenantId: pair.tenantId, externalUserId: pair.externalUserId };
      return { pair, figures, creditUsed, parties, statementId: newId("stm", now) };
    });
    const owing = drafts.filter((draft) => draft.figures.feeMicros - draft.creditUsed > 0);
    const created = await insertObligations(
      tx,
      owing.map(({ pair, figures, creditUsed, parties, statementId }) => ({
        parties,
        input: {
          clientId: pair.clientId,
          providerId: pair.providerId,
          source: performanceFeeSource(contract.performancePeriod),
          reference,
          amountMicros: figures.feeMicros - creditUsed,
          dueFrom: period.end,
          dueDays: contract.dueDays,
          statementId,
        },
      })),
      now,
    );
    const obligationOf = new Map(owing.map((draft, index) => [draft, created[index]]));
    for (const { pair, creditUsed, statementId } of drafts) {
      if (creditUsed > 0) await recordCredit(tx, pair, statementId, -creditUsed, now);
    }
    const rows = await insertStatements(
      tx,
      drafts.map((draft) => ({
        statementId: draft.statementId,
        partnerId,
        pair: draft.pair,
        kind: "ORIGINAL" as const,
        adjustsStatementId: null,
        period,
        figures: draft.figures,
        creditMicros: draft.creditUsed,
        reason: draft.pair.pendingPortions ? "PERIOD_CLOSED_WITH_PENDING_PORTIONS" : "PERIOD_CLOSED",
        obligationId: obligationOf.get(draft)?.obligationId ?? null,
        now,
      })),
    );
    await emitEvents(
      tx,
      drafts.flatMap((draft, index) => {
        const obligation = obligationOf.get(draft);
        const statement: NewEvent = {
          type: "statement.created",
          ...draft.parties,
          occurredAt: now,
          data: statementView(rows[index], draft.pair.tenantId),
        };
        return obligation ? [obligationCreated(draft.parties, obligation, now), statement] : [statement];
      }),
    );
    const stated = drafts.map(({ pair, statementId }) => ({
      clientId: pair.clientId,
      providerId: pair.providerId,
      statementId,
    }));
    await markPagePortionsStated(tx, stated, period);
    return { moved: false, after: to, statements: page.length, obligations: created.filter(Boolean).length };
  });
}
