/**
 * Crediting an EVM transfer, and undoing it, against a real node (anvil with
 * Arbitrum One's chain id): confirm, the submitted re-check and the payments
 * scan credit by one path (the expiry rule for every status, the block kept
 * on every credit, an expired instruction paid in time credited straight
 * from EXPIRED); finality reverses a credit only when the chain replaced its
 * block, not when a node misses the receipt; a reversal applies a full
 * payment held for review instead of reopening the obligation. And what an
 * instruction whose obligation moved on says.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import type { Hex } from "viem";
import { withTransaction } from "../../db/client.ts";
import {
  createObligation,
  PERFORMANCE_FEE_SOURCES,
  reduceOpenObligations,
} from "../../domain/billing/fee_obligations.ts";
import { ERROR_CATALOG } from "../../domain/errors.ts";
import { payments } from "../../db/schema.ts";
import { DAY_MS } from "../../domain/clock.ts";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { createPartner, expectError, expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import { startChain, type TestChain } from "../_helpers/evm/chain.ts";
import { ik } from "../setup/setup_fixture.ts";
import { clientIdOf } from "../performance/trade_fixture.ts";

const RECIPIENT = "0x00000000000000000000000000000000000fee01";
const PAYER = 1;
/** A second wallet, whose transfer a reorg can take away and mine again alone (its own nonces). */
const OTHER_PAYER = 2;

interface World {
  env: TestEnv;
  partner: TestPartner;
  clientId: number;
  chain: TestChain;
  usdt: Hex;
  /** The node the service reads through: anvil, but `eth_getTransactionReceipt` of these hashes answers null. */
  missing: Set<string>;
  stop(): Promise<void>;
}

/**
 * A JSON-RPC proxy in front of anvil that answers null for the receipts of
 * `missing` (a load-balanced backend that has not seen them) and forwards
 * everything else.
 */
function receiptDroppingProxy(upstream: string, missing: Set<string>) {
  const answer = async (call: { id: unknown; method: string; params?: unknown[] }) => {
    if (call.method === "eth_getTransactionReceipt" && missing.has(String(call.params?.[0]).toLowerCase())) {
      return { jsonrpc: "2.0", id: call.id, result: null };
    }
    const response = await fetch(upstream, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(call),
    });
    return await response.json();
  };
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (request) => {
    const body = await request.json();
    const result = Array.isArray(body) ? await Promise.all(body.map(answer)) : await answer(body);
    return Response.json(result);
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, stop: () => server.shutdown() };
}

async function world(extra: Record<string, string> = {}): Promise<World> {
  const chain = await startChain(42161);
  const usdt = await chain.deployToken("USDT", 6);
  await chain.mint(usdt, chain.wallet(PAYER).address, 10_000n * 10n ** 6n);
  await chain.mint(usdt, chain.wallet(OTHER_PAYER).address, 10_000n * 10n ** 6n);
  // The recipient holds some already: a transfer mined again alone after a reorg costs the gas it was signed with.
  await chain.mint(usdt, RECIPIENT, 1n);
  const missing = new Set<string>();
  const proxy = receiptDroppingProxy(chain.url, missing);
  const env = await startTestEnv({
    env: {
      EVM_RPC_ARBITRUM: proxy.url,
      EVM_TOKENS: JSON.stringify({ arbitrum: { USDT: usdt } }),
      EVM_CONFIRMATIONS: JSON.stringify({ arbitrum: 1 }),
      ...extra,
    },
  });
  const partner = await createPartner(env, { partnerId: "payer" });
  await expectJson(await partner.call("POST", "/v1/users", { body: { externalUserId: "ana" }, headers: ik() }), 201);
  await expectJson(await operator(env, "PUT", "/operator/v1/payment-recipients/arbitrum", { address: RECIPIENT }), 200);
  return {
    env,
    partner,
    clientId: await clientIdOf(env, "ana", "payer"),
    chain,
    usdt,
    missing,
    async stop() {
      await env.close();
      await proxy.stop();
      await chain.stop();
    },
  };
}

/** An open VENUE_A obligation of ana (49.9; a subscription unless told), due in 5 days from the test clock's now. */
async function obligation(w: World, reference: string, source = "MONTHLY_SUBSCRIPTION") {
  const now = w.env.clock.now();
  return await withTransaction(
    w.env.deps.db,
    async (tx) =>
      (await createObligation(tx, { partnerId: "payer", tenantId: "payer", externalUserId: "ana" }, {
        clientId: w.clientId,
        providerId: "VENUE_A",
        source,
        reference,
        amountMicros: 49_900_000,
        dueFrom: now,
        dueDays: 5,
        statementId: null,
      }, now))!,
  );
}

