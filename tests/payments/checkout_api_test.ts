/**
 * The hosted checkout's API for on-chain payments (EVM_TRANSFER and
 * DEPOSIT_INVOICE), against a real EVM node (anvil with Arbitrum One's chain
 * id, a 6-decimal test USDT) and the service's real HTTP stack on a libSQL
 * file: the instruction carries the page's link, the link's exchange answers
 * the page's view with exact amounts, an EIP-681 URI and its QR code, and
 * the status follows a transfer from the node's first sight of it through
 * N of M confirmations to the payments job's credit and its receipt.
 */
import assert from "node:assert/strict";
import type { Hex } from "viem";
import { withTransaction } from "../../db/client.ts";
import { performanceFeeSource, reduceOpenObligations } from "../../domain/billing/fee_obligations.ts";
import { formatDec } from "../../venues/decimal.ts";
import { DAY_MS, HOUR_MS } from "../../domain/clock.ts";
import { call, expectError, expectJson } from "../_helpers/http.ts";
import {
  exchange,
  instruct,
  later,
  obligation,
  openPage,
  PAYER,
  RECIPIENT,
  REQUIRED,
  RETURN_URL,
  runPayments,
  status,
  statusOf,
  stop,
  STRANGER,
  tokenOf,
  world,
} from "./checkout_fixture.ts";
import { ik } from "../setup/setup_fixture.ts";
import { decodeQrDataUrl } from "./qr_decode.ts";

Deno.test("checkout API: the instruction's page link, the view with exact amounts, and the link's refusals", async (t) => {
  const w = await world();
  try {
    const owed = await obligation(w, "view");
    const key = ik();
    const instruction = await expectJson(await instruct(w, owed.obligationId, {}, key), 200);
    const { payment } = instruction;

    await t.step("the instruction carries the page link; its replay the same one", async () => {
      tokenOf(instruction.paymentUrl);
      const replay = await expectJson(await instruct(w, owed.obligationId, {}, key), 200);
      assert.equal(replay.paymentUrl, instruction.paymentUrl);
      assert.equal(replay.payment.paymentId, payment.paymentId);
      assert.match(instruction.instructions, /^Envie exatamente 49,9\d{0,5} USDT \(\d+ na menor unidade do token\)/);
      assert.ok(!instruction.instructions.includes("UTC"), "the time on Brasília's clock");
    });

    await t.step("the exchange answers the checkout's view, digit for digit", async () => {
      const page = await openPage(w, instruction.paymentUrl);
      const exact = formatDec({ units: BigInt(payment.tokenAmount), scale: 6 });
      const uri = `ethereum:${w.usdt.toLowerCase()}@42161/transfer?address=${RECIPIENT}&uint256=${payment.tokenAmount}`;
      const { qrSvgDataUrl, ...view } = page.payment;
      assert.deepEqual(view, {
        method: "EVM_TRANSFER",
        partnerName: view.partnerName,
        returnUrl: RETURN_URL,
        status: "AWAITING",
        reference: payment.paymentId,
        amountUsd: "49.90",
        amount: exact,
        token: "USDT",
        tokenAddress: w.usdt.toLowerCase(),
        tokenDecimals: 6,
        tokenAmount: payment.tokenAmount,
        networkId: "arbitrum",
        networkName: "Arbitrum One",
        chainId: "0xa4b1",
        recipient: RECIPIENT,
        payerAddress: w.payer,
        expiresAt: payment.expiresAt,
        secondsLeft: 3600,
        paymentUri: uri,
        requiredConfirmations: REQUIRED,
      });
      assert.equal(typeof view.partnerName, "string");
      assert.match(exact, /^49\.9\d{0,5}$/);
      assert.equal(decodeQrDataUrl(qrSvgDataUrl), uri, "the QR code reads back as the payment URI");
      assert.deepEqual(await statusOf(w, page.ticket), {
        status: "AWAITING",
        confirmations: 0,
        requiredConfirmations: REQUIRED,
        txHash: null,
        receipt: null,
        review: null,
        obligationStatus: null,
      });

      // Opened again (another tab): the new ticket works, the older one says where the page went.
      const again = await openPage(w, instruction.paymentUrl);
      assert.equal((await statusOf(w, again.ticket)).status, "AWAITING");
      const older = await expectError(await status(w, page.ticket), 400, "PAYMENT_TICKET_INVALID");
      assert.equal(older.reason, "REPLACED");
      assert.match(older.error.message, /aberto em outra aba/);
      // This ticket is a checkout's: the VENUE_B send's steps refuse it.
      await expectError(
        await call(w.env, "POST", "/pay/api/wallet", {
          body: { walletAddress: w.payer, chainId: "0xa4b1" },
          headers: { authorization: `Bearer ${again.ticket}` },
        }),
        400,
        "PAYMENT_METHOD_MISMATCH",
      );
    });

    await t.step("a token that is no link, or none: plain words, no field names", async () => {
      for (const body of [{ token: "x".repeat(43) }, { token: "short" }, {}, { token: 7 }]) {
        const refused = await expectError(
          await call(w.env, "POST", "/pay/api/session", { body }),
          400,
          "PAYMENT_TICKET_INVALID",
        );
        assert.equal(refused.reason, "UNKNOWN");
        assert.match(refused.error.message, /^Este link de pagamento não é válido\./);
        assert.ok(!refused.error.message.includes("token"));
      }
      await expectError(await status(w, "y".repeat(43)), 400, "PAYMENT_TICKET_INVALID");
      // What a wallet hands the page, malformed: said without field names either.
      for (const [path, body] of [["/wallet", { walletAddress: "0x12", chainId: "0xa4b1" }], ["/signature", {}]]) {
        const refused = await expectError(
          await call(w.env, "POST", `/pay/api${path}`, {
            body,
            headers: { authorization: `Bearer ${"z".repeat(43)}` },
          }),
          400,
          "VALIDATION_ERROR",
        );
        assert.match(refused.error.message, /^A carteira (informou|devolveu) /);
        assert.ok(!/walletAddress|signature|chainId/.test(refused.error.message));
      }
      await expectError(await call(w.env, "GET", "/pay/api/status"), 400, "PAYMENT_TICKET_INVALID");
    });

    await t.step("the back button only to a registered origin, for every method", async () => {
      await expectError(
        await instruct(w, owed.obligationId, { returnUrl: "https://evil.example/billing" }),
        403,
        "RETURN_URL_NOT_ALLOWED",
      );
      const bare = await expectJson(await instruct(w, owed.obligationId, { returnUrl: undefined }), 200);
      assert.equal((await openPage(w, bare.paymentUrl)).payment.returnUrl, null);
    });

    await t.step("the charge reduced since: SUPERSEDED, the link asks for a new one", async () => {
      const fee = await obligation(w, "reduced", performanceFeeSource("MONTHLY"));
      const issued = await expectJson(await instruct(w, fee.obligationId), 200);
      const page = await openPage(w, issued.paymentUrl);
      await withTransaction(
        w.env.deps.db,
        (tx) =>
          reduceOpenObligations(
            tx,
            { clientId: w.clientId, providerId: "VENUE_A" },
            10_000_000,
            [fee.obligationId],
            "stmt_checkout",
            w.env.clock.now(),
          ),
      );
      assert.equal((await statusOf(w, page.ticket)).status, "SUPERSEDED");
      const refused = await expectError(await exchange(w, tokenOf(issued.paymentUrl)), 409, "PAYMENT_SUPERSEDED");
      assert.deepEqual(
        [refused.payment.amount, refused.payment.receipt],
        [formatDec({ units: BigInt(issued.payment.tokenAmount), scale: 6 }), null],
      );
    });

    await t.step("expired: the ticket says so, the link is refused as expired", async () => {
      const late = await expectJson(await instruct(w, owed.obligationId), 200);
      const page = await openPage(w, late.paymentUrl);
      later(w, HOUR_MS);
      assert.equal((await statusOf(w, page.ticket)).status, "EXPIRED");
      const refused = await expectError(await exchange(w, tokenOf(late.paymentUrl)), 400, "PAYMENT_TICKET_INVALID");
      assert.equal(refused.reason, "EXPIRED");
      // Past the ticket's own lifetime (a day after the link's expiry) the status is no longer read.
      later(w, DAY_MS);
      assert.equal((await expectError(await status(w, page.ticket), 400, "PAYMENT_TICKET_INVALID")).reason, "EXPIRED");
    });
  } finally {
    await stop(w);
  }
});

