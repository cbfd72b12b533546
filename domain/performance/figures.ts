/**
 * A period's figures from its confirmed closing portions (spec, Performance
 * rules 5-6): NO_CARRY charges max(0, performance); CARRY adds the carry in
 * (zero or a loss), charges max(0, total) and carries min(0, total) out. The
 * fee is the chargeable base times the contract's percentage, rounded half up
 * to the cent; everything else keeps micro-units. Pure integer arithmetic.
 */
import { feeMicros } from "../money.ts";

export interface PeriodSums {
  netMicros: number;
  realizedMicros: number;
  venueFeesMicros: number;
  fundingMicros: number;
  builderFeesMicros: number;
  sourceFactsCount: number;
}

export interface PeriodFigures extends PeriodSums {
  carryInMicros: number;
  carryOutMicros: number;
  chargeableMicros: number;
  feeMicros: number;
}

export type CarryPolicy = "CARRY" | "NO_CARRY";

export const NO_SUMS: PeriodSums = {
  netMicros: 0,
  realizedMicros: 0,
  venueFeesMicros: 0,
  fundingMicros: 0,
  builderFeesMicros: 0,
  sourceFactsCount: 0,
};

export function periodFigures(
  sums: PeriodSums,
  carryInMicros: number,
  policy: CarryPolicy,
  performanceFeePercent: string,
): PeriodFigures {
  const carryIn = policy === "CARRY" ? Math.min(0, carryInMicros) : 0;
  const total = sums.netMicros + carryIn;
  const chargeable = Math.max(0, total);
  return {
    ...sums,
    carryInMicros: carryIn,
    carryOutMicros: policy === "CARRY" ? Math.min(0, total) : 0,
    chargeableMicros: chargeable,
    feeMicros: feeMicros(chargeable, performanceFeePercent),
  };
}

const FIGURE_FIELDS = [
  "netMicros",
  "realizedMicros",
  "venueFeesMicros",
  "fundingMicros",
  "builderFeesMicros",
  "sourceFactsCount",
  "carryInMicros",
  "carryOutMicros",
  "chargeableMicros",
  "feeMicros",
] as const satisfies (keyof PeriodFigures)[];

/** Field by field `after − before`: what an ADJUSTMENT statement holds. */
export function figuresDifference(after: PeriodFigures, before: PeriodFigures): PeriodFigures {
  return Object.fromEntries(
    FIGURE_FIELDS.map((field) => [field, after[field] - before[field]]),
  ) as unknown as PeriodFigures;
}

/** Field by field sum: a period's figures as stated (its ORIGINAL plus its ADJUSTMENTs). */
export function figuresSum(rows: PeriodFigures[]): PeriodFigures {
  return Object.fromEntries(
    FIGURE_FIELDS.map((field) => [field, rows.reduce((sum, row) => sum + row[field], 0)]),
  ) as unknown as PeriodFigures;
}

export function sameFigures(a: PeriodFigures, b: PeriodFigures): boolean {
  return FIGURE_FIELDS.every((field) => a[field] === b[field]);
}
