/**
 * Paying a USDC obligation with a VENUE_B send, through the page's API and
 * the VENUE_B simulator (its ledger in the real venue's shapes): only the
 * principal wallet may sign, the service builds the message, and the payment
 * credits once the ledger shows the send with the session's nonce.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { payments, paymentSessions } from "../../db/schema.ts";
import { findClient } from "../../domain/clients/load_client.ts";
import type { UserSignedAction } from "../../venues/types.ts";
import { USDC_TOKEN } from "../../venues/venue_b/constants.ts";
import { generateAgentKey, splitSignature, usdSendAction, walletTypedData } from "../../venues/venue_b/signing.ts";
import type { WireUserAbstraction } from "../../venues/venue_b/wire.ts";
import type { TestEnv } from "../_helpers/env.ts";
import { call, expectError, expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import { connectWallet, fund, openPage, signAsWallet, type Wallet, walletSetUp } from "../connect/connect_fixture.ts";
import { ik } from "../setup/setup_fixture.ts";
import { openObligation } from "./obligation_fixture.ts";

const RETURN_URL = "https://app.partner.example/billing";

async function setUp() {
  const { env, partner, wallet } = await walletSetUp(0);
  await connectWallet((await openPage(env, partner)).request, wallet);
  const platform = generateAgentKey().address;
  await fund(env, platform, "1");
  await expectJson(await operator(env, "PUT", "/operator/v1/venue-b-payment-wallet", { address: platform }), 200);
  const client = (await findClient(env.deps.db.read, partner.partnerId, "ana"))!;
  return { env, partner, wallet, platform, clientId: client.id };
}

function obligation(env: TestEnv, partnerId: string, clientId: number, reference: string, providerId = "VENUE_B") {
  return openObligation(env, { partnerId, clientId, reference, providerId, source: "MONTHLY_SUBSCRIPTION" });
}

function instruct(partner: TestPartner, obligationId: string, body: Record<string, unknown> = {}) {
  return partner.call("POST", `/v1/users/ana/obligations/${obligationId}/payment-instructions`, {
    body: { method: "VENUE_B_USD_SEND", returnUrl: RETURN_URL, ...body },
    headers: ik(),
  });
}

/** The page opened from `paymentUrl`: its ticket, and its API. */
async function openPayPage(env: TestEnv, paymentUrl: string) {
  const token = paymentUrl.split("/pay#")[1];
  env.watchedSecrets.add("payment token", token);
  const session = await expectJson(await call(env, "POST", "/pay/api/session", { body: { token } }), 200);
  env.watchedSecrets.add("payment ticket", session.ticket);
  const request = (path: string, body: unknown) =>
    call(env, "POST", `/pay/api${path}`, { body, headers: { authorization: `Bearer ${session.ticket}` } });
  return { token, session, request };
}

async function sign(request: (path: string, body: unknown) => Promise<Response>, wallet: Wallet) {
  const { typedData } = await expectJson(
    await request("/wallet", { walletAddress: wallet.address, chainId: "0xa4b1" }),
    200,
  );
  return await request("/signature", { signature: await signAsWallet(wallet, typedData) });
}

/** The payer's account mode, set at the venue (the venue's own way is the user-signed userSetAbstraction). */
async function setMode(env: TestEnv, address: string, abstraction: WireUserAbstraction) {
  const response = await fetch(`${env.venueUrls.venueB}/_control/wallets/${address}/abstraction`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ abstraction }),
  });
  assert.equal(response.status, 200, await response.text());
}

/** The payer's wallet signs `action` itself and relays it, outside the page. */
async function sendOwn(env: TestEnv, wallet: Wallet, action: UserSignedAction["action"]) {
  const signature = await signAsWallet(wallet, walletTypedData(action));
  await env.deps.venues.VENUE_B.submitUserSignedAction!({
    action,
    nonce: (action.nonce ?? action.time)!,
    signature: splitSignature(signature),
  });
}