/** An EVM transfer instruction, paid from wallet `payer` (PAYER unless told). */
async function instruct(w: World, obligationId: string, payer = PAYER) {
  const body = await expectJson(
    await w.partner.call("POST", `/v1/users/ana/obligations/${obligationId}/payment-instructions`, {
      body: { networkId: "arbitrum", token: "USDT", payerAddress: w.chain.wallet(payer).address },
      headers: ik(),
    }),
    200,
  );
  return body.payment;
}

function confirm(w: World, paymentId: string, txHash: string) {
  return w.partner.call("POST", `/v1/users/ana/payments/${paymentId}/confirm`, { body: { txHash }, headers: ik() });
}

async function runJob(env: TestEnv, job = "payments") {
  return (await expectJson(await operator(env, "POST", `/operator/v1/jobs/${job}/run`), 200)).summary;
}

async function eventsOf(w: World, type: string) {
  return (await expectJson(await w.partner.call("GET", `/v1/events?type=${type}`), 200)).events;
}

async function rowOf(w: World, paymentId: string) {
  const [row] = await w.env.deps.db.read.select().from(payments).where(eq(payments.paymentId, paymentId));
  return row;
}

async function obligationOf(w: World, obligationId: string) {
  const { obligations } = await expectJson(await w.partner.call("GET", "/v1/users/ana/obligations"), 200);
  return obligations.find((o: { obligationId: string }) => o.obligationId === obligationId);
}

async function setRow(w: World, paymentId: string, values: Partial<typeof payments.$inferInsert>) {
  await withTransaction(
    w.env.deps.db,
    (tx) => tx.update(payments).set(values).where(eq(payments.paymentId, paymentId)),
  );
}

Deno.test("a transfer credited by confirm keeps its block, as one found by the scan does", async () => {
  const w = await world();
  try {
    const owed = await obligation(w, "confirmed-block");
    const payment = await instruct(w, owed.obligationId);
    const hash = await w.chain.transfer(w.usdt, PAYER, RECIPIENT, BigInt(payment.tokenAmount));
    const receipt = await w.chain.client.getTransactionReceipt({ hash });
    assert.equal((await expectJson(await confirm(w, payment.paymentId, hash), 200)).credited, true);
    const row = await rowOf(w, payment.paymentId);
    assert.deepEqual([row.status, row.txBlock], ["CONFIRMED", Number(receipt.blockNumber)]);
  } finally {
    await w.stop();
  }
});

Deno.test("a submitted instruction past its expiry is not paid by a transfer mined after the expiry", async () => {
  const w = await world();
  try {
    const owed = await obligation(w, "submitted-late");
    const payment = await instruct(w, owed.obligationId);
    // A first hash that does not pay (one unit short) leaves the instruction SUBMITTED.
    const short = await w.chain.transfer(w.usdt, PAYER, RECIPIENT, BigInt(payment.tokenAmount) - 1n);
    const submitted = await expectJson(await confirm(w, payment.paymentId, short), 202);
    assert.deepEqual([submitted.payment.status, submitted.code], ["SUBMITTED", "PAYMENT_UNDERPAID"]);
    // The exact amount, mined two hours after the instruction's expiry (block time); looked at within the day
    // a submitted instruction is still checked.
    await w.chain.setNextBlockTime(Math.floor(Date.now() / 1000) + 2 * 3600);
    const late = await w.chain.transfer(w.usdt, PAYER, RECIPIENT, BigInt(payment.tokenAmount));
    w.env.clock.freeze(Date.parse(payment.expiresAt) + 60_000);
    await expectError(await confirm(w, payment.paymentId, late), 409, "PAYMENT_EXPIRED");
    assert.equal((await obligationOf(w, owed.obligationId)).status, "OPEN");
    assert.equal((await rowOf(w, payment.paymentId)).status, "SUBMITTED");
  } finally {
    await w.stop();
  }
});

Deno.test("an expired instruction paid in time is credited though a newer instruction asks the same amount", async () => {
  const w = await world();
  try {
    const owed = await obligation(w, "expired-in-time");
    const first = await instruct(w, owed.obligationId);
    const hash = await w.chain.transfer(w.usdt, PAYER, RECIPIENT, BigInt(first.tokenAmount));
    // Nobody looked before the expiry; the partner asked for a new link, which drew the very same tag.
    w.env.clock.freeze(Date.parse(first.expiresAt) + 60_000);
    await setRow(w, first.paymentId, { status: "EXPIRED" });
    const second = await instruct(w, owed.obligationId);
    await setRow(w, second.paymentId, { tokenAmount: first.tokenAmount });

    const confirmed = await expectJson(await confirm(w, first.paymentId, hash), 200);
    assert.deepEqual([confirmed.credited, confirmed.payment.status], [true, "CONFIRMED"]);
    assert.equal((await obligationOf(w, owed.obligationId)).status, "PAID");
    const newer = await rowOf(w, second.paymentId);
    assert.deepEqual([newer.status, newer.failureReason?.split(":")[0]], ["SUPERSEDED", "OBLIGATION_NOT_OPEN"]);
  } finally {
    await w.stop();
  }
});

