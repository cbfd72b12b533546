/** Setup and risk through the HTTP stack: reads, preview, the full declaration, every refusal, acknowledgement. */
import assert from "node:assert/strict";
import { expectError, expectJson } from "../_helpers/http.ts";
import { setUp } from "../connect/connect_fixture.ts";
import { completeSetup, ik, putSetup, readyClient } from "./setup_fixture.ts";

Deno.test("setup: a never-configured setup reads back PAPER and disabled, with its issues", async () => {
  const { env, partner } = await setUp();
  try {
    const setup = await expectJson(await partner.call("GET", "/v1/users/ana/setup?providerId=VENUE_B"), 200);
    assert.equal(setup.mode, "PAPER");
    assert.equal(setup.enabled, false);
    assert.equal(setup.providerId, "VENUE_B");
    assert.equal(setup.quoteCurrency, "USDC");
    assert.equal(setup.apiConfigured, false);
    assert.equal(setup.setupStatus.status, "SETUP_INCOMPLETE");
    assert.deepEqual(
      setup.setupStatus.issues.map((issue: { code: string; field: string }) => [issue.code, issue.field]),
      [
        ["CAPITAL_BASE_REQUIRED", "capitalBase"],
        ["MAX_LOSS_REQUIRED", "maxLossPerTrade"],
        ["ENTRY_TIMEOUT_REQUIRED", "entryTimeoutMinutes"],
      ],
    );
    assert.equal(setup.risk.haltedToday, false);
    assert.equal(typeof setup.safety.fingerprint, "string");
    await expectError(await partner.call("GET", "/v1/users/ana/setup"), 400, "VALIDATION_ERROR");
    await expectError(await partner.call("GET", "/v1/users/nobody/setup?providerId=VENUE_A"), 404, "NOT_FOUND");
  } finally {
    await env.close();
  }
});

Deno.test("setup: preview validates against the contract before any connection and writes nothing", async () => {
  const { env, partner } = await setUp();
  try {
    const preview = await expectJson(
      await partner.call("POST", "/v1/users/ana/setup/preview", {
        body: completeSetup({ autoStopLoss: false, allowMemecoins: true, maxAdverseEntryPercent: 2 }),
      }),
      200,
    );
    assert.deepEqual(preview.safety.flags, ["NO_AUTO_STOP_LOSS", "MEMECOINS_ALLOWED", "WIDE_ADVERSE_ENTRY"]);
    assert.equal(preview.safety.required, true);
    assert.equal(preview.safety.acknowledged, false);
    assert.match(preview.safety.fingerprint, /^[0-9a-f]{64}$/);
    const again = await expectJson(
      await partner.call("POST", "/v1/users/ana/setup/preview", {
        body: completeSetup({ autoStopLoss: false, allowMemecoins: true, maxAdverseEntryPercent: 2 }),
      }),
      200,
    );
    assert.equal(again.safety.fingerprint, preview.safety.fingerprint, "stable for the same combination");
    const quiet = await expectJson(
      await partner.call("POST", "/v1/users/ana/setup/preview", { body: completeSetup() }),
      200,
    );
    assert.deepEqual(quiet.safety.flags, []);
    assert.equal(quiet.safety.required, false);
    await expectError(
      await partner.call("POST", "/v1/users/ana/setup/preview", { body: completeSetup({ leverage: 11 }) }),
      422,
      "RISK_ENVELOPE_EXCEEDED",
    );
    const setup = await expectJson(await partner.call("GET", "/v1/users/ana/setup?providerId=VENUE_A"), 200);
    assert.equal(setup.mode, "PAPER", "preview stored nothing");
  } finally {
    await env.close();
  }
});