/** A sendAsset of USDC the payer signs on their own, in the QA network's (testnet) terms. */
function ownSend(destination: string, amount: string, dexes: { sourceDex: string; destinationDex: string }) {
  return {
    type: "sendAsset",
    signatureChainId: "0xa4b1",
    hyperliquidChain: "Testnet",
    destination: destination.toLowerCase(),
    ...dexes,
    token: USDC_TOKEN.testnet,
    amount,
    fromSubAccount: "",
    nonce: Date.now(),
  };
}

/** The session's send as the page asked the wallet to sign it. */
async function sessionAction(env: TestEnv, paymentId: string) {
  const [session] = await env.deps.db.read.select().from(paymentSessions)
    .where(eq(paymentSessions.paymentId, paymentId));
  return session.pendingAction as UserSignedAction["action"] & { nonce: number };
}

/** As if the page's signature had been relayed and its answer lost: the job looks for the send in the ledger. */
async function markSigned(env: TestEnv, paymentId: string) {
  const action = await sessionAction(env, paymentId);
  await withTransaction(env.deps.db, async (tx) => {
    await tx.update(paymentSessions).set({ status: "SIGNED", signedNonce: action.nonce })
      .where(eq(paymentSessions.paymentId, paymentId));
    await tx.update(payments).set({ status: "SUBMITTED" }).where(eq(payments.paymentId, paymentId));
  });
  return action;
}

async function paymentOf(partner: TestPartner, paymentId: string) {
  return (await expectJson(await partner.call("GET", `/v1/users/ana/payments/${paymentId}`), 200)).payment;
}

Deno.test("VENUE_B USD send: the principal signs the service's sendAsset, credited by the ledger's nonce, once", async () => {
  const { env, partner, wallet, platform, clientId } = await setUp();
  try {
    const usdt = await obligation(env, partner.partnerId, clientId, "usdt", "VENUE_A");
    await expectError(await instruct(partner, usdt.obligationId), 400, "CURRENCY_MISMATCH");
    const owed = await obligation(env, partner.partnerId, clientId, "2026-11");
    await expectError(
      await instruct(partner, owed.obligationId, { returnUrl: "https://evil.example/x" }),
      403,
      "RETURN_URL_NOT_ALLOWED",
    );
    const instruction = await expectJson(await instruct(partner, owed.obligationId), 200);
    assert.match(instruction.paymentUrl, /\/pay#[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(
      [instruction.payment.method, instruction.payment.status, instruction.payment.tokenSymbol],
      ["VENUE_B_USD_SEND", "PENDING", "USDC"],
    );
    assert.deepEqual([instruction.payment.payerAddress, instruction.payment.recipient], [
      wallet.address.toLowerCase(),
      platform,
    ]);

    const page = await openPayPage(env, instruction.paymentUrl);
    assert.deepEqual(
      [page.session.payment.amount, page.session.payment.from, page.session.payment.to],
      ["49.9", wallet.address.toLowerCase(), platform],
    );
    assert.equal(page.session.payment.returnUrl, RETURN_URL);
    const stranger = generateAgentKey().address;
    await expectError(
      await page.request("/wallet", { walletAddress: stranger, chainId: "0xa4b1" }),
      403,
      "WALLET_MISMATCH",
    );
    const outcome = await expectJson(await sign(page.request, wallet), 200);
    assert.deepEqual([outcome.status, outcome.returnUrl], ["CONFIRMED", RETURN_URL]);

    const payment = (await expectJson(
      await partner.call("GET", `/v1/users/ana/payments/${instruction.payment.paymentId}`),
      200,
    )).payment;
    assert.equal(payment.status, "CONFIRMED");
    assert.match(payment.txHash, /^0x[0-9a-f]{64}$/, "the ledger entry of the send");
    const obligations = (await expectJson(await partner.call("GET", "/v1/users/ana/obligations"), 200)).obligations;
    assert.equal(
      obligations.find((o: { obligationId: string }) => o.obligationId === owed.obligationId).status,
      "PAID",
    );
    const paid = await expectJson(await partner.call("GET", "/v1/events?type=obligation.paid"), 200);
    assert.equal(paid.events.length, 1);

    // No transaction hash is accepted for this method, and the link is spent.
    await expectError(
      await partner.call("POST", `/v1/users/ana/payments/${payment.paymentId}/confirm`, {
        body: { txHash: payment.txHash },
        headers: ik(),
      }),
      400,
      "PAYMENT_METHOD_MISMATCH",
    );
    // The spent link opened again: its obligation is paid, so the page shows the receipt (and issues no ticket).
    const reopened = await expectError(
      await call(env, "POST", "/pay/api/session", { body: { token: page.token } }),
      409,
      "OBLIGATION_NOT_OPEN",
    );
    assert.equal(reopened.obligationStatus, "PAID");
    assert.equal(reopened.payment.receipt.reference, payment.paymentId);
    assert.equal(reopened.ticket, undefined);
  } finally {
    await env.close();
  }
});

