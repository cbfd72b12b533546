/**
 * A change that only makes an acknowledged setup safer keeps its acknowledgement (issue 28): the stored
 * acknowledgement moves to the new combination, so raising back, adding a flag or a mixed change still stop.
 */
import assert from "node:assert/strict";
import { expectError, expectJson, type TestPartner } from "../_helpers/http.ts";
import { completeSetup, ik, putSetup, readyClient } from "./setup_fixture.ts";

/**
 * Flags HIGH_LEVERAGE_LARGE_MARGIN_SHARE (leverage 10, margin 500 > 10 % of 600) and NO_AUTO_STOP_LOSS; still
 * both at margin 80 (800 > 600). Daily loss 50 is below LARGE_DAILY_LOSS's 20 % of 600 (120).
 */
const RISKY = completeSetup({
  leverage: 10,
  maxMarginPerTradeUsd: 500,
  maxDailyLossUsd: 50,
  capitalBase: 600,
  autoStopLoss: false,
});
const FLAGS = ["HIGH_LEVERAGE_LARGE_MARGIN_SHARE", "NO_AUTO_STOP_LOSS"];

/** RISKY stored with its preview's acknowledgement; answers the stored setup. */
async function acknowledgedRiskySetup(partner: TestPartner) {
  const { safety } = await expectJson(
    await partner.call("POST", "/v1/users/ana/setup/preview", { body: RISKY }),
    200,
  );
  assert.deepEqual(safety.flags, FLAGS);
  const stored = await expectJson(
    await putSetup(partner, { ...RISKY, riskAcknowledgement: { fingerprint: safety.fingerprint, codes: FLAGS } }),
    200,
  );
  assert.equal(stored.safety.acknowledged, true);
  return stored;
}

function putRisk(partner: TestPartner, limits: Record<string, unknown>) {
  return partner.call("PUT", "/v1/users/ana/risk", {
    body: { providerId: "VENUE_A", maxConcurrentTrades: 1, ...limits },
    headers: ik(),
  });
}

async function readSetup(partner: TestPartner) {
  return await expectJson(await partner.call("GET", "/v1/users/ana/setup?providerId=VENUE_A"), 200);
}

Deno.test("PUT /v1/users/:id/risk that only lowers the limits keeps the acknowledgement, without a new one", async () => {
  const { env, partner } = await readyClient();
  try {
    const before = await acknowledgedRiskySetup(partner);
    // The preview of the lowered combination already says no acknowledgement is needed.
    const preview = await expectJson(
      await partner.call("POST", "/v1/users/ana/setup/preview", {
        body: { ...RISKY, maxMarginPerTradeUsd: 80, maxDailyLossUsd: 30 },
      }),
      200,
    );
    assert.deepEqual(preview.safety.flags, FLAGS);
    assert.equal(preview.safety.acknowledged, true);

    const lowered = await expectJson(await putRisk(partner, { maxMarginPerTradeUsd: 80, maxDailyLossUsd: 30 }), 200);
    assert.equal(lowered.maxMarginPerTradeUsd, 80);
    assert.equal(lowered.maxDailyLossUsd, 30);
    assert.deepEqual(lowered.safety.flags, FLAGS);
    assert.equal(lowered.safety.required, true);
    assert.equal(lowered.safety.acknowledged, true);
    assert.equal(lowered.safety.fingerprint, preview.safety.fingerprint);
    assert.notEqual(lowered.safety.fingerprint, before.safety.fingerprint, "a new combination");

    const read = await readSetup(partner);
    assert.equal(read.maxMarginPerTradeUsd, 80);
    assert.equal(read.maxDailyLossUsd, 30);
    assert.deepEqual(read.safety, lowered.safety, "the stored acknowledgement is the new combination's");
    const current = await expectJson(
      await partner.call("POST", "/v1/users/ana/setup/preview", {
        body: { ...RISKY, maxMarginPerTradeUsd: 80, maxDailyLossUsd: 30 },
      }),
      200,
    );
    assert.equal(current.safety.acknowledged, true);
  } finally {
    await env.close();
  }
});

Deno.test("PUT /v1/users/:id/setup that only makes the setup safer needs no new acknowledgement", async () => {
  const { env, partner } = await readyClient();
  try {
    await acknowledgedRiskySetup(partner);
    // Lower margin and loss per trade, automatic stop switched on: one flag fewer, the other still acknowledged.
    const safer = await expectJson(
      await putSetup(partner, { ...RISKY, maxMarginPerTradeUsd: 100, maxLossPerTrade: 10, autoStopLoss: true }),
      200,
    );
    assert.deepEqual(safer.safety.flags, ["HIGH_LEVERAGE_LARGE_MARGIN_SHARE"]);
    assert.equal(safer.safety.acknowledged, true);
    assert.equal(safer.autoStopLoss, true);
    // Lower leverage takes the last flag away: nothing left to acknowledge.
    const quiet = await expectJson(
      await putSetup(partner, {
        ...RISKY,
        leverage: 9,
        maxMarginPerTradeUsd: 100,
        maxLossPerTrade: 10,
        autoStopLoss: true,
      }),
      200,
    );
    assert.deepEqual(quiet.safety.flags, []);
    assert.equal(quiet.safety.required, false);
    // And from there, any flag is new again.
    await expectError(
      await putSetup(partner, { ...RISKY, maxMarginPerTradeUsd: 100, maxLossPerTrade: 10, autoStopLoss: true }),
      422,
      "RISK_ACK_REQUIRED",
    );
  } finally {
    await env.close();
  }
});

