/**
 * Property: whatever order facts arrive in, the fees stated for a period
 * (its ORIGINAL plus every ADJUSTMENT) add up to the fee computed once over
 * the final facts, and so does the carry — nothing is charged twice or lost.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { START, startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectJson, operator } from "../_helpers/http.ts";
import { ik } from "../setup/setup_fixture.ts";
import { type CarryPolicy, NO_SUMS, periodFigures } from "../../domain/performance/figures.ts";
import { billingContract, clientIdOf, lateFills, recordTrade } from "./trade_fixture.ts";

const PERIODS = ["2026-11-02T10:00:00.000Z", "2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"];
const CLOSES = ["2026-12-01T00:05:00Z", "2027-01-01T00:05:00Z", "2027-02-01T00:05:00Z"];

const tradeArbitrary = fc.record({
  period: fc.integer({ min: 0, max: 2 }),
  /** PnL and fees in cents. */
  pnlCents: fc.integer({ min: -5_000, max: 5_000 }),
  feeCents: fc.integer({ min: 0, max: 300 }),
  /** The close after which its entry fill arrives (0: on time; 1-3: after that many closes). */
  lateBy: fc.integer({ min: 0, max: 3 }),
});

Deno.test("performance: for random facts arriving late in random order, stated fees equal the fee over the final facts", async () => {
  const env = await startTestEnv();
  let run = 0;
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.array(tradeArbitrary, { minLength: 1, maxLength: 8 }),
        fc.constantFrom<CarryPolicy>("CARRY", "NO_CARRY"),
        async (trades, carryPolicy) => {
          run++;
          env.clock.freeze(START);
          const partnerId = `prop${run}`;
          const partner = await createPartner(env, {
            partnerId,
            contract: billingContract({ carryPolicy }),
          });
          await expectJson(
            await partner.call("POST", "/v1/users", { body: { externalUserId: "ana" }, headers: ik() }),
            201,
          );
          const clientId = await clientIdOf(env, "ana", partnerId);
          const entry = (index: number, at: string) => ({
            tradeId: `e${index}`,
            quantity: "1",
            fee: (trades[index].feeCents / 100).toFixed(2),
            at,
          });
          for (const [index, trade] of trades.entries()) {
            const day = new Date(Date.parse(PERIODS[trade.period]) + 86_400_000 * (1 + index));
            await recordTrade(env, partnerId, clientId, "VENUE_A", {
              positionId: `t${index}`,
              entries: trade.lateBy ? [] : [entry(index, day.toISOString())],
              exits: [{
                tradeId: `x${index}`,
                quantity: "1",
                realizedPnl: (trade.pnlCents / 100).toFixed(2),
                fee: (trade.feeCents / 100).toFixed(2),
                at: new Date(day.getTime() + 3_600_000).toISOString(),
              }],
            });
          }
          for (const [step, close] of CLOSES.entries()) {
            env.clock.freeze(Date.parse(close));
            await expectJson(await operator(env, "POST", "/operator/v1/jobs/period-close/run"), 200);
            for (const [index, trade] of trades.entries()) {
              if (trade.lateBy !== step + 1) continue;
              const day = new Date(Date.parse(PERIODS[trade.period]) + 86_400_000 * (1 + index));
              await lateFills(env, clientId, "VENUE_A", { positionId: `t${index}` }, "entry", [
                entry(index, day.toISOString()),
              ]);
            }
          }
          env.clock.freeze(Date.parse("2027-02-02T00:00:00Z"));
          await expectJson(await operator(env, "POST", "/operator/v1/jobs/period-close/run"), 200);

          // Once, over the final facts: each trade nets PnL less its two fees.
          let carry = 0;
          const expected = PERIODS.map((_, period) => {
            const net = trades.filter((t) => t.period === period)
              .reduce((sum, t) => sum + (t.pnlCents - 2 * t.feeCents) * 10_000, 0);
            const figures = periodFigures({ ...NO_SUMS, netMicros: net }, carry, carryPolicy, "0.2");
            carry = figures.carryOutMicros;
            return [Math.round(figures.feeMicros / 10_000), Math.round(figures.carryOutMicros / 10_000)];
          });
          const stated = (await expectJson(await partner.call("GET", "/v1/users/ana/statements"), 200)).statements;
          const actual = PERIODS.map((start) => {
            const rows = stated.filter((s: { periodStart: string }) => s.periodStart === start);
            const sum = (field: string) =>
              Math.round(rows.reduce((total: number, s: Record<string, number>) => total + s[field] * 100, 0));
            return [sum("performanceFeeUsd"), sum("carryOutUsd")];
          });
          // A period without any trade has no statement: zero fee and (its carry is the one before) nothing to add.
          assert.deepEqual(
            actual.map(([fee]) => fee),
            expected.map(([fee]) => fee),
            JSON.stringify({ trades, carryPolicy, stated: stated.length }),
          );
          const lastStated = actual.findLastIndex((_, period) =>
            stated.some((s: { periodStart: string }) => s.periodStart === PERIODS[period])
          );
          if (lastStated >= 0) assert.equal(actual[lastStated][1], expected[lastStated][1], "carry out");
        },
      ),
      { numRuns: 15, seed: 20261123 },
    );
  } finally {
    await env.close();
  }
});