Deno.test("checkout API: the status follows a transfer, N of M confirmations, then paid with a receipt that stays", async (t) => {
  const w = await world();
  try {
    const owed = await obligation(w, "followed");
    const older = await expectJson(await instruct(w, owed.obligationId), 200);
    const olderPage = await openPage(w, older.paymentUrl);
    const instruction = await expectJson(await instruct(w, owed.obligationId), 200);
    let page = await openPage(w, instruction.paymentUrl);
    const exact = BigInt(instruction.payment.tokenAmount);
    let hash: Hex;

    await t.step("transfers that do not pay it leave it AWAITING", async () => {
      await w.chain.transfer(w.usdt, STRANGER, RECIPIENT, exact);
      await w.chain.transfer(w.usdt, PAYER, RECIPIENT, exact - 1n);
      await w.chain.mine(REQUIRED);
      await runPayments(w);
      const seen = await statusOf(w, page.ticket);
      assert.deepEqual([seen.status, seen.confirmations, seen.txHash], ["AWAITING", 0, null]);
    });

    await t.step("seen on chain: CONFIRMING 1, 2, 3 of 3; the job credits it only once buried", async () => {
      hash = await w.chain.transfer(w.usdt, PAYER, RECIPIENT, exact);
      const first = await statusOf(w, page.ticket);
      assert.deepEqual(
        [first.status, first.confirmations, first.requiredConfirmations, first.txHash, first.receipt],
        ["CONFIRMING", 1, REQUIRED, hash, null],
      );
      assert.equal((await runPayments(w)).detected, 0, "under the confirmations nothing is credited");
      // The link opened again meanwhile (another tab): its view says the transfer is confirming, not to pay again.
      page = await openPage(w, instruction.paymentUrl);
      assert.equal(page.payment.status, "CONFIRMING");
      await w.chain.mine(1);
      assert.deepEqual(
        [(await statusOf(w, page.ticket)).status, (await statusOf(w, page.ticket)).confirmations],
        ["CONFIRMING", 2],
      );
      await w.chain.mine(2);
      // Buried deeper than required but not credited yet: no more than 3 of 3 is claimed.
      assert.equal((await statusOf(w, page.ticket)).confirmations, REQUIRED);
      // The other link of the same obligation sees nothing of this transfer (another amount).
      assert.equal((await statusOf(w, olderPage.ticket)).status, "AWAITING");
    });

    await t.step("the payments job credits it: PAID with the receipt; a reload reads the same", async () => {
      assert.equal((await runPayments(w)).detected, 1);
      const paid = await statusOf(w, page.ticket);
      assert.equal(paid.status, "PAID");
      assert.equal(paid.txHash, hash);
      assert.deepEqual(paid.receipt, {
        reference: instruction.payment.paymentId,
        amount: formatDec({ units: exact, scale: 6 }),
        token: "USDT",
        networkName: "Arbitrum One",
        txHash: hash,
        paidAt: new Date(w.env.clock.now()).toISOString(),
      });
      later(w, 2 * HOUR_MS);
      assert.deepEqual((await statusOf(w, page.ticket)).receipt, paid.receipt, "after the link's expiry too");
    });

    await t.step("the link opened again: already paid, with its receipt, no ticket", async () => {
      const again = await expectError(await exchange(w, tokenOf(instruction.paymentUrl)), 409, "OBLIGATION_NOT_OPEN");
      assert.equal(again.obligationStatus, "PAID");
      assert.equal(again.ticket, undefined);
      assert.equal(again.payment.receipt.reference, instruction.payment.paymentId);
      assert.equal(again.payment.method, "EVM_TRANSFER");
    });

    await t.step(
      "the obligation's older link: paid through the other one, its receipt, before any wallet",
      async () => {
        const refused = await expectError(await exchange(w, tokenOf(older.paymentUrl)), 409, "OBLIGATION_NOT_OPEN");
        assert.equal(refused.obligationStatus, "PAID");
        assert.match(refused.error.message, /já está paga/);
        assert.equal(refused.payment.receipt.txHash, hash);
        assert.equal(refused.payment.amount, formatDec({ units: BigInt(older.payment.tokenAmount), scale: 6 }));
        const closed = await statusOf(w, olderPage.ticket);
        assert.deepEqual(
          [closed.status, closed.obligationStatus, closed.receipt.reference],
          ["CLOSED", "PAID", instruction.payment.paymentId],
        );
      },
    );

    await t.step("a day after the credit the ticket no longer answers", async () => {
      later(w, DAY_MS);
      await expectError(await status(w, page.ticket), 400, "PAYMENT_TICKET_INVALID");
    });
  } finally {
    await stop(w);
  }
});

