/**
 * Contract values the money rules can carry: a subscription is charged in
 * cents, a performance fee is a fraction with at most 6 decimals, stored as
 * the exact decimal the operator sent (never exponent notation), and the
 * period close computes a fee from every stored value.
 */
import assert from "node:assert/strict";
import { and, eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { contractVersions } from "../../db/schema.ts";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { migratedBefore, seedPartner } from "../_helpers/migrations.ts";
import { createPartner, expectError, expectJson, operator, partnerBody } from "../_helpers/http.ts";
import { ik } from "../setup/setup_fixture.ts";
import { billingContract, clientIdOf, recordTrade } from "../performance/trade_fixture.ts";

async function storedPercents(env: TestEnv, partnerId: string) {
  const rows = await env.deps.db.read.select({ percent: contractVersions.performanceFeePercent })
    .from(contractVersions).where(eq(contractVersions.partnerId, partnerId)).orderBy(contractVersions.version);
  return rows.map((row) => row.percent);
}

/** A partner with client ana, who made `pnl` USD on one November round trip with no fees. */
async function partnerWithProfit(env: TestEnv, partnerId: string, contract: Record<string, unknown>, pnl: string) {
  const partner = await createPartner(env, { partnerId, contract: billingContract(contract) });
  await expectJson(await partner.call("POST", "/v1/users", { body: { externalUserId: "ana" }, headers: ik() }), 201);
  await recordTrade(env, partnerId, await clientIdOf(env, "ana", partnerId), "VENUE_A", {
    positionId: "p1",
    entries: [{ tradeId: "e", quantity: "0.01", fee: "0", at: "2026-11-03T00:00:00Z" }],
    exits: [{ tradeId: "x", quantity: "0.01", realizedPnl: pnl, fee: "0", at: "2026-11-04T00:00:00Z" }],
  });
  return partner;
}

async function closeNovember(env: TestEnv) {
  env.clock.freeze(Date.parse("2026-12-01T00:05:00Z"));
  return (await expectJson(await operator(env, "POST", "/operator/v1/jobs/period-close/run"), 200)).summary;
}

Deno.test("operator contract: a subscription with more than 2 decimals (49.999) or above 100000 USD is refused with 400 and nothing is stored", async () => {
  const env = await startTestEnv();
  try {
    const terms = (subscriptionMonthlyUsd: number) => ({ ...partnerBody().contract, subscriptionMonthlyUsd });
    const refused = await expectError(
      await operator(
        env,
        "POST",
        "/operator/v1/partners",
        partnerBody({ partnerId: "cents", contract: terms(49.999) }),
      ),
      400,
      "VALIDATION_ERROR",
    );
    assert.match(refused.error.message, /contract\.subscriptionMonthlyUsd: .*2 casas decimais/);
    await expectError(await operator(env, "GET", "/operator/v1/partners/cents"), 404, "NOT_FOUND");

    await createPartner(env, { partnerId: "acme" });
    for (const value of [49.999, 0.001, 100_000.01, -1]) {
      const answer = await expectError(
        await operator(env, "PUT", "/operator/v1/partners/acme/contract", terms(value)),
        400,
        "VALIDATION_ERROR",
      );
      assert.match(answer.error.message, /subscriptionMonthlyUsd/);
    }
    const acme = await expectJson(await operator(env, "GET", "/operator/v1/partners/acme"), 200);
    assert.equal(acme.partner.scheduledContract, null);
    assert.deepEqual(await storedPercents(env, "acme"), ["0.2"]);

    const accepted = await expectJson(
      await operator(env, "PUT", "/operator/v1/partners/acme/contract", terms(100_000)),
      200,
    );
    assert.equal(accepted.partner.scheduledContract.subscriptionMonthlyUsd, 100_000);
  } finally {
    await env.close();
  }
});

Deno.test('operator contract: a fee percent with more than 6 decimals (1e-7) is refused; 0.000001 is stored as "0.000001" and the period close charges it', async () => {
  const env = await startTestEnv();
  try {
    const terms = (performanceFeePercent: number) => ({ ...partnerBody().contract, performanceFeePercent });
    const refused = await expectError(
      await operator(env, "POST", "/operator/v1/partners", partnerBody({ partnerId: "tiny", contract: terms(1e-7) })),
      400,
      "VALIDATION_ERROR",
    );
    assert.match(refused.error.message, /contract\.performanceFeePercent: .*6 casas decimais/);
    await expectError(await operator(env, "GET", "/operator/v1/partners/tiny"), 404, "NOT_FOUND");
    await createPartner(env, { partnerId: "acme" });
    for (const value of [1e-7, 0.2000001, 1.5, -0.1]) {
      await expectError(
        await operator(env, "PUT", "/operator/v1/partners/acme/contract", terms(value)),
        400,
        "VALIDATION_ERROR",
      );
    }
    assert.deepEqual(await storedPercents(env, "acme"), ["0.2"]);

    // 10000 USD of profit at 0.0001 %: a fee of exactly one cent.
    const partner = await partnerWithProfit(env, "micro", { performanceFeePercent: 0.000001 }, "10000");
    assert.deepEqual(await storedPercents(env, "micro"), ["0.000001"]);
    const shown = await expectJson(await operator(env, "GET", "/operator/v1/partners/micro"), 200);
    assert.equal(shown.partner.contract.performanceFeePercent, 0.000001);
    const closed = await closeNovember(env);
    assert.equal(closed.statements, 1);
    const { statements } = await expectJson(await partner.call("GET", "/v1/users/ana/statements"), 200);
    assert.deepEqual(
      statements.map((
        s: Record<string, number>,
      ) => [s.netPerformanceUsd, s.performanceFeePercent, s.performanceFeeUsd]),
      [[10000, 0.000001, 0.01]],
    );
  } finally {
    await env.close();
  }
});

Deno.test('period close: a contract stored with an exponent-form fee percent ("1e-7", as earlier versions wrote it) closes with the exact fee instead of a 500', async () => {
  const env = await startTestEnv();
  try {
    // 100000 USD of profit at 1e-7: one cent.
    const partner = await partnerWithProfit(env, "legacy", {}, "100000");
    await withTransaction(env.deps.db, (tx) =>
      tx.update(contractVersions).set({ performanceFeePercent: "1e-7" })
        .where(and(eq(contractVersions.partnerId, "legacy"), eq(contractVersions.version, 1))));
    const closed = await closeNovember(env);
    assert.equal(closed.statements, 1);
    const { statements } = await expectJson(await partner.call("GET", "/v1/users/ana/statements"), 200);
    assert.deepEqual(statements.map((s: Record<string, number>) => s.performanceFeeUsd), [0.01]);
  } finally {
    await env.close();
  }
});

Deno.test("the plain fee percents migration rewrites exponent-form percents as exact decimals", async () => {
  const { db, migrateRest } = await migratedBefore("UPDATE `contract_versions` SET `performance_fee_percent`");
  try {
    await seedPartner(db);
    const written = ["1e-7", "1.5e-7", "5e-324", "0.2", "0", "1", "0.000001"];
    for (const [version, percent] of written.entries()) {
      await db.execute({
        sql: "INSERT INTO contract_versions (partner_id, version, effective_from, suspended, " +
          "subscription_monthly_micros, subscription_providers, currency, performance_fee_percent, " +
          "performance_period, carry_policy, due_days, created_at) " +
          "VALUES ('p', ?, 0, 0, 0, '[]', 'USDT', ?, 'MONTHLY', 'CARRY', 5, 0)",
        args: [version + 1, percent],
      });
    }
    await migrateRest();
    const rows = await db.execute("SELECT performance_fee_percent FROM contract_versions ORDER BY version");
    assert.deepEqual(rows.rows.map((row) => row.performance_fee_percent), [
      "0.0000001",
      "0.00000015",
      `0.${"0".repeat(323)}5`,
      "0.2",
      "0",
      "1",
      "0.000001",
    ]);
  } finally {
    db.close();
  }
});
