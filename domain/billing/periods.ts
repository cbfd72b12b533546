/**
 * Performance periods are UTC and half-open [start, end): WEEKLY runs Monday
 * 00:00 to the next Monday 00:00, MONTHLY day 1 00:00 to the next day 1. The
 * boundary instant belongs to the new period.
 */
import { DAY_MS } from "../clock.ts";
import { type ContractRow, pickContractInForce } from "../partners/load_partner.ts";

export type PerformancePeriod = "WEEKLY" | "MONTHLY";

export function periodStart(period: PerformancePeriod, at: number): number {
  const day = new Date(at);
  const midnight = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate());
  if (period === "MONTHLY") return Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), 1);
  const daysSinceMonday = (day.getUTCDay() + 6) % 7;
  return midnight - daysSinceMonday * DAY_MS;
}

export function nextPeriodStart(period: PerformancePeriod, at: number): number {
  const start = new Date(periodStart(period, at));
  if (period === "WEEKLY") return start.getTime() + 7 * DAY_MS;
  return Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1);
}

export interface ContractPeriod {
  start: number;
  end: number;
  /** The contract version in force at the period start: frozen into its statements (spec, Performance rule 8). */
  contract: ContractRow;
}

/**
 * The performance period of a contract holding `at`. A version takes effect
 * at a boundary of the period before it, so a WEEKLY/MONTHLY switch is never
 * retroactive: the period it starts runs from that boundary to the next
 * natural limit of its own periodicity, and the first period runs from the
 * contract start.
 */
export function contractPeriodAt(versions: ContractRow[], at: number): ContractPeriod {
  const contract = pickContractInForce(versions, at);
  const period = contract.performancePeriod as PerformancePeriod;
  return {
    start: Math.max(periodStart(period, at), contract.effectiveFrom),
    end: nextPeriodStart(period, at),
    contract,
  };
}

/** When the contract's first period starts: its first version's effect. */
export function contractStart(versions: ContractRow[]): number {
  return Math.min(...versions.map((version) => version.effectiveFrom));
}
