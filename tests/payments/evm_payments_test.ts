/**
 * EVM transfer payments against real chain software: two anvil nodes with
 * the real chain ids of Arbitrum One and BNB Smart Chain, test tokens
 * deployed on them, and transfers made by real wallets. Every confirmation
 * is verified on chain by the service through its JSON-RPC configuration.
 */
import assert from "node:assert/strict";
import { HDKey } from "@scure/bip32";
import { bytesToHex } from "@noble/hashes/utils.js";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { withTransaction } from "../../db/client.ts";
import { payments } from "../../db/schema.ts";
import { reduceOpenObligations } from "../../domain/billing/fee_obligations.ts";
import { newId } from "../../domain/ids.ts";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { createPartner, expectError, expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import { startChain, type TestChain } from "../_helpers/evm/chain.ts";
import { ik } from "../setup/setup_fixture.ts";
import { clientIdOf } from "../performance/trade_fixture.ts";
import { openObligation } from "./obligation_fixture.ts";

const RECIPIENT = "0x00000000000000000000000000000000000fee01";
const OTHER = "0x00000000000000000000000000000000000bad02";
const PAYER = 1;
const STRANGER = 2;

interface World {
  env: TestEnv;
  partner: TestPartner;
  clientId: number;
  arbitrum: TestChain;
  bnb: TestChain;
  tokens: { arbUsdt: Hex; arbUsdc: Hex; bnbUsdt: Hex };
  payer: Hex;
  /** A transfer to the recipient made before any instruction, in a block dated an hour ago. */
  oldTransfer: Hex;
}

async function world(): Promise<World> {
  // Arbitrum's first blocks are dated an hour back: a transfer made there is older than any instruction.
  const hourAgo = Math.floor(Date.now() / 1000) - 3600;
  const [arbitrum, bnb] = await Promise.all([startChain(42161, { timestamp: hourAgo }), startChain(56)]);
  const tokens = {
    arbUsdt: await arbitrum.deployToken("USDT", 6),
    arbUsdc: await arbitrum.deployToken("USDC", 6),
    bnbUsdt: await bnb.deployToken("USDT", 18),
  };
  const payer = arbitrum.wallet(PAYER).address;
  for (
    const [chain, token, amount] of [
      [arbitrum, tokens.arbUsdt, 10_000n * 10n ** 6n],
      [arbitrum, tokens.arbUsdc, 10_000n * 10n ** 6n],
      [bnb, tokens.bnbUsdt, 10_000n * 10n ** 18n],
    ] as const
  ) {
    await chain.mint(token, payer, amount);
    await chain.mint(token, chain.wallet(STRANGER).address, amount);
  }
  const oldTransfer = await arbitrum.transfer(tokens.arbUsdt, PAYER, RECIPIENT, 49_900_001n);
  // From here on Arbitrum's blocks carry the time of day.
  await arbitrum.setNextBlockTime(Math.floor(Date.now() / 1000));
  await arbitrum.mine(1);
  const env = await startTestEnv({
    env: {
      EVM_RPC_ARBITRUM: arbitrum.url,
      EVM_RPC_BNB: bnb.url,
      EVM_TOKENS: JSON.stringify({
        arbitrum: { USDT: tokens.arbUsdt, USDC: tokens.arbUsdc },
        bnb: { USDT: tokens.bnbUsdt },
      }),
      EVM_CONFIRMATIONS: JSON.stringify({ arbitrum: 1, bnb: 3 }),
    },
  });
  const partner = await createPartner(env, { partnerId: "payer" });
  await expectJson(await partner.call("POST", "/v1/users", { body: { externalUserId: "ana" }, headers: ik() }), 201);
  return { env, partner, clientId: await clientIdOf(env, "ana", "payer"), arbitrum, bnb, tokens, payer, oldTransfer };
}

async function stop(w: World) {
  await w.env.close();
  await Promise.all([w.arbitrum.stop(), w.bnb.stop()]);
}

/** An open obligation of ana at VENUE_A (USDT) or VENUE_B (USDC). */
function obligation(
  w: World,
  reference: string,
  amountMicros?: number,
  providerId = "VENUE_A",
  source = "MONTHLY_SUBSCRIPTION",
) {
  return openObligation(w.env, {
    partnerId: "payer",
    clientId: w.clientId,
    reference,
    amountMicros,
    providerId,
    source,
  });
}

function instruct(w: World, obligationId: string, body: Record<string, unknown>) {
  return w.partner.call("POST", `/v1/users/ana/obligations/${obligationId}/payment-instructions`, {
    body: { networkId: "arbitrum", token: "USDT", payerAddress: w.payer, ...body },
    headers: ik(),
  });
}

function confirm(w: World, paymentId: string, txHash: string, headers = ik()) {
  return w.partner.call("POST", `/v1/users/ana/payments/${paymentId}/confirm`, { body: { txHash }, headers });
}

async function paidEvents(w: World) {
  const feed = await expectJson(await w.partner.call("GET", "/v1/events?type=obligation.paid"), 200);
  return feed.events;
}

Deno.test("EVM payments: instructions, exact payment credited once, and every refusal of the spec", async (t) => {
  const w = await world();
  try {
    await t.step("instructions: refusals in the spec's codes, then the exact amount with its tag", async () => {
      const owed = await obligation(w, "2026-11");
      await expectError(await instruct(w, owed.obligationId, {}), 400, "RECIPIENT_NOT_CONFIGURED");
      for (const network of ["arbitrum", "bnb"]) {
        const set = await expectJson(
          await operator(w.env, "PUT", `/operator/v1/payment-recipients/${network}`, { address: RECIPIENT }),
          200,
        );
        assert.deepEqual([set.address, set.receiverVersion], [RECIPIENT, 1]);
      }
      await expectError(await instruct(w, owed.obligationId, { networkId: "polygon" }), 400, "NETWORK_NOT_ENABLED");
      await expectError(await instruct(w, owed.obligationId, { token: "DAI" }), 400, "TOKEN_NOT_SUPPORTED");
      await expectError(await instruct(w, owed.obligationId, { token: "USDC" }), 400, "CURRENCY_MISMATCH");
      await expectError(await instruct(w, owed.obligationId, { payerAddress: "0x12" }), 400, "INVALID_PAYER");
      await expectError(await instruct(w, "obl_unknown", {}), 404, "NOT_FOUND");

      const first = await expectJson(await instruct(w, owed.obligationId, {}), 200);
      const second = await expectJson(await instruct(w, owed.obligationId, {}), 200);
      for (const { payment } of [first, second]) {
        assert.deepEqual(
          [payment.status, payment.method, payment.amountUsd, payment.tokenSymbol, payment.tokenDecimals],
          ["PENDING", "EVM_TRANSFER", 49.9, "USDT", 6],
        );
        assert.deepEqual([payment.recipient, payment.receiverVersion, payment.networkId], [RECIPIENT, 1, "arbitrum"]);
        const tag = BigInt(payment.tokenAmount) - 49_900_000n;
        assert.ok(tag >= 1n && tag <= 9_999n, `a tag under a cent: ${tag}`);
      }
      assert.notEqual(
        first.payment.tokenAmount,
        second.payment.tokenAmount,
        "no two open instructions share an amount",
      );
      assert.match(first.instructions, /^Envie exatamente 49,9\d{0,5} USDT .* Arbitrum One \(chain id 42161\)/);
      assert.match(first.instructions, / até \d{2}\/\d{2}\/\d{4} às \d{2}:\d{2} \(horário de Brasília\)\./);
      assert.match(first.paymentUrl, /\/pay#[A-Za-z0-9_-]{43}$/, "the checkout's link, the token in the fragment");
      assert.notEqual(first.paymentUrl, second.paymentUrl);
      assert.ok(first.instructions.includes(w.payer) && first.instructions.includes(RECIPIENT));
    });

    await t.step("confirmation refusals: not credited (202) and refused (4xx), nothing paid", async () => {
      const owed = await obligation(w, "refusals");
      const { payment } = await expectJson(await instruct(w, owed.obligationId, {}), 200);
      const exact = BigInt(payment.tokenAmount);
      const expect202 = async (hash: string, code: string) => {
        const body = await expectJson(await confirm(w, payment.paymentId, hash), 202);
        assert.deepEqual([body.credited, body.code, body.payment.status], [false, code, "SUBMITTED"]);
        assert.ok(body.payment.failureReason.startsWith(`${code}: `));
      };
      await expectError(await confirm(w, payment.paymentId, "0x1234"), 400, "INVALID_TX_HASH");
      await expect202(await w.arbitrum.transfer(w.tokens.arbUsdt, PAYER, RECIPIENT, exact - 1n), "PAYMENT_UNDERPAID");
      await expect202(await w.arbitrum.transfer(w.tokens.arbUsdt, STRANGER, RECIPIENT, exact), "PAYMENT_WRONG_SENDER");
      await expect202(
        await w.arbitrum.transfer(w.tokens.arbUsdc, PAYER, RECIPIENT, exact),
        "PAYMENT_WRONG_TOKEN_OR_RECIPIENT",
      );
      await expect202(
        await w.arbitrum.transfer(w.tokens.arbUsdt, PAYER, OTHER, exact),
        "PAYMENT_WRONG_TOKEN_OR_RECIPIENT",
      );
      await expect202(await w.bnb.transfer(w.tokens.bnbUsdt, PAYER, RECIPIENT, exact), "PAYMENT_WRONG_NETWORK");
      // More than the payer holds, mined anyway (gas given): the transaction reverted.
      await expect202(
        await w.arbitrum.transfer(w.tokens.arbUsdt, PAYER, RECIPIENT, 10n ** 30n, 100_000n),
        "PAYMENT_TX_FAILED",
      );
      await expect202(w.oldTransfer, "PAYMENT_TX_TOO_OLD");
      await expect202(`0x${"ab".repeat(32)}`, "PAYMENT_TX_NOT_FOUND");
      const obligations = await expectJson(await w.partner.call("GET", "/v1/users/ana/obligations"), 200);
      assert.equal(
        obligations.obligations.find((o: { obligationId: string }) => o.obligationId === owed.obligationId)
          .status,
        "OPEN",
      );
      assert.equal((await paidEvents(w)).length, 0);
    });

    await t.step("exact payment: credited once, obligation paid, the same hash again credits nothing", async () => {
      const owed = await obligation(w, "exact");
      const { payment } = await expectJson(await instruct(w, owed.obligationId, {}), 200);
      const hash = await w.arbitrum.transfer(w.tokens.arbUsdt, PAYER, RECIPIENT, BigInt(payment.tokenAmount));
      const body = await expectJson(await confirm(w, payment.paymentId, hash), 200);
      assert.deepEqual([body.credited, body.code, body.payment.status], [true, undefined, "CONFIRMED"]);
      assert.equal(body.payment.txHash, hash);
      const again = await expectJson(await confirm(w, payment.paymentId, hash), 200);
      assert.equal(again.credited, true);
      await expectError(await confirm(w, payment.paymentId, `0x${"cd".repeat(32)}`), 409, "TX_MISMATCH");
      const paid = (await paidEvents(w)).filter((e: { data: { obligationId: string } }) =>
        e.data.obligationId === owed.obligationId
      );
      assert.equal(paid.length, 1);
      await expectError(await instruct(w, owed.obligationId, {}), 409, "OBLIGATION_NOT_OPEN");

      // The same transaction offered for another obligation's instruction.
      const other = await obligation(w, "other");
      const { payment: otherPayment } = await expectJson(await instruct(w, other.obligationId, {}), 200);
      await expectError(await confirm(w, otherPayment.paymentId, hash), 409, "TX_ALREADY_USED");
      const fetched = await expectJson(await w.partner.call("GET", `/v1/users/ana/payments/${payment.paymentId}`), 200);
      assert.equal(fetched.payment.status, "CONFIRMED");
    });

    await t.step("overpayment settles the obligation and goes to manual review", async () => {
      const owed = await obligation(w, "over");
      const { payment } = await expectJson(await instruct(w, owed.obligationId, {}), 200);
      const hash = await w.arbitrum.transfer(w.tokens.arbUsdt, PAYER, RECIPIENT, BigInt(payment.tokenAmount) + 500n);
      const body = await expectJson(await confirm(w, payment.paymentId, hash), 200);
      assert.deepEqual(
        [body.credited, body.code, body.payment.review, body.payment.overpaidTokenAmount],
        [true, "PAYMENT_OVERPAID_MANUAL_REVIEW", "OVERPAID", "500"],
      );
    });

    await t.step("BNB needs 3 confirmations: awaiting, then credited; an expired instruction refuses", async () => {
      const owed = await obligation(w, "bnb");
      const { payment } = await expectJson(await instruct(w, owed.obligationId, { networkId: "bnb" }), 200);
      assert.equal(payment.tokenDecimals, 18);
      const hash = await w.bnb.transfer(w.tokens.bnbUsdt, PAYER, RECIPIENT, BigInt(payment.tokenAmount));
      const waiting = await expectJson(await confirm(w, payment.paymentId, hash), 202);
      assert.equal(waiting.code, "PAYMENT_AWAITING_CONFIRMATIONS");
      await w.bnb.mine(2);
      // The payments job checks submitted transfers again: this one is buried deep enough now (the other one
      // checked is the refusals' instruction, whose last hash is still nowhere).
      const job = await expectJson(await operator(w.env, "POST", "/operator/v1/jobs/payments/run"), 200);
      assert.deepEqual([job.summary.checked, job.summary.credited], [2, 1]);
      const credited = await expectJson(
        await w.partner.call("GET", `/v1/users/ana/payments/${payment.paymentId}`),
        200,
      );
      assert.equal(credited.payment.status, "CONFIRMED");
      assert.equal((await expectJson(await confirm(w, payment.paymentId, hash), 200)).credited, true);

      const late = await obligation(w, "late");
      const { payment: stale } = await expectJson(await instruct(w, late.obligationId, {}), 200);
      w.env.clock.freeze(Date.parse(stale.expiresAt));
      await expectError(await confirm(w, stale.paymentId, hash), 409, "PAYMENT_EXPIRED");
      const unpaid = await obligation(w, "unpaid");
      const { payment: forgotten } = await expectJson(await instruct(w, unpaid.obligationId, {}), 200);
      w.env.clock.freeze(Date.parse(forgotten.expiresAt));
      const expiry = await expectJson(await operator(w.env, "POST", "/operator/v1/jobs/payments/run"), 200);
      assert.ok(expiry.summary.expired >= 1, "every instruction issued with it expired too");
      const gone = await expectJson(await w.partner.call("GET", `/v1/users/ana/payments/${forgotten.paymentId}`), 200);
      assert.equal(gone.payment.status, "EXPIRED");
    });
  } finally {
    await stop(w);
  }
});

Deno.test("EVM payments: 20 concurrent confirmations of one transfer credit once, with one obligation.paid", async () => {
  const w = await world();
  try {
    await operator(w.env, "PUT", "/operator/v1/payment-recipients/arbitrum", { address: RECIPIENT });
    const owed = await obligation(w, "race");
    const { payment } = await expectJson(await instruct(w, owed.obligationId, {}), 200);
    const hash = await w.arbitrum.transfer(w.tokens.arbUsdt, PAYER, RECIPIENT, BigInt(payment.tokenAmount));
    const answers = await Promise.all(Array.from({ length: 20 }, () => confirm(w, payment.paymentId, hash)));
    const bodies = await Promise.all(answers.map((response) => response.json()));
    assert.deepEqual(new Set(answers.map((response) => response.status)), new Set([200]));
    assert.ok(bodies.every((body) => body.credited === true && body.payment.txHash === hash));
    assert.equal((await paidEvents(w)).length, 1);
  } finally {
    await stop(w);
  }
});

Deno.test("deposit invoices: an exclusive address per invoice from the operator's xpub, paid by any wallet", async () => {
  const w = await world();
  try {
    // The operator's wallet, kept off the service: only its account-level extended public key is configured.
    const account = HDKey.fromMasterSeed(new Uint8Array(32).fill(7)).derive("m/44'/60'/0'");
    const addressAt = (index: number) =>
      privateKeyToAccount(`0x${bytesToHex(account.deriveChild(0).deriveChild(index).privateKey!)}`).address
        .toLowerCase();
    await expectError(
      await operator(w.env, "PUT", "/operator/v1/deposit-xpub/arbitrum", { xpub: account.privateExtendedKey }),
      400,
      "VALIDATION_ERROR",
    );
    const owed = await obligation(w, "invoice");
    const invoiceFor = (networkId: string) =>
      w.partner.call("POST", `/v1/users/ana/obligations/${owed.obligationId}/payment-instructions`, {
        body: { method: "DEPOSIT_INVOICE", networkId },
        headers: ik(),
      });
    await expectError(await invoiceFor("arbitrum"), 400, "RECIPIENT_NOT_CONFIGURED");
    await expectJson(
      await operator(w.env, "PUT", "/operator/v1/deposit-xpub/arbitrum", { xpub: account.publicExtendedKey }),
      200,
    );
    const first = await expectJson(await invoiceFor("arbitrum"), 200);
    const second = await expectJson(await invoiceFor("arbitrum"), 200);
    assert.equal(first.payment, undefined, "an invoice instead of a payment");
    assert.deepEqual(
      [first.invoice.address, first.invoice.derivationIndex, first.invoice.tokenAmount, first.invoice.tokenSymbol],
      [addressAt(0), 0, "49900000", "USDT"],
    );
    assert.deepEqual([second.invoice.address, second.invoice.derivationIndex], [addressAt(1), 1]);
    assert.match(first.instructions, /de qualquer carteira para 0x[0-9a-f]{40}/);

    const hash = await w.arbitrum.transfer(w.tokens.arbUsdt, STRANGER, first.invoice.address, 49_900_000n);
    const paid = await expectJson(await confirm(w, first.invoice.paymentId, hash), 200);
    assert.deepEqual([paid.credited, paid.payment.method, paid.payment.status], [true, "DEPOSIT_INVOICE", "CONFIRMED"]);
    assert.equal((await paidEvents(w)).length, 1);
  } finally {
    await stop(w);
  }
});

Deno.test("payments job: a payment whose check throws is logged and counted, the EVM payment behind it is credited", async () => {
  const w = await world();
  try {
    await operator(w.env, "PUT", "/operator/v1/payment-recipients/bnb", { address: RECIPIENT });
    // A corrupt row ahead of it in the job's order: a submitted VENUE_B send whose page session is gone, so
    // the nonce it was signed with cannot be read (its check throws a TypeError, not an ApiError).
    const usdc = await obligation(w, "corrupt", 49_900_000, "VENUE_B");
    const now = w.env.clock.now();
    const corruptId = newId("pay", now);
    await withTransaction(w.env.deps.db, (tx) =>
      tx.insert(payments).values({
        paymentId: corruptId,
        partnerId: "payer",
        clientId: w.clientId,
        obligationId: usdc.obligationId,
        method: "VENUE_B_USD_SEND",
        status: "SUBMITTED",
        amountMicros: 49_900_000,
        networkId: "venue_b",
        tokenSymbol: "USDC",
        tokenDecimals: 6,
        tokenAmount: "49900000",
        recipient: RECIPIENT,
        payerAddress: w.payer,
        issuedAt: now,
        issuedWallAt: Date.now(),
        expiresAt: now + 60_000,
        updatedAt: now,
      }));
    const owed = await obligation(w, "behind");
    const { payment } = await expectJson(await instruct(w, owed.obligationId, { networkId: "bnb" }), 200);
    const hash = await w.bnb.transfer(w.tokens.bnbUsdt, PAYER, RECIPIENT, BigInt(payment.tokenAmount));
    assert.equal(
      (await expectJson(await confirm(w, payment.paymentId, hash), 202)).code,
      "PAYMENT_AWAITING_CONFIRMATIONS",
    );
    await w.bnb.mine(2);

    const job = await expectJson(await operator(w.env, "POST", "/operator/v1/jobs/payments/run"), 200);
    assert.deepEqual([job.summary.checked, job.summary.credited, job.summary.failed], [2, 1, 1]);
    const credited = await expectJson(await w.partner.call("GET", `/v1/users/ana/payments/${payment.paymentId}`), 200);
    assert.equal(credited.payment.status, "CONFIRMED");
    const line = w.env.logs.map((text) => JSON.parse(text)).find((entry) => entry.message === "payment check failed");
    assert.ok(line, "the failure is logged");
    assert.deepEqual([line.level, line.paymentId, line.errorClass], [
      "error",
      corruptId,
      "TypeError",
    ]);
  } finally {
    await stop(w);
  }
});

/** A negative adjustment of `statementId` takes `micros` off ana's open VENUE_A performance fees. */
async function reduce(w: World, obligationId: string, micros: number, statementId: string) {
  const left = await withTransaction(
    w.env.deps.db,
    (tx) =>
      reduceOpenObligations(
        tx,
        { clientId: w.clientId, providerId: "VENUE_A" },
        micros,
        [obligationId],
        statementId,
        w.env.clock.now(),
      ),
  );
  assert.equal(left, 0, "all of it taken off the obligation");
}

async function paymentOf(w: World, paymentId: string) {
  return (await expectJson(await w.partner.call("GET", `/v1/users/ana/payments/${paymentId}`), 200)).payment;
}

async function obligationOf(w: World, obligationId: string) {
  const { obligations } = await expectJson(await w.partner.call("GET", "/v1/users/ana/obligations"), 200);
  return obligations.find((o: { obligationId: string }) => o.obligationId === obligationId);
}

Deno.test("EVM payments: an instruction issued before its obligation was reduced settles what is owed now; the rest goes to review", async () => {
  const w = await world();
  try {
    await operator(w.env, "PUT", "/operator/v1/payment-recipients/arbitrum", { address: RECIPIENT });
    const owed = await obligation(w, "2026-10-26/2026-11-02", 50_000_000, "VENUE_A", "WEEKLY_PERFORMANCE_FEE");
    const { payment: old } = await expectJson(await instruct(w, owed.obligationId, {}), 200);
    assert.equal(old.amountUsd, 50);

    // A negative adjustment takes 20 off: the older instruction no longer states what is owed.
    await reduce(w, owed.obligationId, 20_000_000, "stm_adjustment1");
    const superseded = await paymentOf(w, old.paymentId);
    assert.equal(superseded.status, "SUPERSEDED");
    assert.match(superseded.failureReason, /^PAYMENT_SUPERSEDED: /);
    // Nothing arrived for it: the confirmation says the instruction is superseded (no "resend" 202).
    await expectError(await confirm(w, old.paymentId, `0x${"ab".repeat(32)}`), 409, "PAYMENT_SUPERSEDED");
    const fresh = await expectJson(await instruct(w, owed.obligationId, {}), 200);
    assert.equal(fresh.payment.amountUsd, 30);

    // The payer sends the old instruction's amount anyway: it settles the 30 still owed, the excess is reviewed.
    const hash = await w.arbitrum.transfer(w.tokens.arbUsdt, PAYER, RECIPIENT, BigInt(old.tokenAmount));
    const body = await expectJson(await confirm(w, old.paymentId, hash), 200);
    assert.deepEqual(
      [body.credited, body.code, body.payment.status, body.payment.review, body.payment.overpaidTokenAmount],
      [true, "PAYMENT_OVERPAID_MANUAL_REVIEW", "CONFIRMED", "OVERPAID", String(BigInt(old.tokenAmount) - 30_000_000n)],
    );
    const settled = await obligationOf(w, owed.obligationId);
    assert.deepEqual([settled.status, settled.amountUsd], ["PAID", 30]);
    const paid = await paidEvents(w);
    assert.equal(paid.length, 1);
    assert.deepEqual([paid[0].data.amountUsd, paid[0].data.paymentId], [30, old.paymentId]);

    // The instruction issued after the reduction is superseded by the settlement.
    const after = await paymentOf(w, fresh.payment.paymentId);
    assert.equal(after.status, "SUPERSEDED");
    assert.match(after.failureReason, /^OBLIGATION_NOT_OPEN: /);
    const refused = await expectError(
      await confirm(w, fresh.payment.paymentId, `0x${"cd".repeat(32)}`),
      409,
      "OBLIGATION_NOT_OPEN",
    );
    assert.equal(refused.obligationStatus, "PAID");
    // Its transfer made anyway pays nothing: all of it is held for review, and nothing says it was credited.
    const second = await w.arbitrum.transfer(w.tokens.arbUsdt, PAYER, RECIPIENT, BigInt(fresh.payment.tokenAmount));
    const held = await expectJson(await confirm(w, fresh.payment.paymentId, second), 202);
    assert.deepEqual(
      [held.credited, held.code, held.payment.status, held.payment.review, held.payment.overpaidTokenAmount],
      [false, "OBLIGATION_ALREADY_SETTLED", "REVIEW", "OBLIGATION_ALREADY_SETTLED", fresh.payment.tokenAmount],
    );
    assert.equal(
      (await expectJson(await confirm(w, fresh.payment.paymentId, second), 202)).code,
      "OBLIGATION_ALREADY_SETTLED",
    );
    // Held for review, the transaction pays no other obligation either.
    const other = await obligation(w, "other");
    const { payment: otherPayment } = await expectJson(await instruct(w, other.obligationId, {}), 200);
    await expectError(await confirm(w, otherPayment.paymentId, second), 409, "TX_ALREADY_USED");
    assert.equal((await paidEvents(w)).length, 1);
  } finally {
    await stop(w);
  }
});

Deno.test("EVM payments: a transfer awaiting confirmations when another instruction settles the obligation is checked on and held for review", async () => {
  const w = await world();
  try {
    for (const network of ["arbitrum", "bnb"]) {
      await operator(w.env, "PUT", `/operator/v1/payment-recipients/${network}`, { address: RECIPIENT });
    }
    const owed = await obligation(w, "2026-11");
    const { payment: slow } = await expectJson(await instruct(w, owed.obligationId, { networkId: "bnb" }), 200);
    const { payment: fast } = await expectJson(await instruct(w, owed.obligationId, {}), 200);
    const slowHash = await w.bnb.transfer(w.tokens.bnbUsdt, PAYER, RECIPIENT, BigInt(slow.tokenAmount));
    assert.equal(
      (await expectJson(await confirm(w, slow.paymentId, slowHash), 202)).code,
      "PAYMENT_AWAITING_CONFIRMATIONS",
    );
    const fastHash = await w.arbitrum.transfer(w.tokens.arbUsdt, PAYER, RECIPIENT, BigInt(fast.tokenAmount));
    assert.equal((await expectJson(await confirm(w, fast.paymentId, fastHash), 200)).credited, true);
    assert.equal((await paymentOf(w, slow.paymentId)).status, "SUPERSEDED");

    await w.bnb.mine(2);
    const job = await expectJson(await operator(w.env, "POST", "/operator/v1/jobs/payments/run"), 200);
    assert.deepEqual([job.summary.checked, job.summary.credited, job.summary.reviewed], [1, 0, 1]);
    const held = await paymentOf(w, slow.paymentId);
    assert.deepEqual(
      [held.status, held.review, held.overpaidTokenAmount, held.txHash],
      ["REVIEW", "OBLIGATION_ALREADY_SETTLED", slow.tokenAmount, slowHash],
    );
    assert.equal((await paidEvents(w)).length, 1);
  } finally {
    await stop(w);
  }
});
