/** The spec's Obligation resource from its row and the reductions taken off it. */
import type { obligations } from "../../db/schema.ts";
import { iso } from "../clock.ts";
import { microsToUsd } from "../money.ts";

export type ObligationRow = typeof obligations.$inferSelect;

/** Hours an obligation past its due date still allows new entries (spec: GRACE, 24 hours). */
export const GRACE_HOURS = 24;

export type EffectiveStatus = "PENDING" | "GRACE" | "OVERDUE_AFTER_GRACE" | "PAID" | "CANCELLED";

export function effectiveStatus(row: ObligationRow, now: number): EffectiveStatus {
  if (row.status === "PAID" || row.status === "CANCELLED") return row.status;
  if (now < row.dueAt) return "PENDING";
  return now < row.graceUntil ? "GRACE" : "OVERDUE_AFTER_GRACE";
}

/** An open obligation past its grace denies new entries at its provider (entry gate 7). */
export function blocksNewEntry(row: ObligationRow, now: number): boolean {
  return effectiveStatus(row, now) === "OVERDUE_AFTER_GRACE";
}

export function obligationView(row: ObligationRow, reducedMicros: number, now: number) {
  return {
    obligationId: row.obligationId,
    source: row.source,
    reference: row.reference,
    status: row.status,
    effectiveStatus: effectiveStatus(row, now),
    amountUsd: microsToUsd(row.amountMicros - reducedMicros),
    currency: row.currency,
    dueAt: iso(row.dueAt),
    graceUntil: iso(row.graceUntil),
    blocksNewEntry: blocksNewEntry(row, now),
    providers: [row.providerId],
    settledAt: row.settledAt === null ? null : iso(row.settledAt),
  };
}