Deno.test("setup: every refusal of PUT setup, each leaving the setup as it was", async (t) => {
  const { env, partner } = await setUp();
  try {
    const unchanged = async () => {
      const setup = await expectJson(await partner.call("GET", "/v1/users/ana/setup?providerId=VENUE_A"), 200);
      assert.equal(setup.mode, "PAPER");
    };
    await t.step("mode other than REAL: 403 PAPER_NOT_GRANTED", async () => {
      await expectError(await putSetup(partner, completeSetup({ mode: "PAPER" })), 403, "PAPER_NOT_GRANTED");
      await unchanged();
    });
    await t.step("above the envelope: 422 RISK_ENVELOPE_EXCEEDED naming the limit", async () => {
      const body = await expectError(
        await putSetup(partner, completeSetup({ leverage: 11, maxDailyLossUsd: 250 })),
        422,
        "RISK_ENVELOPE_EXCEEDED",
      );
      assert.match(body.error.message, /leverage \(máx\. 10\)/);
      assert.match(body.error.message, /maxDailyLossUsd \(máx\. 200\)/);
      await unchanged();
    });
    await t.step("enabling with fields missing: 400 SETUP_INCOMPLETE with setupStatus.issues", async () => {
      const body = await expectError(
        await putSetup(partner, completeSetup({ capitalBase: null, entryTimeoutMinutes: undefined })),
        400,
        "SETUP_INCOMPLETE",
      );
      assert.deepEqual(
        body.setupStatus.issues.map((issue: { code: string }) => issue.code),
        ["CAPITAL_BASE_REQUIRED", "ENTRY_TIMEOUT_REQUIRED"],
      );
      await unchanged();
    });
    await t.step("enabling without a connected account: 422 API_NOT_CONFIGURED", async () => {
      await expectError(await putSetup(partner, completeSetup()), 422, "API_NOT_CONFIGURED");
      await unchanged();
    });
    await t.step("maxConcurrentTrades above 3 and other invalid values: 400 VALIDATION_ERROR", async () => {
      for (
        const bad of [
          { maxConcurrentTrades: 4 },
          { leverage: 0 },
          { leverage: 2.5 },
          { orderSizeUsd: 0.5 },
          { entryTimeoutMinutes: 1441 },
          { maxMarginPerTradeUsd: 1.0000001 },
          { marginType: "CROSS" },
          { allowedSymbols: ["btc usdt"] },
          { enabled: "yes" },
        ]
      ) {
        await expectError(await putSetup(partner, completeSetup(bad)), 400, "VALIDATION_ERROR");
      }
      await unchanged();
    });
    await t.step("without Idempotency-Key: 400 IDEMPOTENCY_KEY_REQUIRED", async () => {
      await expectError(
        await partner.call("PUT", "/v1/users/ana/setup", { body: completeSetup({ enabled: false }) }),
        400,
        "IDEMPOTENCY_KEY_REQUIRED",
      );
    });
    await t.step("a disabled, incomplete setup may be saved before any connection", async () => {
      const saved = await expectJson(
        await putSetup(partner, completeSetup({ enabled: false, capitalBase: null })),
        200,
      );
      assert.equal(saved.mode, "REAL");
      assert.equal(saved.enabled, false);
      assert.equal(saved.setupStatus.status, "SETUP_INCOMPLETE");
    });
    await t.step("a suspended client's setup cannot be written: 403 OWNER_NOT_ALLOWED", async () => {
      await expectJson(await partner.call("POST", "/v1/users/ana/suspend", { body: { reason: "teste" } }), 200);
      await expectError(await putSetup(partner, completeSetup({ enabled: false })), 403, "OWNER_NOT_ALLOWED");
    });
  } finally {
    await env.close();
  }
});