Deno.test("checkout API: a deposit invoice's page, paid from any wallet", async () => {
  const w = await world();
  try {
    const owed = await obligation(w, "invoice");
    const issued = await expectJson(
      await instruct(w, owed.obligationId, { method: "DEPOSIT_INVOICE", token: undefined, payerAddress: undefined }),
      200,
    );
    const { invoice } = issued;
    assert.match(issued.instructions, /^Envie exatamente 49,90 USDT .* de qualquer carteira para 0x/);
    const page = await openPage(w, issued.paymentUrl);
    const uri = `ethereum:${w.usdt.toLowerCase()}@42161/transfer?address=${invoice.address}&uint256=49900000`;
    assert.deepEqual(
      [
        page.payment.method,
        page.payment.reference,
        page.payment.recipient,
        page.payment.payerAddress,
        page.payment.amount,
        page.payment.tokenAmount,
        page.payment.paymentUri,
        page.payment.expiresAt,
      ],
      ["DEPOSIT_INVOICE", invoice.paymentId, invoice.address, null, "49.9", "49900000", uri, invoice.expiresAt],
    );
    assert.equal(decodeQrDataUrl(page.payment.qrSvgDataUrl), uri);

    // Short of the amount: nothing is claimed.
    await w.chain.transfer(w.usdt, STRANGER, invoice.address, 49_899_999n);
    assert.equal((await statusOf(w, page.ticket)).status, "AWAITING");
    const hash = await w.chain.transfer(w.usdt, STRANGER, invoice.address, 49_900_000n);
    const seen = await statusOf(w, page.ticket);
    assert.deepEqual([seen.status, seen.confirmations, seen.txHash], ["CONFIRMING", 1, hash]);
    await w.chain.mine(REQUIRED);
    await runPayments(w);
    const paid = await statusOf(w, page.ticket);
    assert.deepEqual([paid.status, paid.receipt.reference, paid.receipt.amount], ["PAID", invoice.paymentId, "49.9"]);
  } finally {
    await stop(w);
  }
});
