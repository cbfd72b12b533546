/**
 * `GET /v1/users/:id/performance` and `/statements`: the live estimate of
 * the period in progress (the same figures a close would state now, nothing
 * charged) and the closed statements, newest first.
 */
import { and, desc, eq, sql } from "drizzle-orm";
import { preparedFor } from "../../db/client.ts";
import { statements } from "../../db/schema.ts";
import { contractPeriodAt } from "../billing/periods.ts";
import { iso } from "../clock.ts";
import { contractProviders } from "../commercial/commercial_state.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { effectiveAccessOf } from "../grants/effective_access.ts";
import { loadClient } from "../clients/load_client.ts";
import { loadContractVersions } from "../partners/load_partner.ts";
import { microsToUsd } from "../money.ts";
import { inOrder } from "../concurrency.ts";
import type { ProviderId } from "../../venues/types.ts";
import { type CarryPolicy, periodFigures } from "./figures.ts";
import { attributionPendingCount, carriesIn, pairPeriodSums, pendingBeforeCount } from "./period_reads.ts";
import { figuresView, statementView } from "./statement_view.ts";

/** Closed statements shown beside the live period. */
const CLOSED_SHOWN = 12;

// Both routes are polled per client: their reads are built once per connection.
const newestFirst = [desc(statements.periodStart), desc(statements.providerId), desc(statements.createdAt)];
const closedStatementsShown = preparedFor((db) =>
  db.select().from(statements).where(eq(statements.clientId, sql.placeholder("clientId")))
    .orderBy(...newestFirst).limit(CLOSED_SHOWN).prepare()
);
const statementsOfClient = preparedFor((db) =>
  db.select().from(statements)
    .where(
      and(eq(statements.partnerId, sql.placeholder("partnerId")), eq(statements.clientId, sql.placeholder("clientId"))),
    )
    .orderBy(...newestFirst).prepare()
);

export async function getPerformance(ctx: Ctx, input: { externalUserId: string }) {
  const partnerId = partnerOf(ctx);
  const now = ctx.clock.now();
  // Independent reads, issued together (one round trip on a libSQL server), taken in order: the client's 404 first.
  const [client, access, versions] = await inOrder([
    loadClient(ctx.db.read, partnerId, input.externalUserId),
    effectiveAccessOf(ctx, partnerId),
    loadContractVersions(ctx.db.read, partnerId),
  ]);
  const { start, end, contract } = contractPeriodAt(versions, now);
  const policy = contract.carryPolicy as CarryPolicy;
  const livePair = async (providerId: ProviderId) => {
    const pair = { clientId: client.id, providerId };
    const [sums, carries, attributionPendingFacts, pendingInEndedPeriods] = await inOrder([
      pairPeriodSums(ctx.db.read, pair, { start, end }),
      policy === "CARRY" ? carriesIn(ctx.db.read, [pair], start) : undefined,
      attributionPendingCount(ctx.db.read, pair, { start, end }),
      pendingBeforeCount(ctx.db.read, pair, start),
    ]);
    const carryIn = carries?.values().next().value ?? 0;
    const figures = periodFigures(sums, carryIn, policy, contract.performanceFeePercent);
    return {
      providerId,
      ...figuresView(figures),
      // Live: an estimate, nothing is charged before the period closes.
      performanceFeeUsd: 0,
      estimatedPerformanceFeeUsd: microsToUsd(figures.feeMicros),
      pendingPortions: sums.pendingPortions,
      attributionPendingFacts,
      pendingInEndedPeriods,
    };
  };
  // Every provider's reads and the closed statements together, too.
  const [providers, closed] = await inOrder([
    inOrder(contractProviders(access).map(livePair)),
    closedStatementsShown(ctx.db.read).all({ clientId: client.id }),
  ]);
  return {
    externalUserId: client.externalUserId,
    tenantId: client.tenantId,
    current: {
      status: "LIVE_ESTIMATE" as const,
      contract: {
        contractId: partnerId,
        version: contract.version,
        period: contract.performancePeriod,
        policy: contract.carryPolicy,
        performanceFeePercent: Number(contract.performanceFeePercent),
        currency: contract.currency,
      },
      periodStart: iso(start),
      periodEnd: iso(end),
      providers,
    },
    closedStatements: closed.map((row) => statementView(row, client.tenantId)),
  };
}

export async function listStatements(ctx: Ctx, input: { externalUserId: string }) {
  const partnerId = partnerOf(ctx);
  const client = await loadClient(ctx.db.read, partnerId, input.externalUserId);
  const rows = await statementsOfClient(ctx.db.read).all({ partnerId, clientId: client.id });
  return {
    externalUserId: client.externalUserId,
    tenantId: client.tenantId,
    statements: rows.map((row) => statementView(row, client.tenantId)),
  };
}