Deno.test("VENUE_B USD send: a nonce-less transfer of the amount is ambiguous and never credited", async () => {
  const { env, partner, wallet, platform, clientId } = await setUp();
  try {
    const owed = await obligation(env, partner.partnerId, clientId, "ambiguous");
    const instruction = await expectJson(await instruct(partner, owed.obligationId), 200);
    const page = await openPayPage(env, instruction.paymentUrl);
    await expectJson(await page.request("/wallet", { walletAddress: wallet.address, chainId: "0xa4b1" }), 200);
    // The client pays with a usdSend of their own instead: the venue logs it with no nonce.
    const action = usdSendAction({ isMainnet: false, destination: platform, amount: "49.9", time: Date.now() });
    const signature = await signAsWallet(wallet, walletTypedData(action));
    await env.deps.venues.VENUE_B.submitUserSignedAction!({
      action,
      nonce: action.time,
      signature: splitSignature(signature),
    });
    // As if the page's own signature had been relayed and the venue had never recorded its send.
    const [session] = await env.deps.db.read.select().from(paymentSessions)
      .where(eq(paymentSessions.paymentId, instruction.payment.paymentId));
    await withTransaction(env.deps.db, async (tx) => {
      await tx.update(paymentSessions)
        .set({ status: "SIGNED", signedNonce: (session.pendingAction as { nonce: number }).nonce })
        .where(eq(paymentSessions.paymentId, session.paymentId));
      await tx.update(payments).set({ status: "SUBMITTED" }).where(eq(payments.paymentId, session.paymentId));
    });
    const job = await expectJson(await operator(env, "POST", "/operator/v1/jobs/payments/run"), 200);
    assert.deepEqual([job.summary.checked, job.summary.credited], [1, 0]);
    const payment = (await expectJson(
      await partner.call("GET", `/v1/users/ana/payments/${instruction.payment.paymentId}`),
      200,
    )).payment;
    assert.equal(payment.status, "SUBMITTED");
    assert.match(payment.failureReason, /^PAYMENT_LEDGER_BINDING_AMBIGUOUS: /);
    const obligations = (await expectJson(await partner.call("GET", "/v1/users/ana/obligations"), 200)).obligations;
    assert.equal(obligations[0].status, "OPEN");
  } finally {
    await env.close();
  }
});

