/**
 * The order of a route's answers (issue 28): shape first (400, including rules
 * across fields that need nothing stored), then existence and scope (404, 403),
 * then state (409, 422). A malformed request is 400 whatever the client's state.
 * Each test failed before its fix.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { obligations } from "../../db/schema.ts";
import { findClient } from "../../domain/clients/load_client.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectError, expectJson } from "../_helpers/http.ts";
import { openObligation } from "../payments/obligation_fixture.ts";
import { setUp } from "../connect/connect_fixture.ts";
import { automationBody, completeSetup, ik, putAutomation, putSetup } from "../setup/setup_fixture.ts";
import { opening } from "../execution/execution_fixture.ts";

Deno.test("POST /v1/orders/prepare answers 400 for a LIMIT order without price even when the client has no connection", async () => {
  const { env, partner } = await setUp();
  try {
    const prepare = (body: Record<string, unknown>) =>
      partner.call("POST", "/v1/orders/prepare", { body, headers: ik() });
    // ana has no connection at VENUE_A: a well-formed order is 422 CREDENTIALS_MISSING.
    await expectError(await prepare(opening()), 422, "CREDENTIALS_MISSING");
    const body = await expectError(await prepare(opening({ price: undefined })), 400, "VALIDATION_ERROR");
    assert.match(body.error.message, /price/);
    await expectError(await prepare(opening({ externalUserId: "nobody", price: undefined })), 400, "VALIDATION_ERROR");
  } finally {
    await env.close();
  }
});

Deno.test("POST /v1/orders/prepare and execute answer 400 for both quantity and notionalUsd even when the client has no connection", async () => {
  const { env, partner } = await setUp();
  try {
    for (const path of ["/v1/orders/prepare", "/v1/orders/execute"]) {
      const send = (body: Record<string, unknown>) => partner.call("POST", path, { body, headers: ik() });
      const body = await expectError(await send(opening({ notionalUsd: 200 })), 400, "VALIDATION_ERROR");
      assert.match(body.error.message, /quantity ou notionalUsd/);
      await expectError(await send(opening({ quantity: undefined })), 400, "VALIDATION_ERROR");
      await expectError(await send(opening({ orderType: "MARKET" })), 400, "VALIDATION_ERROR");
      await expectError(await send(opening({ side: undefined })), 400, "VALIDATION_ERROR");
    }
  } finally {
    await env.close();
  }
});

Deno.test("POST /v1/orders/execute answers 400 for maintenance missing its fields even when the client has no connection", async () => {
  const { env, partner } = await setUp();
  try {
    const execute = (body: Record<string, unknown>) =>
      partner.call("POST", "/v1/orders/execute", { body, headers: ik() });
    const base = { externalUserId: "ana", providerId: "VENUE_A", symbol: "BTCUSDT" };
    await expectError(await execute({ ...base, type: "CANCEL_ORDER", orderId: "1" }), 422, "CREDENTIALS_MISSING");
    for (
      const malformed of [
        { ...base, type: "CANCEL_ORDER" },
        { ...base, type: "UPDATE_ORDER", orderId: "1", price: 65000 },
        { ...base, type: "SET_LEVERAGE" },
        { ...base, type: "SET_MARGIN_MODE" },
        { ...base, type: "SET_STOP_LOSS", positionSide: "BUY" },
        { ...base, type: "SET_TAKE_PROFIT", positionSide: "BUY" },
        { ...base, type: "SET_STOP_LOSS", stopLossPrice: 60000 },
        { ...base, type: "CLOSE_POSITION", symbol: undefined },
      ]
    ) {
      await expectError(await execute(malformed), 400, "VALIDATION_ERROR");
    }
  } finally {
    await env.close();
  }
});

Deno.test("POST /v1/orders/prepare answers 400 for a symbol that is no market of the provider even when the client has no connection", async () => {
  const { env, partner } = await setUp();
  try {
    const body = await expectError(
      await partner.call("POST", "/v1/orders/prepare", { body: opening({ symbol: "NOPEUSDT" }), headers: ik() }),
      400,
      "VALIDATION_ERROR",
    );
    assert.match(body.error.message, /NOPEUSDT/);
  } finally {
    await env.close();
  }
});

Deno.test("POST /v1/users/:id/connect-sessions answers 400 for BUILDER_APPROVAL at a provider without a builder fee even for a suspended client", async () => {
  const { env, partner } = await setUp();
  try {
    await expectJson(await partner.call("POST", "/v1/users/ana/suspend", { body: { reason: "teste" } }), 200);
    const open = (body: Record<string, unknown>) => partner.call("POST", "/v1/users/ana/connect-sessions", { body });
    await expectError(await open({ providerId: "VENUE_B" }), 403, "CLIENT_SUSPENDED");
    await expectError(await open({ providerId: "VENUE_A", purpose: "BUILDER_APPROVAL" }), 400, "VALIDATION_ERROR");
    await expectError(
      await partner.call("POST", "/v1/users/nobody/connect-sessions", {
        body: { providerId: "VENUE_A", purpose: "BUILDER_APPROVAL" },
      }),
      400,
      "VALIDATION_ERROR",
    );
  } finally {
    await env.close();
  }
});

Deno.test("POST /v1/users/:id/connect-sessions answers the provider's grant and the returnUrl before a suspended client", async () => {
  const { env, partner } = await setUp();
  try {
    await expectJson(
      await partner.call("PUT", `/v1/tenants/${partner.partnerId}/restrictions`, {
        body: { providers: ["VENUE_B"], reason: "só B" },
      }),
      200,
    );
    await expectJson(await partner.call("POST", "/v1/users/ana/suspend", { body: { reason: "teste" } }), 200);
    const open = (body: Record<string, unknown>) => partner.call("POST", "/v1/users/ana/connect-sessions", { body });
    await expectError(await open({ providerId: "VENUE_A" }), 403, "PROVIDER_NOT_GRANTED");
    await expectError(
      await open({ providerId: "VENUE_B", returnUrl: "https://evil.example/" }),
      403,
      "RETURN_URL_NOT_ALLOWED",
    );
    await expectError(await open({ providerId: "VENUE_B" }), 403, "CLIENT_SUSPENDED");
  } finally {
    await env.close();
  }
});

Deno.test("PUT /v1/users/:id/setup answers 400 SETUP_INCOMPLETE for an enabled setup missing its fields even for a suspended client", async () => {
  const { env, partner } = await setUp();
  try {
    const incomplete = completeSetup({ capitalBase: null });
    // Above the envelope too (leverage 11 > 10): the missing field is answered first.
    await expectError(await putSetup(partner, { ...incomplete, leverage: 11 }), 400, "SETUP_INCOMPLETE");
    await expectError(await putSetup(partner, incomplete, "nobody"), 400, "SETUP_INCOMPLETE");
    await expectJson(await partner.call("POST", "/v1/users/ana/suspend", { body: { reason: "teste" } }), 200);
    await expectError(await putSetup(partner, completeSetup()), 403, "OWNER_NOT_ALLOWED");
    const body = await expectError(await putSetup(partner, incomplete), 400, "SETUP_INCOMPLETE");
    assert.deepEqual(body.setupStatus.issues.map((issue: { code: string }) => issue.code), ["CAPITAL_BASE_REQUIRED"]);
  } finally {
    await env.close();
  }
});

Deno.test("POST /v1/users/:id/setup/preview answers 400 SETUP_INCOMPLETE before the provider's grant", async () => {
  const { env, partner } = await setUp();
  try {
    await expectJson(
      await partner.call("PUT", `/v1/tenants/${partner.partnerId}/restrictions`, {
        body: { providers: ["VENUE_B"], reason: "só B" },
      }),
      200,
    );
    const preview = (body: Record<string, unknown>) => partner.call("POST", "/v1/users/ana/setup/preview", { body });
    await expectError(await preview(completeSetup()), 403, "PROVIDER_NOT_GRANTED");
    await expectError(await preview(completeSetup({ maxLossPerTrade: null })), 400, "SETUP_INCOMPLETE");
  } finally {
    await env.close();
  }
});

Deno.test("PUT /v1/users/:id/automation answers 400 for an empty window or a symbol of another venue even for a suspended client", async () => {
  const { env, partner } = await setUp();
  try {
    await expectJson(await partner.call("POST", "/v1/users/ana/suspend", { body: { reason: "teste" } }), 200);
    await expectError(await putAutomation(partner, automationBody()), 403, "OWNER_NOT_ALLOWED");
    const emptyWindow = automationBody({ conditions: { tradingWindowUtc: { from: "08:00", to: "08:00" } } });
    const body = await expectError(await putAutomation(partner, emptyWindow), 400, "VALIDATION_ERROR");
    assert.match(body.error.message, /tradingWindowUtc/);
    const otherVenue = automationBody({ conditions: { symbols: ["BTCUSDC"] } });
    await expectError(await putAutomation(partner, otherVenue), 400, "VALIDATION_ERROR");
    await expectError(await putAutomation(partner, otherVenue, "nobody"), 400, "VALIDATION_ERROR");
  } finally {
    await env.close();
  }
});

/** ana's obligation at `providerId`, settled (PAID) when told, in an env whose arbitrum node is configured. */
async function paymentWorld() {
  // The node is never reached: every refusal here comes before the service asks the chain anything.
  const env = await startTestEnv({ env: { EVM_RPC_ARBITRUM: "http://127.0.0.1:9" } });
  const partner = await createPartner(env, { partnerId: "payer" });
  await expectJson(await partner.call("POST", "/v1/users", { body: { externalUserId: "ana" }, headers: ik() }), 201);
  const clientId = (await findClient(env.deps.db.read, "payer", "ana"))!.id;
  const obligation = async (reference: string, providerId: string, paid = false) => {
    const row = await openObligation(env, {
      partnerId: "payer",
      clientId,
      reference,
      providerId,
      source: "MONTHLY_SUBSCRIPTION",
    });
    if (paid) {
      await withTransaction(
        env.deps.db,
        (tx) =>
          tx.update(obligations).set({ status: "PAID", settledAt: env.clock.now() })
            .where(eq(obligations.obligationId, row.obligationId)),
      );
    }
    return row.obligationId;
  };
  const instruct = (obligationId: string, body: Record<string, unknown>) =>
    partner.call("POST", `/v1/users/ana/obligations/${obligationId}/payment-instructions`, { body, headers: ik() });
  return { env, partner, obligation, instruct };
}

