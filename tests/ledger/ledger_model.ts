/**
 * The ledger model: random interleavings of what moves a client's money —
 * entries, closes (some reported late, dated back into closed periods),
 * entry fills reported late, funding, funding reads, clock moves, period
 * closes (one with a reconciliation confirming results in the middle of it),
 * payment instructions and transfers — run against the real service on one
 * libSQL file, every step followed by the ledger checks (ledger_checks.ts).
 * One partner and client per case, so cases share the database.
 */
import fc from "fast-check";
import { sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import type { Ctx } from "../../domain/context.ts";
import { closePeriods } from "../../domain/performance/close_periods.ts";
import { START, type TestEnv } from "../_helpers/env.ts";
import { interleavedWrites } from "../_helpers/interleaved_writes.ts";
import { createPartner, expectJson } from "../_helpers/http.ts";
import {
  billingContract,
  clientIdOf,
  fundingReadThrough,
  lateFills,
  lateFunding,
  positionClosed,
  recordTrade,
} from "../performance/trade_fixture.ts";
import { ik } from "../setup/setup_fixture.ts";
import { checkLedger, type LedgerExpectations } from "./ledger_checks.ts";
import {
  type PaymentChain,
  type PaymentModel,
  type PaymentStep,
  paymentSteps,
  runPaymentStep,
} from "./ledger_payments.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** Every position opens 3 units: closes take 1, 2 or 3 of what is left. */
const ENTRY_UNITS = 3;

const cents = (value: number) => (value / 100).toFixed(2);
const centsToMicros = (value: number) => value * 10_000;

export type Step =
  | { kind: "open"; entryFeeCents: number; entryLate: boolean }
  | { kind: "entryArrives"; position: number }
  | { kind: "exit"; position: number; units: number; pnlCents: number; feeCents: number; backHours: number }
  | { kind: "funding"; position: number; amountCents: number }
  | { kind: "fundingRead" }
  | { kind: "advance"; hours: number }
  /** The period-close job, run when the clock reaches the next month (a period boundary) or where it is. */
  | { kind: "close"; atBoundary: boolean }
  | { kind: "closeRacing"; atBoundary: boolean }
  | PaymentStep;

export interface LedgerCase {
  policy: "CARRY" | "NO_CARRY";
  percent: string;
  steps: Step[];
}

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof<fc.WeightedArbitrary<Step>[]>(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("open"),
      entryFeeCents: fc.integer({ min: 0, max: 50 }),
      entryLate: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("entryArrives"), position: fc.nat(5) }) },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("exit"),
      position: fc.nat(5),
      units: fc.integer({ min: 1, max: ENTRY_UNITS }),
      pnlCents: fc.integer({ min: -2_000, max: 6_000 }),
      feeCents: fc.integer({ min: 0, max: 50 }),
      backHours: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 400 })),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("funding"),
      position: fc.nat(5),
      amountCents: fc.integer({ min: -500, max: 300 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("fundingRead") }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("advance"), hours: fc.integer({ min: 1, max: 500 }) }) },
  // Mostly at a boundary: a close that finds a period ended is what states, charges and adjusts.
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("close"), atBoundary: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("closeRacing"), atBoundary: fc.constant(true) }) },
  ...paymentSteps,
);

export const caseArbitrary: fc.Arbitrary<LedgerCase> = fc.record({
  policy: fc.constantFrom("CARRY" as const, "NO_CARRY" as const),
  percent: fc.constantFrom("0.2", "0.15", "0.333333"),
  steps: fc.array(stepArbitrary, { minLength: 8, maxLength: 28, size: "max" }),
});

interface PositionModel {
  name: string;
  openedAt: number;
  entryFeeCents: number;
  entryArrived: boolean;
  unitsLeft: number;
  lastExitAt: number;
  /** Realized less fees so far, in cents, and the funding paid so far with its venue times. */
  resultCents: number;
  funding: { cents: number; at: number }[];
}

export interface World extends PaymentModel {
  partnerId: string;
  clientId: number;
  positions: PositionModel[];
  /** Funding is known through here (what the last funding read recorded). */
  fundingKnownThrough: number;
  expected: LedgerExpectations;
}

let cases = 0;

/** What the cases did between them, printed with the run: a model that never pays proves little. */
export const tally: Record<string, number> = {};

async function countCase(world: World) {
  const rows = await world.env.deps.db.read.values<[string, number]>(sql`
    SELECT 'statements ' || kind AS what, count(*) AS n FROM statements WHERE client_id = ${world.clientId} GROUP BY kind
    UNION ALL SELECT 'obligations ' || status, count(*) FROM obligations WHERE client_id = ${world.clientId} GROUP BY status
    UNION ALL SELECT 'portions ' || status, count(*) FROM performance_portions WHERE client_id = ${world.clientId}
      GROUP BY status
    UNION ALL SELECT 'payments ' || status || coalesce(' ' || review, ''), count(*) FROM payments
      WHERE client_id = ${world.clientId} GROUP BY status, review`);
  for (const [what, n] of rows) tally[what] = (tally[what] ?? 0) + n;
}