Deno.test("VENUE_B USD send without a connected VENUE_B account: 422 API_NOT_CONFIGURED, as the route documents", async () => {
  const { env, partner } = await walletSetUp(0);
  try {
    const client = (await findClient(env.deps.db.read, partner.partnerId, "ana"))!;
    const owed = await obligation(env, partner.partnerId, client.id, "never-connected");
    await expectError(await instruct(partner, owed.obligationId), 422, "API_NOT_CONFIGURED");
    // Found by the fuzzer: the route answered 422 without listing it in the OpenAPI document.
    const doc = await expectJson(await call(env, "GET", "/v1/openapi.json"), 200);
    const route = doc.paths["/v1/users/{id}/obligations/{obligationId}/payment-instructions"].post;
    assert.ok(route.responses["422"], "422 is documented");
  } finally {
    await env.close();
  }
});

Deno.test("VENUE_B USD send never sent (the egress budget is spent): 503 PROVIDER_DOWN, no refusal recorded", async () => {
  const { env, partner, wallet, clientId } = await setUp();
  try {
    const owed = await obligation(env, partner.partnerId, clientId, "budget");
    const instruction = await expectJson(await instruct(partner, owed.obligationId), 200);
    const page = await openPayPage(env, instruction.paymentUrl);
    // The send is built from the payer's account mode, read at the venue while the budget lasts.
    const { typedData } = await expectJson(
      await page.request("/wallet", { walletAddress: wallet.address, chainId: "0xa4b1" }),
      200,
    );
    const budget = env.deps.egressBudgets.VENUE_B;
    for (;;) {
      try {
        await budget.spend(1);
      } catch {
        break;
      }
    }
    // Found by the fuzzer: this answered 400 PAYMENT_REJECTED ("the venue refused the signed send") and
    // wrote that on the payment, though the venue never saw the request.
    await expectError(
      await page.request("/signature", { signature: await signAsWallet(wallet, typedData) }),
      503,
      "PROVIDER_DOWN",
    );
    // Nor can a new send be built without asking the venue.
    await expectError(
      await page.request("/wallet", { walletAddress: wallet.address, chainId: "0xa4b1" }),
      503,
      "PROVIDER_DOWN",
    );
    const payment = (await expectJson(
      await partner.call("GET", `/v1/users/ana/payments/${instruction.payment.paymentId}`),
      200,
    )).payment;
    assert.deepEqual([payment.status, payment.failureReason], ["PENDING", null]);
  } finally {
    await env.close();
  }
});

Deno.test("VENUE_B USD send: a unified-account or portfolio-margin payer signs a spot-to-spot sendAsset, which the venue takes and the ledger credits", async (t) => {
  for (const mode of ["unifiedAccount", "portfolioMargin"] as const) {
    await t.step(mode, async () => {
      const { env, partner, wallet, platform, clientId } = await setUp();
      try {
        await setMode(env, wallet.address, mode);
        const owed = await obligation(env, partner.partnerId, clientId, `pooled-${mode}`);
        const instruction = await expectJson(await instruct(partner, owed.obligationId), 200);
        const page = await openPayPage(env, instruction.paymentUrl);
        const { typedData } = await expectJson(
          await page.request("/wallet", { walletAddress: wallet.address, chainId: "0xa4b1" }),
          200,
        );
        // The venue refuses a pooled account's send that names the perp dex ("" / ""): only spot goes.
        assert.deepEqual(
          [typedData.primaryType, typedData.message.sourceDex, typedData.message.destinationDex],
          ["HyperliquidTransaction:SendAsset", "spot", "spot"],
        );
        const outcome = await expectJson(
          await page.request("/signature", { signature: await signAsWallet(wallet, typedData) }),
          200,
        );
        assert.equal(outcome.status, "CONFIRMED");
        const payment = await paymentOf(partner, instruction.payment.paymentId);
        assert.equal(payment.status, "CONFIRMED");
        const ledger = await env.deps.venues.VENUE_B.getLedger!(wallet.address.toLowerCase() as `0x${string}`, 0);
        const send = ledger.find((entry) => entry.type === "send")!;
        assert.deepEqual(
          [send.hash, send.token, send.sourceDex, send.destinationDex, send.destination],
          [payment.txHash, "USDC", "spot", "spot", platform],
        );
      } finally {
        await env.close();
      }
    });
  }
});

