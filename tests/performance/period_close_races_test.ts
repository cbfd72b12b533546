/**
 * The period close under what runs beside it: a result confirmed while a
 * page is being stated (the reconcile job runs every minute) is either in
 * that statement's sums or left for an ADJUSTMENT, never marked counted
 * without being summed; and one partner whose close fails never stops the
 * close of the others.
 */
import assert from "node:assert/strict";
import { eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { withTransaction } from "../../db/client.ts";
import { contractVersions, periodCloses } from "../../db/schema.ts";
import type { Ctx } from "../../domain/context.ts";
import { adjustStatedPeriods } from "../../domain/performance/adjust_periods.ts";
import { closePeriods } from "../../domain/performance/close_periods.ts";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { interleavedWrites } from "../_helpers/interleaved_writes.ts";
import { createPartner, expectJson } from "../_helpers/http.ts";
import { ik } from "../setup/setup_fixture.ts";
import {
  billingContract,
  clientIdOf,
  fundingReadThrough,
  lateFills,
  recordTrade,
  type TradeFacts,
} from "./trade_fixture.ts";

async function partnerWithClient(env: TestEnv, partnerId: string) {
  const partner = await createPartner(env, { partnerId, contract: billingContract() });
  await expectJson(await partner.call("POST", "/v1/users", { body: { externalUserId: "ana" }, headers: ik() }), 201);
  return { partner, clientId: await clientIdOf(env, "ana", partnerId) };
}

function noFees(positionId: string, exitAt: string, pnl: string): TradeFacts {
  return {
    positionId,
    entries: [{ tradeId: `${positionId}-e`, quantity: "0.01", fee: "0", at: "2026-11-03T00:00:00Z" }],
    exits: [{ tradeId: `${positionId}-x`, quantity: "0.01", realizedPnl: pnl, fee: "0", at: exitAt }],
  };
}

const closeCtx = (env: TestEnv, db: Database): Ctx => ({
  ...env.deps,
  db,
  actor: { kind: "system", job: "period-close" },
  requestId: "test",
});

Deno.test("period close: a result confirmed while its page is being stated is summed by the statement that counts it", async () => {
  const env = await startTestEnv();
  try {
    const { partner, clientId } = await partnerWithClient(env, "race");
    await recordTrade(env, partner.partnerId, clientId, "VENUE_A", noFees("p1", "2026-11-05T00:00:00Z", "10"));
    // Closed on Nov 20 while funding was read only up to Nov 15: pending when the close starts.
    await recordTrade(env, partner.partnerId, clientId, "VENUE_A", {
      ...noFees("p2", "2026-11-20T00:00:00Z", "100"),
      fundingKnownThrough: "2026-11-15T00:00:00Z",
    });
    env.clock.freeze(Date.parse("2026-12-01T00:05:00Z"));
    let confirmed = false;
    const db = interleavedWrites(env.deps.db, async () => {
      if (confirmed) return;
      confirmed = true;
      // A reconciliation reads the funding and confirms p2 between the close's start and its page.
      await fundingReadThrough(env, clientId, "VENUE_A", "2100-01-01T00:00:00Z");
    });
    const summary = await closePeriods(closeCtx(env, db));
    assert.equal(confirmed, true, "the reconciliation ran inside the close");
    const late = await closePeriods(closeCtx(env, env.deps.db));
    const statements = (await expectJson(await partner.call("GET", "/v1/users/ana/statements"), 200)).statements;
    // Whichever statement counts p2, the period's figures are 10 + 100 = 110 and its fee 22.00, charged once.
    const net = statements.reduce((sum: number, s: { netPerformanceUsd: number }) => sum + s.netPerformanceUsd, 0);
    const fee = statements.reduce((sum: number, s: { performanceFeeUsd: number }) => sum + s.performanceFeeUsd, 0);
    assert.deepEqual([net, fee], [110, 22], JSON.stringify({ summary, late, statements }));
    const obligations = (await expectJson(await partner.call("GET", "/v1/users/ana/obligations"), 200)).obligations;
    assert.equal(obligations.reduce((sum: number, o: { amountUsd: number }) => sum + o.amountUsd, 0), 22);
  } finally {
    await env.close();
  }
});

Deno.test("period close: a partner whose close fails, or a pair whose adjustment fails, is reported and skipped; the others still close", async () => {
  const env = await startTestEnv();
  const breakContract = (partnerId: string) =>
    // A contract row no close can use (written before values were validated, or by hand).
    withTransaction(env.deps.db, (tx) =>
      tx.update(contractVersions).set({ performanceFeePercent: sql`'not a number'` })
        .where(eq(contractVersions.partnerId, partnerId)));
  try {
    const broken = await partnerWithClient(env, "broken");
    const lateBroken = await partnerWithClient(env, "late-broken");
    const healthy = await partnerWithClient(env, "healthy");
    for (const { partner, clientId } of [broken, lateBroken, healthy]) {
      await recordTrade(env, partner.partnerId, clientId, "VENUE_A", noFees("p1", "2026-11-05T00:00:00Z", "10"));
    }
    await breakContract("broken");
    env.clock.freeze(Date.parse("2026-12-01T00:05:00Z"));
    const summary = await closePeriods(closeCtx(env, env.deps.db));
    assert.deepEqual([summary.periodsClosed, summary.statements, summary.failedPartners], [2, 2, 1]);
    assert.ok(env.logs.some((line) => line.includes("period close failed") && line.includes("broken")));

    // Late facts of November for both closed partners; one of them can no longer be adjusted.
    for (const { partner, clientId } of [lateBroken, healthy]) {
      await recordTrade(env, partner.partnerId, clientId, "VENUE_A", noFees("p2", "2026-11-06T00:00:00Z", "5"));
    }
    await breakContract("late-broken");
    env.clock.freeze(Date.parse("2026-12-02T00:00:00Z"));
    const late = await closePeriods(closeCtx(env, env.deps.db));
    assert.deepEqual([late.adjustments, late.failedPairs], [1, 1]);
    const stated = await expectJson(await healthy.partner.call("GET", "/v1/users/ana/statements"), 200);
    assert.deepEqual(stated.statements.map((s: { performanceFeeUsd: number }) => s.performanceFeeUsd), [1, 2]);
  } finally {
    await env.close();
  }
});

Deno.test("performance: a closing fill reported late, dated before a confirmed close, takes no funding or entry fill that close already counted", async () => {
  const env = await startTestEnv();
  try {
    const { partner, clientId } = await partnerWithClient(env, "late-exit");
    // Entry 0.02 paying 0.2; funding -5 on Nov 4; the second half closes on Nov 10 (+10) and is confirmed:
    // 10 - 0.1 - 5 = 4.9, from 3 facts (its fill, the funding, the entry).
    await recordTrade(env, partner.partnerId, clientId, "VENUE_A", {
      positionId: "p1",
      entries: [{ tradeId: "e1", quantity: "0.02", fee: "0.2", at: "2026-11-03T00:00:00Z" }],
      exits: [{ tradeId: "x2", quantity: "0.01", realizedPnl: "10", fee: "0", at: "2026-11-10T00:00:00Z" }],
      funding: [{ amount: "-5", at: "2026-11-04T00:00:00Z" }],
    });
    env.clock.freeze(Date.parse("2026-12-01T00:05:00Z"));
    await closePeriods(closeCtx(env, env.deps.db));
    // The first half's close (Nov 8, +5) reaches the service late: 5 - 0.1 = 4.9, from 1 fact.
    await lateFills(env, clientId, "VENUE_A", { positionId: "p1" }, "exit", [
      { tradeId: "x1", quantity: "0.01", realizedPnl: "5", fee: "0", at: "2026-11-08T00:00:00Z" },
    ]);
    const summary = await closePeriods(closeCtx(env, env.deps.db));
    assert.equal(summary.adjustments, 1);
    const statements = (await expectJson(await partner.call("GET", "/v1/users/ana/statements"), 200)).statements;
    const total = (pick: (s: Record<string, number>) => number) =>
      Math.round(statements.reduce((sum: number, s: Record<string, number>) => sum + pick(s), 0) * 1e6) / 1e6;
    assert.deepEqual(
      [
        total((s) => s.netPerformanceUsd),
        total((s) => (s.auditComponents as unknown as { fundingUsd: number }).fundingUsd),
        total((s) => (s.auditComponents as unknown as { venueFeesUsd: number }).venueFeesUsd),
        total((s) => s.sourceFactsCount),
        total((s) => s.performanceFeeUsd),
      ],
      [9.8, -5, 0.2, 4, 1.96],
      "the funding paid once (-5), the entry fee once (0.2), four facts",
    );
  } finally {
    await env.close();
  }
});

Deno.test("period close: late facts of a partner wait while one of its periods is being closed, then adjust", async () => {
  const env = await startTestEnv();
  try {
    const { partner, clientId } = await partnerWithClient(env, "midway");
    await recordTrade(env, partner.partnerId, clientId, "VENUE_A", noFees("p1", "2026-11-05T00:00:00Z", "10"));
    env.clock.freeze(Date.parse("2026-12-01T00:05:00Z"));
    await closePeriods(closeCtx(env, env.deps.db));
    // December is being closed (another instance is at it, or a run failed part way); November gets a late fact.
    await withTransaction(env.deps.db, (tx) =>
      tx.insert(periodCloses).values({
        partnerId: "midway",
        periodStart: Date.parse("2026-12-01T00:00:00Z"),
        periodEnd: Date.parse("2027-01-01T00:00:00Z"),
        contractVersion: 1,
        status: "RUNNING",
        startedAt: env.clock.now(),
      }));
    await recordTrade(env, partner.partnerId, clientId, "VENUE_A", noFees("p2", "2026-11-06T00:00:00Z", "5"));
    assert.deepEqual(await adjustStatedPeriods(closeCtx(env, env.deps.db)), { adjustments: 0, failedPairs: 0 });
    await withTransaction(
      env.deps.db,
      (tx) => tx.update(periodCloses).set({ status: "DONE" }).where(eq(periodCloses.status, "RUNNING")),
    );
    assert.deepEqual(await adjustStatedPeriods(closeCtx(env, env.deps.db)), { adjustments: 1, failedPairs: 0 });
  } finally {
    await env.close();
  }
});
