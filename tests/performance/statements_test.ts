/**
 * Golden tests of performance accounting: trades recorded as venue facts,
 * periods closed by the period-close job on the test clock, every figure
 * checked against values computed by hand in the comments.
 */
import assert from "node:assert/strict";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { createPartner, expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import { ik } from "../setup/setup_fixture.ts";
import { clientIdOf, recordTrade, type TradeFacts } from "./trade_fixture.ts";

const contract = (overrides: Record<string, unknown> = {}) => ({
  subscriptionMonthlyUsd: 0,
  currency: "USDT",
  performanceFeePercent: 0.2,
  performancePeriod: "MONTHLY",
  carryPolicy: "CARRY",
  dueDays: 5,
  subscriptionProviders: [],
  ...overrides,
});

async function partnerWithClient(env: TestEnv, partnerId: string, terms: Record<string, unknown>) {
  const partner = await createPartner(env, { partnerId, contract: contract(terms) });
  await expectJson(await partner.call("POST", "/v1/users", { body: { externalUserId: "ana" }, headers: ik() }), 201);
  return { partner, clientId: await clientIdOf(env, "ana", partnerId) };
}

async function closeAt(env: TestEnv, at: string) {
  env.clock.freeze(Date.parse(at));
  return (await expectJson(await operator(env, "POST", "/operator/v1/jobs/period-close/run"), 200)).summary;
}

async function statementsOf(partner: TestPartner) {
  return (await expectJson(await partner.call("GET", "/v1/users/ana/statements"), 200)).statements;
}

async function obligationsOf(partner: TestPartner) {
  return (await expectJson(await partner.call("GET", "/v1/users/ana/obligations"), 200)).obligations;
}

/** A whole trade: one entry fill and one exit fill, fees in USDT. */
function roundTrip(positionId: string, entryAt: string, exitAt: string, pnl: string, fee: string): TradeFacts {
  return {
    positionId,
    entries: [{ tradeId: `${positionId}-e`, quantity: "0.01", fee, at: entryAt }],
    exits: [{ tradeId: `${positionId}-x`, quantity: "0.01", realizedPnl: pnl, fee, at: exitAt }],
  };
}

Deno.test("performance VENUE_A: canonical net from partial closes, funding and entry fees; pending and unattributed results wait; CARRY vs NO_CARRY over four periods", async () => {
  const env = await startTestEnv();
  try {
    const carry = await partnerWithClient(env, "carry", { carryPolicy: "CARRY" });
    const noCarry = await partnerWithClient(env, "nocarry", { carryPolicy: "NO_CARRY" });
    for (const { partner, clientId } of [carry, noCarry]) {
      const trade = (facts: TradeFacts) => recordTrade(env, partner.partnerId, clientId, "VENUE_A", facts);
      // Entry 0.010 paying 0.26; a target closes 0.004 (PnL 8, fee 0.104), the rest 0.006 (PnL 6, fee 0.156).
      // Funding -0.05 before the first close, -0.03 between the closes.
      // Portion 1: 8 - (0.104 + 0.26 x 0.4) - 0.05 = 7.742; portion 2: 6 - (0.156 + 0.156) - 0.03 = 5.658.
      await trade({
        positionId: "p1",
        entries: [{ tradeId: "1", quantity: "0.010", fee: "0.26", at: "2026-11-03T12:00:00Z" }],
        exits: [
          { tradeId: "2", quantity: "0.004", realizedPnl: "8", fee: "0.104", at: "2026-11-05T12:00:00Z" },
          { tradeId: "3", quantity: "0.006", realizedPnl: "6", fee: "0.156", at: "2026-11-06T12:00:00Z" },
        ],
        funding: [{ amount: "-0.05", at: "2026-11-04T00:00:00Z" }, { amount: "-0.03", at: "2026-11-06T00:00:00Z" }],
      });
      // A commission in BNB has no USD value: the portion waits and is not billed.
      await trade({
        positionId: "p2",
        entries: [{ tradeId: "4", quantity: "0.001", fee: "0.00002", feeAsset: "BNB", at: "2026-11-10T00:00:00Z" }],
        exits: [{ tradeId: "5", quantity: "0.001", realizedPnl: "1", fee: "0.026", at: "2026-11-11T00:00:00Z" }],
        // A fill of an order the service never placed: not attributable, never performance.
        foreign: [{ tradeId: "6", quantity: "0.1", realizedPnl: "100", fee: "1", at: "2026-11-12T00:00:00Z" }],
      });
    }

    const live = await expectJson(await carry.partner.call("GET", "/v1/users/ana/performance"), 200);
    assert.equal(live.current.status, "LIVE_ESTIMATE");
    assert.equal(live.current.periodStart, "2026-11-02T10:00:00.000Z", "the first period starts with the contract");
    assert.equal(live.current.periodEnd, "2026-12-01T00:00:00.000Z");
    const venueA = live.current.providers.find((p: { providerId: string }) => p.providerId === "VENUE_A");
    assert.deepEqual(
      [venueA.netPerformanceUsd, venueA.estimatedPerformanceFeeUsd, venueA.performanceFeeUsd, venueA.pendingPortions],
      [13.4, 2.68, 0, 1],
    );
    assert.deepEqual(venueA.auditComponents, {
      role: "AUDIT_EVIDENCE",
      providerRealizedPnlUsd: 14,
      venueFeesUsd: 0.52,
      fundingUsd: -0.08,
    });

    // December: a loss of 5 with 0.25 + 0.25 in fees (-5.5). January: +3 less 0.1 + 0.1 (2.8). February: +10 less 0.4 (9.6).
    for (const { partner, clientId } of [carry, noCarry]) {
      const trade = (facts: TradeFacts) => recordTrade(env, partner.partnerId, clientId, "VENUE_A", facts);
      await trade(roundTrip("p3", "2026-12-03T00:00:00Z", "2026-12-04T00:00:00Z", "-5", "0.25"));
      await trade(roundTrip("p4", "2027-01-03T00:00:00Z", "2027-01-04T00:00:00Z", "3", "0.1"));
      await trade(roundTrip("p5", "2027-02-03T00:00:00Z", "2027-02-04T00:00:00Z", "10", "0.2"));
    }
    const closed = await closeAt(env, "2027-03-01T00:05:00Z");
    assert.deepEqual([closed.periodsClosed, closed.statements, closed.adjustments], [8, 8, 0]);

    // CARRY: Nov 13.4 -> fee 2.68; Dec -5.5 -> carry out -5.5; Jan 2.8 - 5.5 = -2.7 -> carry out -2.7;
    // Feb 9.6 - 2.7 = 6.9 -> fee 1.38. NO_CARRY: 2.68, 0, 0.56, 1.92.
    const figures = (rows: Record<string, number>[]) =>
      rows.map((
        s,
      ) => [s.netPerformanceUsd, s.carryInUsd, s.carryOutUsd, s.chargeablePerformanceUsd, s.performanceFeeUsd])
        .reverse();
    assert.deepEqual(figures(await statementsOf(carry.partner)), [
      [13.4, 0, 0, 13.4, 2.68],
      [-5.5, 0, -5.5, 0, 0],
      [2.8, -5.5, -2.7, 0, 0],
      [9.6, -2.7, 0, 6.9, 1.38],
    ]);
    assert.deepEqual(figures(await statementsOf(noCarry.partner)), [
      [13.4, 0, 0, 13.4, 2.68],
      [-5.5, 0, 0, 0, 0],
      [2.8, 0, 0, 2.8, 0.56],
      [9.6, 0, 0, 9.6, 1.92],
    ]);
    const [november] = (await statementsOf(carry.partner)).reverse();
    assert.equal(november.kind, "ORIGINAL");
    assert.equal(november.status, "CLOSED");
    assert.equal(november.reason, "PERIOD_CLOSED_WITH_PENDING_PORTIONS");
    assert.equal(november.sourceFactsCount, 5, "the entry, two closes and two funding payments");
    assert.equal(november.currency, "USDT");
    assert.deepEqual([november.contractVersion, november.period, november.policy], [1, "MONTHLY", "CARRY"]);
    assert.deepEqual(
      [november.periodStart, november.periodEnd],
      ["2026-11-02T10:00:00.000Z", "2026-12-01T00:00:00.000Z"],
    );

    // Obligations: November's fee due 5 days after the period, in USDT, grace 24 h later; then February's.
    const obligations = await obligationsOf(carry.partner);
    assert.deepEqual(
      obligations.map((o: Record<string, unknown>) => [o.source, o.amountUsd, o.currency, o.dueAt, o.graceUntil]),
      [
        ["MONTHLY_PERFORMANCE_FEE", 1.38, "USDT", "2027-03-06T00:00:00.000Z", "2027-03-07T00:00:00.000Z"],
        ["MONTHLY_PERFORMANCE_FEE", 2.68, "USDT", "2026-12-06T00:00:00.000Z", "2026-12-07T00:00:00.000Z"],
      ],
    );
    assert.equal(november.obligationId, obligations[1].obligationId);

    // Closing again states nothing twice.
    const again = await closeAt(env, "2027-03-01T00:10:00Z");
    assert.deepEqual([again.periodsClosed, again.statements, again.adjustments], [0, 0, 0]);
    const feed = await expectJson(await carry.partner.call("GET", "/v1/events?limit=500"), 200);
    const count = (type: string) => feed.events.filter((e: { type: string }) => e.type === type).length;
    assert.deepEqual([count("statement.created"), count("obligation.created")], [4, 2]);
  } finally {
    await env.close();
  }
});