Deno.test("setup: the acknowledgement round trip, preview → fingerprint → PUT", async () => {
  const { env, partner } = await readyClient();
  try {
    const risky = completeSetup({ leverage: 10, maxMarginPerTradeUsd: 150, autoStopLoss: false });
    const { safety } = await expectJson(
      await partner.call("POST", "/v1/users/ana/setup/preview", { body: risky }),
      200,
    );
    assert.deepEqual(safety.flags, ["HIGH_LEVERAGE_LARGE_MARGIN_SHARE", "NO_AUTO_STOP_LOSS"]);
    const refused = await expectError(await putSetup(partner, risky), 422, "RISK_ACK_REQUIRED");
    assert.deepEqual(refused.safety.flags, safety.flags);
    for (
      const wrong of [
        { fingerprint: "0".repeat(64), codes: safety.flags },
        { fingerprint: safety.fingerprint, codes: ["NO_AUTO_STOP_LOSS"] },
        { fingerprint: safety.fingerprint, codes: [...safety.flags, "MEMECOINS_ALLOWED"] },
      ]
    ) {
      await expectError(await putSetup(partner, { ...risky, riskAcknowledgement: wrong }), 422, "RISK_ACK_REQUIRED");
    }
    // An acknowledgement from another combination does not carry over.
    const other = await expectJson(
      await partner.call("POST", "/v1/users/ana/setup/preview", { body: { ...risky, leverage: 9 } }),
      200,
    );
    await expectError(
      await putSetup(partner, {
        ...risky,
        riskAcknowledgement: { fingerprint: other.safety.fingerprint, codes: safety.flags },
      }),
      422,
      "RISK_ACK_REQUIRED",
    );
    const stored = await expectJson(
      await putSetup(partner, {
        ...risky,
        riskAcknowledgement: { fingerprint: safety.fingerprint, codes: [...safety.flags].reverse() },
      }),
      200,
    );
    assert.equal(stored.safety.acknowledged, true);
    assert.equal(stored.enabled, true);
    assert.equal(stored.setupStatus.status, "READY");
    assert.equal(stored.apiConfigured, true);
    // The same combination again needs no new acknowledgement; the preview says it is acknowledged.
    const preview = await expectJson(await partner.call("POST", "/v1/users/ana/setup/preview", { body: risky }), 200);
    assert.equal(preview.safety.acknowledged, true);
    await expectJson(await putSetup(partner, { ...risky, orderSizeUsd: 300 }), 200);
    // A changed flagged value is a new combination.
    await expectError(await putSetup(partner, { ...risky, maxMarginPerTradeUsd: 160 }), 422, "RISK_ACK_REQUIRED");
    const read = await expectJson(await partner.call("GET", "/v1/users/ana/setup?providerId=VENUE_A"), 200);
    assert.equal(read.safety.acknowledged, true);
    assert.equal(read.maxMarginPerTradeUsd, 150);
  } finally {
    await env.close();
  }
});

Deno.test("setup: PUT setup is a full declaration; PUT risk changes only the risk limits", async () => {
  const { env, partner } = await readyClient();
  try {
    const first = await expectJson(
      await putSetup(
        partner,
        completeSetup({
          allowedSymbols: ["BTCUSDT"],
          marginType: "CROSSED",
          maxOpenNotionalUsd: 900,
          maxSameDirection: 1,
        }),
      ),
      200,
    );
    assert.deepEqual(first.allowedSymbols, ["BTCUSDT"]);
    assert.equal(first.risk.maxOpenNotionalUsd, 900);
    assert.equal(first.sizingStatus, "AVAILABLE");
    const second = await expectJson(await putSetup(partner, completeSetup({ orderSizeUsd: 400 })), 200);
    assert.deepEqual(second.allowedSymbols, [], "absent fields take their defaults, not the previous value");
    assert.equal(second.marginType, "ISOLATED");
    assert.equal(second.risk.maxOpenNotionalUsd, null);
    assert.equal(second.sizingStatus, "CAPPED_BY_MARGIN", "400 at 5x needs 80 of margin, above 50");

    const risk = await expectJson(
      await partner.call("PUT", "/v1/users/ana/risk", {
        body: {
          providerId: "VENUE_A",
          maxConcurrentTrades: 2,
          maxMarginPerTradeUsd: 80,
          maxDailyLossUsd: 60.5,
          maxOpenNotionalUsd: 1200,
          leverage: 9,
          enabled: false,
          orderSizeUsd: 1,
        },
        headers: ik(),
      }),
      200,
    );
    assert.equal(risk.maxDailyLossUsd, 60.5, "repeated at top level");
    assert.equal(risk.risk.maxDailyLossUsd, 60.5);
    assert.equal(risk.maxConcurrentTrades, 2);
    assert.equal(risk.maxMarginPerTradeUsd, 80);
    assert.equal(risk.risk.maxOpenNotionalUsd, 1200);
    assert.equal(risk.leverage, 5, "leverage is not a risk limit here");
    assert.equal(risk.enabled, true, "nor is enabled");
    assert.equal(risk.orderSizeUsd, 400, "nor the order size");
    await expectError(
      await partner.call("PUT", "/v1/users/ana/risk", {
        body: { providerId: "VENUE_A", maxConcurrentTrades: 3, maxMarginPerTradeUsd: 501, maxDailyLossUsd: 10 },
        headers: ik(),
      }),
      422,
      "RISK_ENVELOPE_EXCEEDED",
    );
    await expectError(
      await partner.call("PUT", "/v1/users/ana/risk", {
        body: { providerId: "VENUE_A", maxConcurrentTrades: 4, maxMarginPerTradeUsd: 5, maxDailyLossUsd: 10 },
        headers: ik(),
      }),
      400,
      "VALIDATION_ERROR",
    );
    await expectError(
      await partner.call("PUT", "/v1/users/ana/risk", {
        body: { providerId: "VENUE_A", maxMarginPerTradeUsd: 5, maxDailyLossUsd: 10 },
        headers: ik(),
      }),
      400,
      "VALIDATION_ERROR",
    );
  } finally {
    await env.close();
  }
});

