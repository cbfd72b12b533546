/**
 * The commercial cycle on the test clock, driven by the billing-cycle job:
 * a monthly subscription falls due, 24 hours of grace keep entries open,
 * then new entries are denied (views, engine) while nothing more is
 * announced until the obligation is settled.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { obligations } from "../../db/schema.ts";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { createPartner, expectJson, operator, partnerBody, type TestPartner } from "../_helpers/http.ts";
import {
  automationBody,
  automationOf,
  completeSetup,
  putAutomation,
  putSetup,
  readyClient,
} from "../setup/setup_fixture.ts";

async function cycleAt(env: TestEnv, at: string) {
  env.clock.freeze(Date.parse(at));
  return (await expectJson(await operator(env, "POST", "/operator/v1/jobs/billing-cycle/run"), 200)).summary;
}

async function venueACommercial(partner: TestPartner) {
  const view = await expectJson(await partner.call("GET", "/v1/users/ana/commercial"), 200);
  return view.providers.find((entry: { providerId: string }) => entry.providerId === "VENUE_A");
}

const signal = (signalId: string) => ({
  signalId,
  strategyId: "trend-follow",
  providerId: "VENUE_A",
  symbol: "BTCUSDT",
  side: "BUY",
  entryPrice: 65001,
  stopLossPrice: 63001,
  takeProfits: [{ price: 67001, share: 1 }],
  confidence: 80,
});

Deno.test("billing cycle: subscription due -> GRACE (entries allowed) -> SUSPENDED (entries denied, announced once) -> ACTIVE when settled", async () => {
  const { env, partner } = await readyClient();
  try {
    await expectJson(await putSetup(partner, completeSetup()), 200);
    await expectJson(await putAutomation(partner, automationBody()), 200);

    // Nov 2, 10:00: the month's subscription of the connected VENUE_A account (49.90 USDT, due in 5 days).
    assert.deepEqual(await cycleAt(env, "2026-11-02T10:00:00Z"), {
      subscriptions: 1,
      grace: 0,
      suspended: 0,
      reactivated: 0,
    });
    assert.equal((await cycleAt(env, "2026-11-02T10:01:00Z")).subscriptions, 0, "once a month");
    let billing = await expectJson(await partner.call("GET", "/v1/users/ana/billing"), 200);
    assert.equal(billing.status, "DUE");
    const [due] = billing.openObligations;
    assert.deepEqual(
      [due.source, due.reference, due.amountUsd, due.currency, due.effectiveStatus, due.dueAt, due.graceUntil],
      [
        "MONTHLY_SUBSCRIPTION",
        "2026-11",
        49.9,
        "USDT",
        "PENDING",
        "2026-11-07T10:00:00.000Z",
        "2026-11-08T10:00:00.000Z",
      ],
    );
    assert.deepEqual(billing.providerCurrencies, { VENUE_A: "USDT", VENUE_B: "USDC" });
    assert.equal(billing.policy.graceHours, 24);

    // Due: GRACE for 24 hours, entries still allowed.
    assert.equal((await cycleAt(env, "2026-11-07T10:00:00Z")).grace, 1);
    assert.deepEqual(await venueACommercial(partner), {
      providerId: "VENUE_A",
      allowed: true,
      state: "GRACE",
      reasonCode: "MONTHLY_SUBSCRIPTION_GRACE",
      graceUntil: "2026-11-08T10:00:00.000Z",
      source: "B2B_CONTRACT",
    });
    assert.equal((await automationOf(partner)).newEntries, "ALLOWED");

    // Grace over: SUSPENDED, new entries denied in the views and by the engine.
    assert.equal((await cycleAt(env, "2026-11-08T10:00:00Z")).suspended, 1);
    const suspended = await venueACommercial(partner);
    assert.deepEqual([suspended.state, suspended.allowed, suspended.reasonCode], [
      "SUSPENDED",
      false,
      "OBLIGATION_OVERDUE",
    ]);
    const automation = await automationOf(partner);
    assert.deepEqual([automation.newEntries, automation.blockReason], ["BLOCKED", "OBLIGATION_OVERDUE"]);
    billing = await expectJson(await partner.call("GET", "/v1/users/ana/billing"), 200);
    assert.deepEqual([billing.status, billing.newEntriesBlockedBy], ["SUSPENDED", ["OBLIGATION_OVERDUE"]]);
    assert.equal(billing.openObligations[0].blocksNewEntry, true);
    await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
    const fanout = await expectJson(await operator(env, "POST", "/operator/v1/signals", signal("sig-overdue")), 200);
    assert.deepEqual(fanout.refused, { OBLIGATION_OVERDUE: 1 });

    // Staying unpaid announces nothing more.
    assert.deepEqual(await cycleAt(env, "2026-11-09T10:00:00Z"), {
      subscriptions: 0,
      grace: 0,
      suspended: 0,
      reactivated: 0,
    });

    // Settled (payments, issue 14, write this through a confirmed transfer): ACTIVE again, announced once.
    await withTransaction(
      env.deps.db,
      (tx) =>
        tx.update(obligations).set({ status: "PAID", settledAt: env.clock.now() })
          .where(eq(obligations.obligationId, due.obligationId)),
    );
    assert.equal((await cycleAt(env, "2026-11-09T10:01:00Z")).reactivated, 1);
    assert.equal((await venueACommercial(partner)).state, "ACTIVE");
    const feed = await expectJson(await partner.call("GET", "/v1/events?limit=500"), 200);
    const types = feed.events.map((e: { type: string }) => e.type)
      .filter((type: string) => type.startsWith("commercial.") || type === "obligation.created");
    assert.deepEqual(types, [
      "obligation.created",
      "commercial.grace",
      "commercial.suspended",
      "commercial.reactivated",
    ]);
  } finally {
    await env.close();
  }
});

Deno.test("billing of a partner contracted for one provider names that provider's currency alone", async () => {
  const env = await startTestEnv();
  try {
    const body = partnerBody();
    const partner = await createPartner(env, { grants: { ...body.grants, providers: ["VENUE_A"] } });
    await expectJson(
      await partner.call("POST", "/v1/users", {
        body: { externalUserId: "solo" },
        headers: { "idempotency-key": "billing-one-provider" },
      }),
      201,
    );
    const billing = await expectJson(await partner.call("GET", "/v1/users/solo/billing"), 200);
    assert.deepEqual(billing.providerCurrencies, { VENUE_A: "USDT" });
  } finally {
    await env.close();
  }
});