Deno.test("finality: a receipt a node misses while the credited block is unchanged reverses nothing; a reorg does", async () => {
  const w = await world({ EVM_FINALITY: JSON.stringify({ arbitrum: 4 }) });
  try {
    const owed = await obligation(w, "missed-receipt");
    const payment = await instruct(w, owed.obligationId);
    const hash = await w.chain.transfer(w.usdt, PAYER, RECIPIENT, BigInt(payment.tokenAmount));
    assert.equal((await expectJson(await confirm(w, payment.paymentId, hash), 200)).credited, true);
    const receipt = await w.chain.client.getTransactionReceipt({ hash });
    const credited = await rowOf(w, payment.paymentId);
    assert.deepEqual([credited.txBlock, credited.txBlockHash], [Number(receipt.blockNumber), receipt.blockHash]);

    // The backend answering the next run has not seen the receipt; the block it was credited in is unchanged.
    w.missing.add(hash);
    await w.chain.mine(1);
    const missed = await runJob(w.env);
    assert.deepEqual([missed.reorged, missed.final, missed.finalityFailed], [0, 0, 0]);
    assert.equal((await rowOf(w, payment.paymentId)).status, "CONFIRMED");
    assert.equal((await obligationOf(w, owed.obligationId)).status, "PAID");
    assert.equal((await eventsOf(w, "payment.reversed")).length, 0);
    assert.ok(w.env.logs.some((line) => line.includes("whose block is unchanged")), "the miss is logged");

    // A reorg that takes the block away still reverses the credit, whatever the node answers for the receipt.
    await w.chain.reorg((await w.chain.head()) - Number(receipt.blockNumber) + 1);
    const reorged = await runJob(w.env);
    assert.equal(reorged.reorged, 1);
    const reversed = await rowOf(w, payment.paymentId);
    assert.deepEqual([reversed.status, reversed.review], ["SUBMITTED", "REORGED"]);
    assert.equal((await obligationOf(w, owed.obligationId)).status, "OPEN");
    assert.equal((await eventsOf(w, "payment.reversed")).length, 1);
  } finally {
    await w.stop();
  }
});

Deno.test("finality: a reversal applies a full payment held for review instead of reopening the obligation", async () => {
  const w = await world({ EVM_FINALITY: JSON.stringify({ arbitrum: 4 }) });
  try {
    const owed = await obligation(w, "held-applied");
    // Past due and past grace: the client's VENUE_A standing is SUSPENDED.
    w.env.clock.freeze(w.env.clock.now() + 7 * DAY_MS);
    assert.equal((await runJob(w.env, "billing-cycle")).suspended, 1);
    const first = await instruct(w, owed.obligationId);
    const second = await instruct(w, owed.obligationId, OTHER_PAYER);
    const firstHash = await w.chain.transfer(w.usdt, PAYER, RECIPIENT, BigInt(first.tokenAmount));
    assert.equal((await expectJson(await confirm(w, first.paymentId, firstHash), 200)).credited, true);
    // The second link's transfer lands after the first paid: held whole for review.
    const secondHash = await w.chain.transfer(w.usdt, OTHER_PAYER, RECIPIENT, BigInt(second.tokenAmount));
    const held = await expectJson(await confirm(w, second.paymentId, secondHash), 202);
    assert.deepEqual([held.payment.status, held.code], ["REVIEW", "OBLIGATION_ALREADY_SETTLED"]);

    // A reorg takes both blocks; only the second transaction is mined again.
    const raw = await w.chain.rawTransaction(secondHash);
    const firstBlock = Number((await w.chain.client.getTransactionReceipt({ hash: firstHash })).blockNumber);
    await w.chain.reorg((await w.chain.head()) - firstBlock + 1);
    assert.equal(await w.chain.sendRaw(raw), secondHash);
    const job = await runJob(w.env);
    assert.equal(job.reorged, 1);

    const reversed = await rowOf(w, first.paymentId);
    assert.deepEqual([reversed.status, reversed.review, reversed.confirmedAt], ["SUPERSEDED", "REORGED", null]);
    const applied = await rowOf(w, second.paymentId);
    assert.deepEqual(
      [applied.status, applied.review, applied.overpaidTokenAmount, applied.finalAt],
      ["CONFIRMED", null, null, null],
    );
    assert.equal((await obligationOf(w, owed.obligationId)).status, "PAID");
    const paid = await eventsOf(w, "obligation.paid");
    assert.deepEqual(paid.map((e: { data: { paymentId: string } }) => e.data.paymentId), [
      first.paymentId,
      second.paymentId,
    ]);
    const [event] = await eventsOf(w, "payment.reversed");
    assert.deepEqual([event.data.paymentId, event.data.status], [first.paymentId, "PAID"]);
    assert.equal((await eventsOf(w, "commercial.suspended")).length, 1, "never suspended again");

    // Not final yet: finality follows the applied transfer where it was mined again.
    await w.chain.mine(4);
    assert.equal((await runJob(w.env)).final, 1);
    const final = await rowOf(w, second.paymentId);
    const receipt = await w.chain.client.getTransactionReceipt({ hash: secondHash });
    assert.deepEqual([final.txBlock, final.txBlockHash], [Number(receipt.blockNumber), receipt.blockHash]);
    assert.notEqual(final.finalAt, null);
  } finally {
    await w.stop();
  }
});

