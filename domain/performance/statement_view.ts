/**
 * The spec's performance figures (a live provider entry or a Statement) from
 * figures in micro-units: the canonical net is the financial base, the audit
 * components are evidence only, the builder fee is separate platform revenue.
 */
import type { statements } from "../../db/schema.ts";
import { iso } from "../clock.ts";
import { microsToUsd } from "../money.ts";
import type { PeriodFigures } from "./figures.ts";

export type StatementRow = typeof statements.$inferSelect;

export function figuresView(figures: PeriodFigures) {
  return {
    basis: "CANONICAL_NET_REALIZED_PNL" as const,
    providerNetRealizedPnlUsd: microsToUsd(figures.netMicros),
    netPerformanceUsd: microsToUsd(figures.netMicros),
    auditComponents: {
      role: "AUDIT_EVIDENCE" as const,
      providerRealizedPnlUsd: microsToUsd(figures.realizedMicros),
      venueFeesUsd: microsToUsd(figures.venueFeesMicros),
      fundingUsd: microsToUsd(figures.fundingMicros),
    },
    builderFees: { role: "FINAUTON_REVENUE_SEPARATE" as const, builderFeesUsd: microsToUsd(figures.builderFeesMicros) },
    carryInUsd: microsToUsd(figures.carryInMicros),
    carryOutUsd: microsToUsd(figures.carryOutMicros),
    chargeablePerformanceUsd: microsToUsd(figures.chargeableMicros),
  };
}

export function statementView(row: StatementRow, tenantId: string | null) {
  return {
    statementId: row.statementId,
    kind: row.kind,
    status: "CLOSED" as const,
    adjustsStatementId: row.adjustsStatementId,
    tenantId,
    providerId: row.providerId,
    contractId: row.partnerId,
    contractVersion: row.contractVersion,
    period: row.period,
    policy: row.policy,
    periodStart: iso(row.periodStart),
    periodEnd: iso(row.periodEnd),
    performanceFeePercent: Number(row.performanceFeePercent),
    currency: row.currency,
    ...figuresView(row),
    performanceFeeUsd: microsToUsd(row.feeMicros),
    estimatedPerformanceFeeUsd: microsToUsd(row.feeMicros),
    creditUsd: microsToUsd(row.creditMicros),
    sourceFactsCount: row.sourceFactsCount,
    reason: row.reason,
    obligationId: row.obligationId,
    createdAt: iso(row.createdAt),
  };
}