Deno.test("PUT /v1/users/:id/risk raising a value a flag reads still needs the acknowledgement", async () => {
  const { env, partner } = await readyClient();
  try {
    await acknowledgedRiskySetup(partner);
    // Lowered first (no acknowledgement needed), then the flagged margin goes up again.
    await expectJson(await putRisk(partner, { maxMarginPerTradeUsd: 80, maxDailyLossUsd: 50 }), 200);
    const refused = await expectError(
      await putRisk(partner, { maxMarginPerTradeUsd: 100, maxDailyLossUsd: 50 }),
      422,
      "RISK_ACK_REQUIRED",
    );
    assert.deepEqual(refused.safety.flags, FLAGS);
    assert.equal(refused.safety.acknowledged, false);
    // The daily loss is read by LARGE_DAILY_LOSS: raising it needs the acknowledgement even while it does not flag.
    await expectError(
      await putRisk(partner, { maxMarginPerTradeUsd: 80, maxDailyLossUsd: 60 }),
      422,
      "RISK_ACK_REQUIRED",
    );
    const read = await readSetup(partner);
    assert.equal(read.maxMarginPerTradeUsd, 80);
    assert.equal(read.maxDailyLossUsd, 50);
    assert.equal(read.safety.acknowledged, true);
    // With the preview's acknowledgement the raise goes through.
    await expectJson(
      await putRisk(partner, {
        maxMarginPerTradeUsd: 100,
        maxDailyLossUsd: 50,
        riskAcknowledgement: { fingerprint: refused.safety.fingerprint, codes: FLAGS },
      }),
      200,
    );
  } finally {
    await env.close();
  }
});

Deno.test("a change that adds a flag needs the acknowledgement even when every limit goes down", async () => {
  const { env, partner } = await readyClient();
  try {
    await acknowledgedRiskySetup(partner);
    const refused = await expectError(
      await putSetup(partner, { ...RISKY, maxMarginPerTradeUsd: 80, maxDailyLossUsd: 30, allowMemecoins: true }),
      422,
      "RISK_ACK_REQUIRED",
    );
    assert.deepEqual(refused.safety.flags, [...FLAGS, "MEMECOINS_ALLOWED"]);
    // A lower capital base is no limit lowered: it makes every share of it larger (LARGE_DAILY_LOSS here).
    const smaller = await expectError(
      await putSetup(partner, { ...RISKY, maxMarginPerTradeUsd: 80, capitalBase: 200 }),
      422,
      "RISK_ACK_REQUIRED",
    );
    assert.ok(smaller.safety.flags.includes("LARGE_DAILY_LOSS"));
    // The same after an acknowledgement carried over to a lowered setup.
    await expectJson(await putRisk(partner, { maxMarginPerTradeUsd: 200, maxDailyLossUsd: 50 }), 200);
    await expectError(
      await putSetup(partner, { ...RISKY, maxMarginPerTradeUsd: 80, allowMemecoins: true }),
      422,
      "RISK_ACK_REQUIRED",
    );
    const read = await readSetup(partner);
    assert.equal(read.allowMemecoins, false);
    assert.equal(read.maxMarginPerTradeUsd, 200);
    assert.equal(read.capitalBase, 600);
    assert.equal(read.safety.acknowledged, true);
  } finally {
    await env.close();
  }
});

Deno.test("PUT /v1/users/:id/risk lowering then raising back to the old value needs the acknowledgement again", async () => {
  const { env, partner } = await readyClient();
  try {
    const before = await acknowledgedRiskySetup(partner);
    await expectJson(await putRisk(partner, { maxMarginPerTradeUsd: 80, maxDailyLossUsd: 30 }), 200);
    const refused = await expectError(
      await putRisk(partner, { maxMarginPerTradeUsd: 500, maxDailyLossUsd: 50 }),
      422,
      "RISK_ACK_REQUIRED",
    );
    assert.equal(refused.safety.fingerprint, before.safety.fingerprint, "the original combination again");
    assert.equal(refused.safety.acknowledged, false, "its acknowledgement was replaced by the safer one's");
    const read = await readSetup(partner);
    assert.equal(read.maxMarginPerTradeUsd, 80);
    assert.equal(read.maxDailyLossUsd, 30);
    const preview = await expectJson(
      await partner.call("POST", "/v1/users/ana/setup/preview", { body: RISKY }),
      200,
    );
    assert.equal(preview.safety.acknowledged, false, "the preview of the old values tells the same");
  } finally {
    await env.close();
  }
});

Deno.test("PUT /v1/users/:id/risk with one limit down and another up needs the acknowledgement", async () => {
  const { env, partner } = await readyClient();
  try {
    const before = await acknowledgedRiskySetup(partner);
    for (
      const mixed of [
        { maxMarginPerTradeUsd: 80, maxDailyLossUsd: 60 },
        { maxMarginPerTradeUsd: 400, maxDailyLossUsd: 30, maxLossPerTrade: 25 },
      ]
    ) {
      await expectError(await putRisk(partner, mixed), 422, "RISK_ACK_REQUIRED");
    }
    let read = await readSetup(partner);
    assert.equal(read.maxMarginPerTradeUsd, 500);
    assert.equal(read.maxDailyLossUsd, 50);
    assert.equal(read.maxLossPerTrade, 20);
    assert.deepEqual(read.safety, before.safety);
    // From a lowered setup whose acknowledgement carried over, likewise.
    const lowered = await expectJson(await putRisk(partner, { maxMarginPerTradeUsd: 300, maxDailyLossUsd: 40 }), 200);
    await expectError(
      await putRisk(partner, { maxMarginPerTradeUsd: 200, maxDailyLossUsd: 45 }),
      422,
      "RISK_ACK_REQUIRED",
    );
    read = await readSetup(partner);
    assert.equal(read.maxMarginPerTradeUsd, 300);
    assert.equal(read.maxDailyLossUsd, 40);
    assert.deepEqual(read.safety, lowered.safety);
  } finally {
    await env.close();
  }
});