Deno.test("an instruction superseded by a reduction, a cancellation or a payment says which, as confirm does", async () => {
  const w = await world();
  try {
    const reduce = (obligationId: string, amountMicros: number, statementId: string) =>
      withTransaction(w.env.deps.db, (tx) =>
        reduceOpenObligations(
          tx,
          { clientId: w.clientId, providerId: "VENUE_A" },
          amountMicros,
          [obligationId],
          statementId,
          w.env.clock.now(),
        ));
    const reduced = await obligation(w, "reduced", PERFORMANCE_FEE_SOURCES[1]);
    const cancelled = await obligation(w, "cancelled", PERFORMANCE_FEE_SOURCES[1]);
    const toReduce = await instruct(w, reduced.obligationId);
    const toCancel = await instruct(w, cancelled.obligationId);
    await reduce(reduced.obligationId, 10_000_000, "stmt-reduce");
    await reduce(cancelled.obligationId, 49_900_000, "stmt-cancel");
    const hash = `0x${"ab".repeat(32)}`;

    assert.equal(
      (await rowOf(w, toReduce.paymentId)).failureReason,
      `PAYMENT_SUPERSEDED: ${ERROR_CATALOG.PAYMENT_SUPERSEDED.message}`,
    );
    await expectError(await confirm(w, toReduce.paymentId, hash), 409, "PAYMENT_SUPERSEDED");

    const cancelText = "Esta cobrança foi dispensada; não há nada a pagar.";
    assert.equal((await rowOf(w, toCancel.paymentId)).failureReason, `OBLIGATION_NOT_OPEN: ${cancelText}`);
    const refused = await expectError(await confirm(w, toCancel.paymentId, hash), 409, "OBLIGATION_NOT_OPEN");
    assert.deepEqual([refused.error.message, refused.obligationStatus], [cancelText, "CANCELLED"]);

    // Paid by another instruction: said so, in the same words as the confirmation's refusal.
    const paid = await obligation(w, "paid");
    const first = await instruct(w, paid.obligationId);
    const other = await instruct(w, paid.obligationId);
    const paying = await w.chain.transfer(w.usdt, PAYER, RECIPIENT, BigInt(first.tokenAmount));
    await expectJson(await confirm(w, first.paymentId, paying), 200);
    const paidText = "Esta cobrança já está paga; esta instrução não pode mais ser paga.";
    assert.equal((await rowOf(w, other.paymentId)).failureReason, `OBLIGATION_NOT_OPEN: ${paidText}`);
    const again = await expectError(await confirm(w, other.paymentId, hash), 409, "OBLIGATION_NOT_OPEN");
    assert.deepEqual([again.error.message, again.obligationStatus], [paidText, "PAID"]);
    const asked = await w.partner.call("POST", `/v1/users/ana/obligations/${paid.obligationId}/payment-instructions`, {
      body: { networkId: "arbitrum", token: "USDT", payerAddress: w.chain.wallet(PAYER).address },
      headers: ik(),
    });
    assert.deepEqual(
      [(await expectError(asked, 409, "OBLIGATION_NOT_OPEN")).obligationStatus],
      ["PAID"],
      "a new instruction is refused in the same words",
    );

    // The error envelope declares the field the 409 carries.
    const document = await expectJson(await w.env.app.request("/v1/openapi.json"), 200);
    assert.ok(document.components.schemas.Error.properties.obligationStatus, "Error declares obligationStatus");
  } finally {
    await w.stop();
  }
});