const EVM = { networkId: "arbitrum", token: "USDT", payerAddress: "0x00000000000000000000000000000000000a11ce" };

Deno.test("POST /v1/users/:id/obligations/:obligationId/payment-instructions answers the body's own 400s before the obligation's existence and state", async () => {
  const { env, obligation, instruct } = await paymentWorld();
  try {
    const paid = await obligation("2026-10", "VENUE_A", true);
    await expectError(await instruct(paid, EVM), 409, "OBLIGATION_NOT_OPEN");
    await expectError(await instruct(paid, { ...EVM, payerAddress: "0x12" }), 400, "INVALID_PAYER");
    await expectError(await instruct(paid, { ...EVM, networkId: "polygon" }), 400, "NETWORK_NOT_ENABLED");
    await expectError(await instruct(paid, { ...EVM, token: "DAI" }), 400, "TOKEN_NOT_SUPPORTED");
    await expectError(await instruct("obl_unknown", { ...EVM, payerAddress: "0x12" }), 400, "INVALID_PAYER");
    await expectError(await instruct("obl_unknown", EVM), 404, "NOT_FOUND");
    // A token the obligation is not charged in: a refusal of this charge, before its state.
    await expectError(await instruct(paid, { ...EVM, token: "USDC" }), 400, "CURRENCY_MISMATCH");
  } finally {
    await env.close();
  }
});