Deno.test("VENUE_B USD send: a send with the session's nonce and amount into another dex than the one signed is not the payment", async () => {
  const { env, partner, wallet, platform, clientId } = await setUp();
  try {
    const owed = await obligation(env, partner.partnerId, clientId, "other-dex");
    const instruction = await expectJson(await instruct(partner, owed.obligationId), 200);
    const page = await openPayPage(env, instruction.paymentUrl);
    await expectJson(await page.request("/wallet", { walletAddress: wallet.address, chainId: "0xa4b1" }), 200);
    const signed = await sessionAction(env, instruction.payment.paymentId);
    assert.deepEqual([signed.sourceDex, signed.destinationDex], ["", ""], "a standard payer sends perp to perp");
    // The payer signs, with the session's nonce, the same amount to the platform's spot balance instead.
    await sendOwn(env, wallet, { ...signed, destinationDex: "spot" });
    await markSigned(env, instruction.payment.paymentId);
    const ledger = await env.deps.venues.VENUE_B.getLedger!(wallet.address.toLowerCase() as `0x${string}`, 0);
    const send = ledger.find((entry) => entry.type === "send")!;
    assert.deepEqual(
      [send.nonce, send.amount, send.token, send.destination, send.destinationDex],
      [signed.nonce, "49.9", "USDC", platform, "spot"],
    );

    const job = await expectJson(await operator(env, "POST", "/operator/v1/jobs/payments/run"), 200);
    assert.deepEqual([job.summary.checked, job.summary.credited], [1, 0]);
    const payment = await paymentOf(partner, instruction.payment.paymentId);
    assert.equal(payment.status, "SUBMITTED");
    assert.match(payment.failureReason, /^PAYMENT_LEDGER_BINDING_AMBIGUOUS: /);
    const obligations = (await expectJson(await partner.call("GET", "/v1/users/ana/obligations"), 200)).obligations;
    assert.equal(obligations[0].status, "OPEN");
  } finally {
    await env.close();
  }
});

Deno.test("VENUE_B USD send: 0.0000001 USDC of dust from the payer in the ledger does not stop the check of the payment", async () => {
  const { env, partner, wallet, clientId, platform } = await setUp();
  try {
    // Spot USDC has 8 decimals at the venue: a pooled account can send less than a micro-dollar.
    await setMode(env, wallet.address, "unifiedAccount");
    await sendOwn(env, wallet, ownSend(platform, "0.0000001", { sourceDex: "spot", destinationDex: "spot" }));
    const owed = await obligation(env, partner.partnerId, clientId, "dust");
    const instruction = await expectJson(await instruct(partner, owed.obligationId), 200);
    const page = await openPayPage(env, instruction.paymentUrl);
    await expectJson(await page.request("/wallet", { walletAddress: wallet.address, chainId: "0xa4b1" }), 200);
    const signed = await markSigned(env, instruction.payment.paymentId);

    // Only the dust is in the ledger yet: the payment waits, the job goes on.
    let job = await expectJson(await operator(env, "POST", "/operator/v1/jobs/payments/run"), 200);
    assert.deepEqual([job.summary.checked, job.summary.credited, job.summary.failed], [1, 0, 0]);
    assert.match((await paymentOf(partner, instruction.payment.paymentId)).failureReason, /^PAYMENT_AWAITING_LEDGER: /);

    // The signed send lands: credited, the dust beside it changes nothing.
    await sendOwn(env, wallet, signed);
    job = await expectJson(await operator(env, "POST", "/operator/v1/jobs/payments/run"), 200);
    assert.deepEqual([job.summary.checked, job.summary.credited, job.summary.failed], [1, 1, 0]);
    assert.equal((await paymentOf(partner, instruction.payment.paymentId)).status, "CONFIRMED");
  } finally {
    await env.close();
  }
});