Deno.test("setup: an idempotent PUT replays its answer and stores once", async () => {
  const { env, partner } = await readyClient();
  try {
    const headers = ik();
    const first = await partner.call("PUT", "/v1/users/ana/setup", { body: completeSetup(), headers });
    const firstBody = await expectJson(first, 200);
    const replay = await partner.call("PUT", "/v1/users/ana/setup", { body: completeSetup(), headers });
    assert.equal(replay.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(await expectJson(replay, 200), firstBody);
    await expectError(
      await partner.call("PUT", "/v1/users/ana/setup", { body: completeSetup({ leverage: 3 }), headers }),
      409,
      "IDEMPOTENCY_CONFLICT",
    );
  } finally {
    await env.close();
  }
});

Deno.test("setup: providers outside the contract or the effective grant are refused", async () => {
  const { env, partner } = await setUp({
    grants: { providers: ["VENUE_A", "VENUE_B"], strategies: [], capabilities: [] },
  });
  try {
    await expectJson(
      await partner.call("PUT", `/v1/tenants/${partner.partnerId}/restrictions`, {
        body: { providers: ["VENUE_A"], reason: "só VENUE_A" },
      }),
      200,
    );
    await expectError(
      await partner.call("GET", "/v1/users/ana/setup?providerId=VENUE_B"),
      403,
      "PROVIDER_NOT_GRANTED",
    );
    await expectError(
      await putSetup(partner, completeSetup({ providerId: "VENUE_B", enabled: false })),
      403,
      "PROVIDER_NOT_GRANTED",
    );
    await expectError(
      await partner.call("POST", "/v1/users/ana/setup/preview", { body: completeSetup({ providerId: "VENUE_B" }) }),
      403,
      "PROVIDER_NOT_GRANTED",
    );
  } finally {
    await env.close();
  }
  const narrow = await setUp({ grants: { providers: ["VENUE_A"], strategies: [], capabilities: [] } });
  try {
    await expectError(
      await narrow.partner.call("GET", "/v1/users/ana/setup?providerId=VENUE_B"),
      403,
      "PROVIDER_NOT_ALLOWED",
    );
    await expectError(
      await narrow.partner.call("PUT", "/v1/users/ana/automation", {
        body: {
          providerId: "VENUE_B",
          strategyId: "x1",
          enabled: false,
          risk: { leverage: 1, maxMarginPerTradeUsd: 1, maxConcurrentTrades: 1, maxDailyLossUsd: 1 },
        },
        headers: ik(),
      }),
      403,
      "PROVIDER_NOT_ALLOWED",
    );
  } finally {
    await narrow.env.close();
  }
});
