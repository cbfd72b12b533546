/**
 * A VENUE_B send link whose obligation moved on: paid through another link,
 * or reduced by a negative adjustment. Through the page's API and the
 * VENUE_B simulator: no step of the page lets money move for it (token
 * exchange, wallet, signature), and a send relayed before the other link
 * settled the obligation is held for review, never credited.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { payments, paymentSessions } from "../../db/schema.ts";
import { reduceOpenObligations } from "../../domain/billing/fee_obligations.ts";
import { findClient } from "../../domain/clients/load_client.ts";
import type { UserSignedAction } from "../../venues/types.ts";
import { generateAgentKey } from "../../venues/venue_b/signing.ts";
import type { TestEnv } from "../_helpers/env.ts";
import { call, expectError, expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import { connectWallet, fund, openPage, signAsWallet, type Wallet, walletSetUp } from "../connect/connect_fixture.ts";
import { ik } from "../setup/setup_fixture.ts";
import { openObligation } from "./obligation_fixture.ts";

async function setUp() {
  const { env, partner, wallet } = await walletSetUp(0);
  await connectWallet((await openPage(env, partner)).request, wallet);
  const platform = generateAgentKey().address;
  await fund(env, platform, "1");
  await expectJson(await operator(env, "PUT", "/operator/v1/venue-b-payment-wallet", { address: platform }), 200);
  const client = (await findClient(env.deps.db.read, partner.partnerId, "ana"))!;
  return { env, partner, wallet, platform, clientId: client.id };
}

/** An open USDC obligation of ana: a performance fee, so a negative adjustment can reduce it. */
function obligation(env: TestEnv, partnerId: string, clientId: number, reference: string) {
  return openObligation(env, {
    partnerId,
    clientId,
    reference,
    providerId: "VENUE_B",
    source: "WEEKLY_PERFORMANCE_FEE",
  });
}

/** A payment link for the obligation, its page opened: the token, the ticket's API and the payment's id. */
async function openLink(env: TestEnv, partner: TestPartner, obligationId: string) {
  const instruction = await expectJson(
    await partner.call("POST", `/v1/users/ana/obligations/${obligationId}/payment-instructions`, {
      body: { method: "VENUE_B_USD_SEND" },
      headers: ik(),
    }),
    200,
  );
  const token = instruction.paymentUrl.split("/pay#")[1] as string;
  env.watchedSecrets.add("payment token", token);
  const session = await expectJson(await call(env, "POST", "/pay/api/session", { body: { token } }), 200);
  env.watchedSecrets.add("payment ticket", session.ticket);
  const request = (path: string, body: unknown) =>
    call(env, "POST", `/pay/api${path}`, { body, headers: { authorization: `Bearer ${session.ticket}` } });
  return { token, request, paymentId: instruction.payment.paymentId as string };
}

/** The wallet connects and signs the send the page built; the signature is not sent yet. */
async function signedSend(request: (path: string, body: unknown) => Promise<Response>, wallet: Wallet) {
  const { typedData } = await expectJson(
    await request("/wallet", { walletAddress: wallet.address, chainId: "0xa4b1" }),
    200,
  );
  return await signAsWallet(wallet, typedData);
}

async function sends(env: TestEnv, platform: string) {
  const response = await fetch(`${env.venueUrls.venueB}/_control/ledger?user=${platform}`);
  return (await response.json()).sends as unknown[];
}

async function paymentOf(partner: TestPartner, paymentId: string) {
  return (await expectJson(await partner.call("GET", `/v1/users/ana/payments/${paymentId}`), 200)).payment;
}

async function paidEvents(partner: TestPartner) {
  return (await expectJson(await partner.call("GET", "/v1/events?type=obligation.paid"), 200)).events;
}

Deno.test("VENUE_B USD send: once one link paid the obligation, the other refuses at every step and nothing is relayed", async () => {
  const { env, partner, wallet, platform, clientId } = await setUp();
  try {
    const owed = await obligation(env, partner.partnerId, clientId, "2026-11-02/2026-11-09");
    const first = await openLink(env, partner, owed.obligationId);
    const second = await openLink(env, partner, owed.obligationId);
    // The second page got as far as a signature before the first link paid.
    const late = await signedSend(second.request, wallet);
    const paid = await expectJson(
      await first.request("/signature", { signature: await signedSend(first.request, wallet) }),
      200,
    );
    assert.equal(paid.status, "CONFIRMED");
    assert.equal((await sends(env, platform)).length, 1);

    const refusal = await expectError(
      await second.request("/signature", { signature: late }),
      409,
      "OBLIGATION_NOT_OPEN",
    );
    assert.equal(refusal.obligationStatus, "PAID");
    assert.equal((await sends(env, platform)).length, 1, "the signature was not relayed");
    await expectError(
      await second.request("/wallet", { walletAddress: wallet.address, chainId: "0xa4b1" }),
      409,
      "OBLIGATION_NOT_OPEN",
    );
    await expectError(
      await call(env, "POST", "/pay/api/session", { body: { token: second.token } }),
      409,
      "OBLIGATION_NOT_OPEN",
    );
    const superseded = await paymentOf(partner, second.paymentId);
    assert.equal(superseded.status, "SUPERSEDED");
    assert.match(superseded.failureReason, /^OBLIGATION_NOT_OPEN: /);
    assert.equal((await paidEvents(partner)).length, 1);
  } finally {
    await env.close();
  }
});