/** Run one case on `env`, checking the ledger after every step; throws at the first broken rule. */
export async function runCase(env: TestEnv, payments: PaymentChain, ledgerCase: LedgerCase): Promise<void> {
  env.clock.freeze(START);
  const partnerId = `ledger-${++cases}`;
  const partner = await createPartner(env, {
    partnerId,
    contract: billingContract({
      carryPolicy: ledgerCase.policy,
      performanceFeePercent: Number(ledgerCase.percent),
    }),
  });
  await expectJson(await partner.call("POST", "/v1/users", { body: { externalUserId: "ana" }, headers: ik() }), 201);
  const clientId = await clientIdOf(env, "ana", partnerId);
  const world: World = {
    env,
    partnerId,
    clientId,
    partner,
    payments,
    positions: [],
    fundingKnownThrough: START,
    instructions: [],
    expected: {
      partnerId,
      clientId,
      policy: ledgerCase.policy,
      percent: ledgerCase.percent,
      justClosed: false,
      closedPositions: [],
      received: new Map(),
    },
  };
  for (const [index, step] of ledgerCase.steps.entries()) {
    world.expected.justClosed = false;
    await runStep(world, step);
    try {
      await checkLedger(env.deps.db.read, world.expected);
    } catch (error) {
      throw new Error(`after step ${index} ${JSON.stringify(step)}: ${(error as Error).message}`, { cause: error });
    }
  }
  await countCase(world);
}

async function runStep(world: World, step: Step): Promise<void> {
  const { env, clientId } = world;
  // Each fact a minute after the last: no two facts of a client share an instant.
  env.clock.freeze(env.clock.now() + MINUTE);
  const now = env.clock.now();
  const position = "position" in step ? world.positions[step.position % Math.max(1, world.positions.length)] : null;
  const iso = (at: number) => new Date(at).toISOString();
  switch (step.kind) {
    case "open": {
      const name = `p${world.positions.length}`;
      world.positions.push({
        name,
        openedAt: now,
        entryFeeCents: step.entryFeeCents,
        entryArrived: !step.entryLate,
        unitsLeft: ENTRY_UNITS,
        lastExitAt: -Infinity,
        resultCents: -step.entryFeeCents,
        funding: [],
      });
      await recordTrade(env, world.partnerId, clientId, "VENUE_A", {
        positionId: name,
        symbol: `${name.toUpperCase()}USDT`,
        entries: step.entryLate ? [] : [entryFill(name, step.entryFeeCents, now)],
        exits: [],
        open: true,
        fundingKnownThrough: iso(world.fundingKnownThrough),
      });
      return;
    }
    case "entryArrives": {
      if (!position || position.entryArrived) return;
      position.entryArrived = true;
      await lateFills(env, clientId, "VENUE_A", trade(position), "entry", [
        entryFill(position.name, position.entryFeeCents, position.openedAt),
      ]);
      return;
    }
    case "exit": {
      if (!position || position.unitsLeft === 0) return;
      const units = Math.min(step.units, position.unitsLeft);
      // Dated back up to `backHours` (a close the venue reported late), never before the entry.
      const at = Math.max(position.openedAt + 1, now - step.backHours * HOUR);
      position.unitsLeft -= units;
      position.resultCents += step.pnlCents - step.feeCents;
      position.lastExitAt = Math.max(position.lastExitAt, at);
      await lateFills(env, clientId, "VENUE_A", trade(position), "exit", [{
        tradeId: `${position.name}-x${now}`,
        quantity: String(units),
        realizedPnl: cents(step.pnlCents),
        fee: cents(step.feeCents),
        at: iso(at),
      }]);
      if (position.unitsLeft === 0) {
        await positionClosed(env, clientId, trade(position));
        const funded = position.funding.filter((payment) => payment.at <= position.lastExitAt);
        world.expected.closedPositions.push({
          positionId: `${clientId}-${position.name}`,
          netMicros: centsToMicros(position.resultCents + funded.reduce((sum, payment) => sum + payment.cents, 0)),
        });
      }
      return;
    }
    case "funding": {
      // Funding is paid on an open position whose entry the service has seen (its venue-time span).
      if (!position || position.unitsLeft === 0 || !position.entryArrived) return;
      position.funding.push({ cents: step.amountCents, at: now });
      await lateFunding(env, clientId, "VENUE_A", trade(position), [{ amount: cents(step.amountCents), at: iso(now) }]);
      return;
    }
    case "fundingRead":
      world.fundingKnownThrough = now;
      await fundingReadThrough(env, clientId, "VENUE_A", iso(now));
      return;
    case "advance":
      env.clock.freeze(now + step.hours * HOUR);
      return;
    case "close":
      if (step.atBoundary) env.clock.freeze(nextMonth(now) + 5 * MINUTE);
      await closePeriods(systemCtx(env, env.deps.db));
      world.expected.justClosed = true;
      return;
    case "closeRacing": {
      // A reconciliation reads the funding in the middle of the close (between its start and its pages).
      if (step.atBoundary) env.clock.freeze(nextMonth(now) + 5 * MINUTE);
      let raced = false;
      const db = interleavedWrites(env.deps.db, async () => {
        if (raced) return;
        raced = true;
        world.fundingKnownThrough = env.clock.now();
        await fundingReadThrough(env, clientId, "VENUE_A", iso(world.fundingKnownThrough));
      });
      await closePeriods(systemCtx(env, db));
      world.expected.justClosed = true;
      return;
    }
    default:
      await runPaymentStep(world, step);
  }
}

/** The start of the month after `at` (UTC): the next boundary of a MONTHLY contract. */
function nextMonth(at: number): number {
  const date = new Date(at);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

const trade = (position: PositionModel) => ({
  positionId: position.name,
  symbol: `${position.name.toUpperCase()}USDT`,
});

const entryFill = (name: string, feeCents: number, at: number) => ({
  tradeId: `${name}-e`,
  quantity: String(ENTRY_UNITS),
  fee: cents(feeCents),
  at: new Date(at).toISOString(),
});

export const systemCtx = (env: TestEnv, db: Database): Ctx => ({
  ...env.deps,
  db,
  actor: { kind: "system", job: "ledger-model" },
  requestId: "ledger-model",
});