Deno.test("POST /v1/users/:id/obligations/:obligationId/payment-instructions answers a foreign returnUrl of a VENUE_B send before the missing VENUE_B account", async () => {
  const { env, obligation, instruct } = await paymentWorld();
  try {
    const owed = await obligation("2026-11", "VENUE_B");
    const send = (returnUrl: string) => instruct(owed, { method: "VENUE_B_USD_SEND", returnUrl });
    await expectError(await send("https://app.partner.example/billing"), 422, "API_NOT_CONFIGURED");
    await expectError(await send("https://evil.example/billing"), 403, "RETURN_URL_NOT_ALLOWED");
    const paidInUsdt = await obligation("2026-10", "VENUE_A", true);
    await expectError(await instruct(paidInUsdt, { method: "VENUE_B_USD_SEND" }), 400, "CURRENCY_MISMATCH");
  } finally {
    await env.close();
  }
});

Deno.test("POST /v1/users/:id/payments/:paymentId/confirm answers 400 INVALID_TX_HASH before the payment's existence", async () => {
  const { env, partner } = await paymentWorld();
  try {
    const confirm = (txHash: string) =>
      partner.call("POST", "/v1/users/ana/payments/pay_unknown/confirm", { body: { txHash }, headers: ik() });
    await expectError(await confirm(`0x${"ab".repeat(32)}`), 404, "NOT_FOUND");
    await expectError(await confirm("0x1234"), 400, "INVALID_TX_HASH");
    await expectError(
      await partner.call("POST", "/v1/users/nobody/payments/pay_unknown/confirm", {
        body: { txHash: "0x1234" },
        headers: ik(),
      }),
      400,
      "INVALID_TX_HASH",
    );
  } finally {
    await env.close();
  }
});
