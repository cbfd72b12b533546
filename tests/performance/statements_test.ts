/**
 * Golden tests of performance accounting: trades recorded as venue facts,
 * periods closed by the period-close job on the test clock, every figure
 * checked against values computed by hand in the comments.
 */
import assert from "node:assert/strict";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { createPartner, expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import { ik } from "../setup/setup_fixture.ts";
import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { obligations } from "../../db/schema.ts";
import {
  billingContract,
  clientIdOf,
  fundingReadThrough,
  lateFills,
  recordTrade,
  type TradeFacts,
} from "./trade_fixture.ts";

const contract = billingContract;

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
      [
        venueA.netPerformanceUsd,
        venueA.estimatedPerformanceFeeUsd,
        venueA.performanceFeeUsd,
        venueA.pendingPortions,
        venueA.attributionPendingFacts,
      ],
      [13.4, 2.68, 0, 1, 1],
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

Deno.test("performance: late facts adjust closed periods without double charging (new obligation, reductions, credit), CARRY periods after recalculated", async () => {
  const env = await startTestEnv();
  try {
    const { partner, clientId } = await partnerWithClient(env, "late", { carryPolicy: "CARRY" });
    const trade = (facts: TradeFacts) => recordTrade(env, partner.partnerId, clientId, "VENUE_A", facts);
    const noFees = (positionId: string, exitAt: string, pnl: string): TradeFacts => ({
      positionId,
      entries: [{ tradeId: `${positionId}-e`, quantity: "0.01", fee: "0", at: "2026-11-03T00:00:00Z" }],
      exits: [{ tradeId: `${positionId}-x`, quantity: "0.01", realizedPnl: pnl, fee: "0", at: exitAt }],
    });
    await trade(noFees("p1", "2026-11-05T00:00:00Z", "13.4"));
    // Closed on Nov 20 while funding was read only up to Nov 15: pending at the close.
    await trade({ ...noFees("p6", "2026-11-20T00:00:00Z", "2"), fundingKnownThrough: "2026-11-15T00:00:00Z" });
    // Closed on Nov 21 with a loss of 20, its entry fill not reported yet: pending too.
    await trade({
      ...noFees("p7", "2026-11-21T00:00:00Z", "-20"),
      entries: [],
      fundingKnownThrough: "2026-11-15T00:00:00Z",
    });
    await closeAt(env, "2026-12-01T00:05:00Z");
    const [o1] = await obligationsOf(partner);
    assert.equal(o1.amountUsd, 2.68);

    // The funding read catches up: p6 confirmed, +2 -> the fee grows by 0.40, a new obligation; nothing else is charged.
    await fundingReadThrough(env, clientId, "VENUE_A", "2100-01-01T00:00:00Z");
    assert.equal((await closeAt(env, "2026-12-02T00:00:00Z")).adjustments, 1);
    let [adjustment] = await statementsOf(partner);
    assert.deepEqual(
      [adjustment.kind, adjustment.reason, adjustment.netPerformanceUsd, adjustment.performanceFeeUsd],
      ["ADJUSTMENT", "LATE_FACTS", 2, 0.4],
    );
    const [o3] = await obligationsOf(partner);
    assert.deepEqual([o3.amountUsd, o3.dueAt], [0.4, "2026-12-07T00:00:00.000Z"], "due 5 days after the adjustment");
    assert.equal(adjustment.obligationId, o3.obligationId);

    // December: +5, fee 1.00.
    await trade(noFees("p3", "2026-12-10T00:00:00Z", "5"));
    await closeAt(env, "2027-01-01T00:05:00Z");

    // p7's entry arrives: -20 in November. Nov is restated 13.4 + 2 - 20 = -4.6: fee 3.08 -> 0, the two open
    // November obligations (2.68 and 0.40) are cancelled; the carry out -4.6 reaches December: 5 - 4.6 = 0.4,
    // fee 1.00 -> 0.08, December's obligation reduced by 0.92.
    await lateFills(env, clientId, "VENUE_A", { positionId: "p7" }, "entry", [
      { tradeId: "p7-e", quantity: "0.01", fee: "0", at: "2026-11-03T00:00:00Z" },
    ]);
    assert.equal((await closeAt(env, "2027-01-02T00:00:00Z")).adjustments, 2);
    const restated = await statementsOf(partner);
    const december = restated[0];
    const november = restated.find((row: { periodStart: string; netPerformanceUsd: number }) =>
      row.periodStart.startsWith("2026-11") && row.netPerformanceUsd === -20
    );
    assert.deepEqual(
      [november.reason, november.netPerformanceUsd, november.performanceFeeUsd, november.carryOutUsd],
      ["LATE_FACTS", -20, -3.08, -4.6],
    );
    assert.deepEqual(
      [december.reason, december.carryInUsd, december.performanceFeeUsd, december.creditUsd],
      ["CARRY_RECALCULATED", -4.6, -0.92, 0],
    );
    const standing = (await obligationsOf(partner)).map((o: Record<string, unknown>) => [o.amountUsd, o.status]);
    assert.deepEqual(standing, [[0.08, "OPEN"], [0, "CANCELLED"], [0, "CANCELLED"]]);

    // December's obligation is paid (payments: issue 14 writes this through a confirmed transfer). A late loss of 1
    // in December lowers its fee by 0.08 with nothing open to reduce: 0.08 of credit.
    await withTransaction(
      env.deps.db,
      (tx) =>
        tx.update(obligations).set({ status: "PAID", settledAt: env.clock.now() })
          .where(eq(obligations.status, "OPEN")),
    );
    await trade({ ...noFees("p8", "2026-12-20T00:00:00Z", "-1"), entries: [] });
    await lateFills(env, clientId, "VENUE_A", { positionId: "p8" }, "entry", [
      { tradeId: "p8-e", quantity: "0.01", fee: "0", at: "2026-12-19T00:00:00Z" },
    ]);
    await closeAt(env, "2027-01-03T00:00:00Z");
    [adjustment] = await statementsOf(partner);
    assert.deepEqual([adjustment.performanceFeeUsd, adjustment.creditUsd], [-0.08, 0.08]);

    // January: +1 with carry in -0.6 -> fee 0.08, paid entirely by the credit: no obligation.
    await trade(noFees("p9", "2027-01-10T00:00:00Z", "1"));
    await closeAt(env, "2027-02-01T00:05:00Z");
    const [january] = await statementsOf(partner);
    assert.deepEqual(
      [january.kind, january.carryInUsd, january.performanceFeeUsd, january.creditUsd, january.obligationId],
      ["ORIGINAL", -0.6, 0.08, 0.08, null],
    );

    // Per period, ORIGINAL plus ADJUSTMENTs is what the final facts give: Nov 0, Dec 0, Jan 0.08.
    const byPeriod = new Map<string, number>();
    for (const statement of await statementsOf(partner)) {
      byPeriod.set(
        statement.periodStart,
        (byPeriod.get(statement.periodStart) ?? 0) + statement.performanceFeeUsd * 100,
      );
    }
    assert.deepEqual([...byPeriod.values()].map(Math.round), [8, 0, 0]);
    const feed = await expectJson(await partner.call("GET", "/v1/events?type=statement.adjusted"), 200);
    assert.equal(feed.events.length, 4);
  } finally {
    await env.close();
  }
});

Deno.test("performance: a WEEKLY->MONTHLY switch, a trade spanning the boundary, VENUE_B builder fee apart, half a cent rounded up", async () => {
  const env = await startTestEnv();
  try {
    const { partner, clientId } = await partnerWithClient(env, "switch", { performancePeriod: "WEEKLY" });
    // Scheduled on Wednesday: the week closes as a week, the new period runs Monday Nov 9 to Dec 1.
    env.clock.freeze(Date.parse("2026-11-04T12:00:00Z"));
    await expectJson(
      await operator(env, "PUT", "/operator/v1/partners/switch/contract", contract({ performancePeriod: "MONTHLY" })),
      200,
    );
    // VENUE_B, closed PnL 10 and 0.025; fees 0.3 (entry) and 0.5 (exit) include builder fees 0.1 and 0.2:
    // venue fees 0.2 + 0.3 = 0.5, net 10 + 0.025 - 0.5 = 9.525, fee 1.905 -> 1.91; builder fees 0.3 kept apart.
    await recordTrade(env, partner.partnerId, clientId, "VENUE_B", {
      positionId: "b1",
      entries: [{ tradeId: "b1-e", quantity: "1", fee: "0.3", builderFee: "0.1", at: "2026-11-05T00:00:00Z" }],
      exits: [
        {
          tradeId: "b1-x1",
          quantity: "0.5",
          realizedPnl: "10",
          fee: "0.5",
          builderFee: "0.2",
          at: "2026-11-06T00:00:00Z",
        },
        {
          tradeId: "b1-x2",
          quantity: "0.5",
          realizedPnl: "0.025",
          fee: "0",
          builderFee: "0",
          at: "2026-11-07T00:00:00Z",
        },
      ],
    });
    // VENUE_A across the boundary: entry 0.01 (fee 0.1); 0.004 closed on Sunday at -4 (fee 0.04):
    // -4 - 0.04 - 0.04 = -4.08 in the week; funding -0.02 on Monday and 0.006 closed at +6 (fee 0.06) on Tuesday:
    // 6 - 0.06 - 0.06 - 0.02 = 5.86 in the new period, less the carried -4.08 = 1.78 -> fee 0.356 -> 0.36.
    await recordTrade(env, partner.partnerId, clientId, "VENUE_A", {
      positionId: "a1",
      entries: [{ tradeId: "a1-e", quantity: "0.01", fee: "0.1", at: "2026-11-08T10:00:00Z" }],
      exits: [
        { tradeId: "a1-x1", quantity: "0.004", realizedPnl: "-4", fee: "0.04", at: "2026-11-08T22:00:00Z" },
        { tradeId: "a1-x2", quantity: "0.006", realizedPnl: "6", fee: "0.06", at: "2026-11-10T00:00:00Z" },
      ],
      funding: [{ amount: "-0.02", at: "2026-11-09T08:00:00Z" }],
    });
    await closeAt(env, "2026-12-01T00:05:00Z");
    const rows = (await statementsOf(partner)).reverse();
    const view = (s: Record<string, unknown>) => [
      s.providerId,
      s.period,
      s.contractVersion,
      s.periodStart,
      s.periodEnd,
      s.netPerformanceUsd,
      s.carryInUsd,
      s.performanceFeeUsd,
      s.currency,
    ];
    assert.deepEqual(rows.map(view), [
      ["VENUE_A", "WEEKLY", 1, "2026-11-02T10:00:00.000Z", "2026-11-09T00:00:00.000Z", -4.08, 0, 0, "USDT"],
      ["VENUE_B", "WEEKLY", 1, "2026-11-02T10:00:00.000Z", "2026-11-09T00:00:00.000Z", 9.525, 0, 1.91, "USDC"],
      ["VENUE_A", "MONTHLY", 2, "2026-11-09T00:00:00.000Z", "2026-12-01T00:00:00.000Z", 5.86, -4.08, 0.36, "USDT"],
    ]);
    const venueB = rows[1];
    assert.deepEqual(venueB.builderFees, { role: "FINAUTON_REVENUE_SEPARATE", builderFeesUsd: 0.3 });
    assert.deepEqual(
      [venueB.auditComponents.providerRealizedPnlUsd, venueB.auditComponents.venueFeesUsd],
      [10.025, 0.5],
    );
    const currencies = (await obligationsOf(partner)).map((o: Record<string, unknown>) => [o.amountUsd, o.currency]);
    assert.deepEqual(currencies, [[0.36, "USDT"], [1.91, "USDC"]]);
  } finally {
    await env.close();
  }
});