Deno.test("VENUE_B USD send: two links signed at once: one send reaches the venue, the other answers 409 PAYMENT_IN_PROGRESS", async () => {
  const { env, partner, wallet, platform, clientId } = await setUp();
  try {
    const owed = await obligation(env, partner.partnerId, clientId, "2026-11-02/2026-11-09");
    const links = [await openLink(env, partner, owed.obligationId), await openLink(env, partner, owed.obligationId)];
    const signatures = [await signedSend(links[0].request, wallet), await signedSend(links[1].request, wallet)];
    // A slow venue: both signatures are at the service while the first relay is still on its way.
    await fetch(`${env.venueUrls.venueB}/_control/faults`, {
      method: "PUT",
      body: JSON.stringify({ mode: "SLOW", ms: 400 }),
    }).then((response) => response.body?.cancel());
    const answers = await Promise.all(
      links.map((link, index) => link.request("/signature", { signature: signatures[index] })),
    );
    const outcomes = await Promise.all(answers.map(async (answer) => [answer.status, await answer.json()]));
    const paid = outcomes.filter(([status]) => status === 200);
    const busy = outcomes.filter(([status, body]) => status === 409 && body.error.code === "PAYMENT_IN_PROGRESS");
    assert.deepEqual([paid.length, busy.length], [1, 1], JSON.stringify(outcomes));
    assert.equal(paid[0][1].status, "CONFIRMED");
    assert.equal((await sends(env, platform)).length, 1, "one send reached the venue");
    assert.equal((await paidEvents(partner)).length, 1);
    // Opened again later, the other link says the charge is paid.
    const other = links[outcomes.indexOf(busy[0])];
    await expectError(
      await call(env, "POST", "/pay/api/session", { body: { token: other.token } }),
      409,
      "OBLIGATION_NOT_OPEN",
    );
  } finally {
    await env.close();
  }
});

Deno.test("VENUE_B USD send: a send relayed before another link settled the obligation is held for review, not credited", async () => {
  const { env, partner, wallet, platform, clientId } = await setUp();
  try {
    const owed = await obligation(env, partner.partnerId, clientId, "2026-11-02/2026-11-09");
    const early = await openLink(env, partner, owed.obligationId);
    const other = await openLink(env, partner, owed.obligationId);
    // The first page's signature reaches the venue, whose answer is lost and whose ledger the page could not
    // read yet: relayed, not credited (as the page records it).
    const signature = await signedSend(early.request, wallet);
    const [session] = await env.deps.db.read.select().from(paymentSessions)
      .where(eq(paymentSessions.paymentId, early.paymentId));
    const approvals = env.deps.venues.VENUE_B.walletApprovals!;
    const signed = approvals.withSignature(session.pendingAction as UserSignedAction["action"], signature);
    await env.deps.venues.VENUE_B.submitUserSignedAction!(signed);
    await withTransaction(env.deps.db, async (tx) => {
      await tx.update(paymentSessions).set({ status: "SIGNED", signedNonce: signed.nonce })
        .where(eq(paymentSessions.paymentId, early.paymentId));
      await tx.update(payments).set({ status: "SUBMITTED" }).where(eq(payments.paymentId, early.paymentId));
    });

    // The other link pays the obligation meanwhile.
    const paid = await expectJson(
      await other.request("/signature", { signature: await signedSend(other.request, wallet) }),
      200,
    );
    assert.equal(paid.status, "CONFIRMED");
    assert.equal((await paymentOf(partner, early.paymentId)).status, "SUPERSEDED");

    // The payments job finds the first send in the ledger: it pays nothing, all of it waits for a person.
    const job = await expectJson(await operator(env, "POST", "/operator/v1/jobs/payments/run"), 200);
    assert.deepEqual([job.summary.credited, job.summary.reviewed], [0, 1]);
    const held = await paymentOf(partner, early.paymentId);
    assert.deepEqual(
      [held.status, held.review, held.overpaidTokenAmount, held.confirmedAt !== null],
      ["REVIEW", "OBLIGATION_ALREADY_SETTLED", "49900000", true],
    );
    assert.match(held.txHash, /^0x[0-9a-f]{64}$/);
    assert.equal((await sends(env, platform)).length, 2, "both sends reached the venue");
    assert.equal((await paidEvents(partner)).length, 1, "one obligation.paid");
  } finally {
    await env.close();
  }
});

Deno.test("VENUE_B USD send: a link issued before a negative adjustment reduced the obligation refuses with PAYMENT_SUPERSEDED", async () => {
  const { env, partner, wallet, platform, clientId } = await setUp();
  try {
    const owed = await obligation(env, partner.partnerId, clientId, "2026-11-02/2026-11-09");
    const link = await openLink(env, partner, owed.obligationId);
    const signature = await signedSend(link.request, wallet);
    await withTransaction(
      env.deps.db,
      (tx) =>
        reduceOpenObligations(
          tx,
          { clientId, providerId: "VENUE_B" },
          19_900_000,
          [owed.obligationId],
          "stm_adjustment1",
          env.clock.now(),
        ),
    );
    await expectError(await link.request("/signature", { signature }), 409, "PAYMENT_SUPERSEDED");
    await expectError(
      await call(env, "POST", "/pay/api/session", { body: { token: link.token } }),
      409,
      "PAYMENT_SUPERSEDED",
    );
    assert.equal((await sends(env, platform)).length, 0);
    const payment = await paymentOf(partner, link.paymentId);
    assert.equal(payment.status, "SUPERSEDED");
    assert.match(payment.failureReason, /^PAYMENT_SUPERSEDED: /);
    // A new link asks for what is owed now, and pays it.
    const fresh = await openLink(env, partner, owed.obligationId);
    assert.equal((await paymentOf(partner, fresh.paymentId)).amountUsd, 30);
    const paid = await expectJson(
      await fresh.request("/signature", { signature: await signedSend(fresh.request, wallet) }),
      200,
    );
    assert.equal(paid.status, "CONFIRMED");
    const [event] = await paidEvents(partner);
    assert.equal(event.data.amountUsd, 30);
  } finally {
    await env.close();
  }
});
