/**
 * Payments detected on chain and followed to finality, against a real EVM
 * node (anvil with Arbitrum One's chain id) and a test ERC-20 deployed on
 * it: the payments job scans the token's Transfer logs and credits what pays
 * an instruction without anyone confirming it, a transfer mined before its
 * instruction expired counts whenever it is seen, a credited transfer taken
 * away by a reorg reopens its obligation, and the scan's cursor moves in
 * bounded ranges and survives a restart.
 */
import assert from "node:assert/strict";
import { HDKey } from "@scure/bip32";
import type { Hex } from "viem";
import { withTransaction } from "../../db/client.ts";
import { evmScanCursors } from "../../db/schema.ts";
import { DAY_MS } from "../../domain/clock.ts";
import { ConfigError, parseConfig } from "../../config.ts";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { asPartner, createPartner, expectError, expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import { startChain, type TestChain } from "../_helpers/evm/chain.ts";
import { ik } from "../setup/setup_fixture.ts";
import { clientIdOf } from "../performance/trade_fixture.ts";
import { openObligation } from "./obligation_fixture.ts";

const RECIPIENT = "0x00000000000000000000000000000000000fee01";
const PAYER = 1;
const STRANGER = 2;
/** The operator's account-level extended public key (its private side stays off the service). */
const XPUB = HDKey.fromMasterSeed(new Uint8Array(32).fill(7)).derive("m/44'/60'/0'").publicExtendedKey;

interface World {
  env: TestEnv;
  partner: TestPartner;
  clientId: number;
  chain: TestChain;
  usdt: Hex;
  payer: Hex;
  settings: Record<string, string>;
}

async function world(extra: Record<string, string> = {}, chainOptions: { timestamp?: number } = {}): Promise<World> {
  const chain = await startChain(42161, chainOptions);
  const usdt = await chain.deployToken("USDT", 6);
  const payer = chain.wallet(PAYER).address;
  await chain.mint(usdt, payer, 10_000n * 10n ** 6n);
  await chain.mint(usdt, chain.wallet(STRANGER).address, 10_000n * 10n ** 6n);
  const settings = {
    EVM_RPC_ARBITRUM: chain.url,
    EVM_TOKENS: JSON.stringify({ arbitrum: { USDT: usdt } }),
    EVM_CONFIRMATIONS: JSON.stringify({ arbitrum: 1 }),
    ...extra,
  };
  const env = await startTestEnv({ env: settings });
  const partner = await createPartner(env, { partnerId: "payer" });
  await expectJson(await partner.call("POST", "/v1/users", { body: { externalUserId: "ana" }, headers: ik() }), 201);
  await expectJson(await operator(env, "PUT", "/operator/v1/payment-recipients/arbitrum", { address: RECIPIENT }), 200);
  await expectJson(await operator(env, "PUT", "/operator/v1/deposit-xpub/arbitrum", { xpub: XPUB }), 200);
  return { env, partner, clientId: await clientIdOf(env, "ana", "payer"), chain, usdt, payer, settings };
}

async function stop(w: World) {
  await w.env.close();
  await w.chain.stop();
}

/** An open VENUE_A (USDT) obligation of ana, due in 5 days from the test clock's now. */
function obligation(w: World, reference: string, amountMicros?: number) {
  return openObligation(w.env, {
    partnerId: "payer",
    clientId: w.clientId,
    reference,
    amountMicros,
    providerId: "VENUE_A",
    source: "MONTHLY_SUBSCRIPTION",
  });
}

async function instruct(w: World, obligationId: string) {
  const body = await expectJson(
    await w.partner.call("POST", `/v1/users/ana/obligations/${obligationId}/payment-instructions`, {
      body: { networkId: "arbitrum", token: "USDT", payerAddress: w.payer },
      headers: ik(),
    }),
    200,
  );
  return body.payment;
}

async function invoice(w: World, obligationId: string) {
  const body = await expectJson(
    await w.partner.call("POST", `/v1/users/ana/obligations/${obligationId}/payment-instructions`, {
      body: { method: "DEPOSIT_INVOICE", networkId: "arbitrum" },
      headers: ik(),
    }),
    200,
  );
  return body.invoice;
}

function confirm(w: World, paymentId: string, txHash: string) {
  return w.partner.call("POST", `/v1/users/ana/payments/${paymentId}/confirm`, { body: { txHash }, headers: ik() });
}

async function runJob(env: TestEnv, job = "payments") {
  return (await expectJson(await operator(env, "POST", `/operator/v1/jobs/${job}/run`), 200)).summary;
}

async function paymentOf(w: World, paymentId: string) {
  return (await expectJson(await w.partner.call("GET", `/v1/users/ana/payments/${paymentId}`), 200)).payment;
}

async function obligationOf(w: World, obligationId: string) {
  const { obligations } = await expectJson(await w.partner.call("GET", "/v1/users/ana/obligations"), 200);
  return obligations.find((o: { obligationId: string }) => o.obligationId === obligationId);
}

async function eventsOf(w: World, type: string) {
  return (await expectJson(await w.partner.call("GET", `/v1/events?type=${type}`), 200)).events;
}

Deno.test("payments job: an EVM transfer nobody confirmed is credited by the rules of a confirmation", async () => {
  const w = await world();
  try {
    const owed = await obligation(w, "detected");
    const payment = await instruct(w, owed.obligationId);
    const exact = BigInt(payment.tokenAmount);
    // Not this instruction's: the exact amount from another wallet, one unit short from the payer.
    await w.chain.transfer(w.usdt, STRANGER, RECIPIENT, exact);
    await w.chain.transfer(w.usdt, PAYER, RECIPIENT, exact - 1n);
    await runJob(w.env);
    assert.equal((await paymentOf(w, payment.paymentId)).status, "PENDING");

    const hash = await w.chain.transfer(w.usdt, PAYER, RECIPIENT, exact);
    const job = await runJob(w.env);
    const credited = await paymentOf(w, payment.paymentId);
    assert.deepEqual([credited.status, credited.txHash, credited.review], ["CONFIRMED", hash, null]);
    assert.deepEqual([job.detected, job.scanFailed], [1, 0]);
    assert.equal((await obligationOf(w, owed.obligationId)).status, "PAID");
    const paid = await eventsOf(w, "obligation.paid");
    assert.deepEqual(paid.map((e: { data: { paymentId: string } }) => e.data.paymentId), [payment.paymentId]);

    // Read again, confirmed by hand too: nothing is credited twice.
    assert.equal((await runJob(w.env)).detected, 0);
    assert.equal((await expectJson(await confirm(w, payment.paymentId, hash), 200)).credited, true);
    assert.equal((await eventsOf(w, "obligation.paid")).length, 1);
  } finally {
    await stop(w);
  }
});

Deno.test("payments job: a deposit invoice paid by any wallet is credited without a confirmation", async () => {
  const w = await world();
  try {
    const owed = await obligation(w, "invoice");
    const short = await obligation(w, "short");
    const paid = await invoice(w, owed.obligationId);
    const unpaid = await invoice(w, short.obligationId);
    const hash = await w.chain.transfer(w.usdt, STRANGER, paid.address, 49_900_000n);
    await w.chain.transfer(w.usdt, PAYER, unpaid.address, 49_000_000n);
    const job = await runJob(w.env);
    const credited = await paymentOf(w, paid.paymentId);
    assert.deepEqual([credited.method, credited.status, credited.txHash], ["DEPOSIT_INVOICE", "CONFIRMED", hash]);
    assert.equal(job.detected, 1);
    assert.equal((await obligationOf(w, owed.obligationId)).status, "PAID");
    assert.equal((await paymentOf(w, unpaid.paymentId)).status, "PENDING", "less than the invoice pays nothing");
    assert.equal((await obligationOf(w, short.obligationId)).status, "OPEN");
  } finally {
    await stop(w);
  }
});

Deno.test("a transfer mined before its instruction expired credits when seen after the expiry; one mined after does not", async () => {
  const w = await world();
  try {
    const first = await obligation(w, "seen-late");
    const second = await obligation(w, "confirmed-late");
    const byJob = await instruct(w, first.obligationId);
    const byConfirm = await instruct(w, second.obligationId);
    await w.chain.transfer(w.usdt, PAYER, RECIPIENT, BigInt(byJob.tokenAmount));
    const late = await w.chain.transfer(w.usdt, PAYER, RECIPIENT, BigInt(byConfirm.tokenAmount));
    // Both instructions expire before anyone looks.
    w.env.clock.freeze(Date.parse(byJob.expiresAt) + 60_000);

    const confirmed = await expectJson(await confirm(w, byConfirm.paymentId, late), 200);
    assert.deepEqual([confirmed.credited, confirmed.payment.status], [true, "CONFIRMED"]);
    const job = await runJob(w.env);
    assert.ok(job.expired >= 1, "the job expired the other instruction first");
    assert.equal(job.detected, 1);
    assert.equal((await paymentOf(w, byJob.paymentId)).status, "CONFIRMED");
    for (const owed of [first, second]) assert.equal((await obligationOf(w, owed.obligationId)).status, "PAID");

    // A transfer mined an hour after its instruction's expiry (by block time) pays nothing, seen or confirmed.
    const third = await obligation(w, "too-late");
    const stale = await instruct(w, third.obligationId);
    await w.chain.setNextBlockTime(Math.floor(Date.now() / 1000) + 2 * 3600);
    const after = await w.chain.transfer(w.usdt, PAYER, RECIPIENT, BigInt(stale.tokenAmount));
    w.env.clock.freeze(Date.parse(stale.expiresAt) + 60_000);
    await expectError(await confirm(w, stale.paymentId, after), 409, "PAYMENT_EXPIRED");
    assert.equal((await runJob(w.env)).detected, 0);
    assert.equal((await paymentOf(w, stale.paymentId)).status, "EXPIRED");
    assert.equal((await obligationOf(w, third.obligationId)).status, "OPEN");
  } finally {
    await stop(w);
  }
});

Deno.test("finality: a credited transfer taken away by a reorg reopens the obligation with payment.reversed; mined again, it credits again", async () => {
  const w = await world({ EVM_FINALITY: JSON.stringify({ arbitrum: 4 }) });
  try {
    const owed = await obligation(w, "reorged");
    // Past due and past grace: the client's VENUE_A standing is SUSPENDED.
    w.env.clock.freeze(w.env.clock.now() + 7 * DAY_MS);
    assert.equal((await runJob(w.env, "billing-cycle")).suspended, 1);
    const pay = await invoice(w, owed.obligationId);
    const hash = await w.chain.transfer(w.usdt, STRANGER, pay.address, 49_900_000n);
    const credited = await runJob(w.env);
    assert.equal((await obligationOf(w, owed.obligationId)).status, "PAID");
    assert.equal((await paymentOf(w, pay.paymentId)).finalAt, null, "credited at 1 confirmation, final at 4");
    assert.deepEqual([credited.detected, credited.final], [1, 0]);
    assert.equal((await eventsOf(w, "commercial.reactivated")).length, 1);

    const raw = await w.chain.rawTransaction(hash);
    const receipt = await w.chain.client.getTransactionReceipt({ hash });
    await w.chain.reorg((await w.chain.head()) - Number(receipt.blockNumber) + 1);
    const reorged = await runJob(w.env);
    const reversed = await paymentOf(w, pay.paymentId);
    assert.deepEqual(
      [reversed.status, reversed.review, reversed.confirmedAt, reversed.txHash],
      ["SUBMITTED", "REORGED", null, hash],
    );
    assert.match(reversed.failureReason, /^PAYMENT_REORGED: /);
    const reopened = await obligationOf(w, owed.obligationId);
    assert.deepEqual(
      [reopened.status, reopened.settledAt, reopened.effectiveStatus],
      ["OPEN", null, "OVERDUE_AFTER_GRACE"],
    );
    const [event] = await eventsOf(w, "payment.reversed");
    assert.deepEqual(
      [event.data.obligationId, event.data.status, event.data.settledAt, event.data.amountUsd],
      [owed.obligationId, "OPEN", null, 49.9],
    );
    assert.deepEqual(
      [event.data.paymentId, event.data.txHash, event.data.networkId, event.data.review, event.data.reason],
      [pay.paymentId, hash, "arbitrum", "REORGED", "PAYMENT_TX_NOT_FOUND"],
    );
    assert.equal((await eventsOf(w, "commercial.suspended")).length, 2, "suspended again, in the same transaction");
    assert.deepEqual([reorged.reorged, reorged.finalityFailed], [1, 0]);
    assert.ok(
      w.env.logs.some((line) => line.includes("a reorg replaced scanned blocks")),
      "the scan read the replaced blocks again",
    );
    assert.equal((await runJob(w.env)).reorged, 0, "reversed once");

    // The same signed transaction mined again, in a block dated after the invoice expired (it was mined in time
    // once): credited again, then final once 4 blocks lie on it.
    await w.chain.setNextBlockTime(Math.floor(Date.now() / 1000) + 25 * 3600);
    assert.equal(await w.chain.sendRaw(raw), hash);
    const again = await runJob(w.env);
    assert.equal(again.credited + again.detected, 1);
    const recredited = await paymentOf(w, pay.paymentId);
    assert.deepEqual([recredited.status, recredited.review, recredited.txHash], ["CONFIRMED", null, hash]);
    assert.equal((await obligationOf(w, owed.obligationId)).status, "PAID");
    assert.equal((await eventsOf(w, "obligation.paid")).length, 2);
    assert.equal((await eventsOf(w, "commercial.reactivated")).length, 2);
    await w.chain.mine(4);
    assert.equal((await runJob(w.env)).final, 1);
    assert.equal((await paymentOf(w, pay.paymentId)).finalAt, new Date(w.env.clock.now()).toISOString());
    assert.equal((await runJob(w.env)).final, 0, "a final transfer is not read again");
  } finally {
    await stop(w);
  }
});

Deno.test("payments scan: blocks made while no payable instruction was open are passed over, not read range by range", async () => {
  // The chain's first blocks are dated an hour back; the scan's cursor was left at block 1 by earlier work.
  const w = await world({ EVM_LOG_RANGE: "3" }, { timestamp: Math.floor(Date.now() / 1000) - 3600 });
  try {
    const [genesis] = await w.env.deps.db.read.select().from(evmScanCursors);
    assert.equal(genesis, undefined, "no cursor before an instruction exists");
    await withTransaction(w.env.deps.db, async (tx) =>
      await tx.insert(evmScanCursors).values({
        networkId: "arbitrum",
        nextBlock: 1,
        lastBlockHash: (await w.chain.client.getBlock({ blockNumber: 0n })).hash,
        updatedAt: w.env.clock.now(),
      }));
    // A quiet hour: 300 blocks in which nobody was asked to pay.
    await w.chain.mine(300);
    await w.chain.setNextBlockTime(Math.floor(Date.now() / 1000));
    await w.chain.mine(1);
    const owed = await obligation(w, "after-quiet");
    const payment = await instruct(w, owed.obligationId);
    await w.chain.transfer(w.usdt, PAYER, RECIPIENT, BigInt(payment.tokenAmount));
    // Range by range (3 blocks, 10 ranges a run) the transfer would be found ten runs later.
    const run = await runJob(w.env);
    assert.equal(run.detected, 1);
    assert.ok(run.blocksSkipped >= 300, `${run.blocksSkipped} blocks passed over`);
    assert.ok(run.blocksScanned <= 30);
    assert.equal((await paymentOf(w, payment.paymentId)).status, "CONFIRMED");
  } finally {
    await stop(w);
  }
});

Deno.test("payments scan: the cursor moves in bounded ranges and carries on where it stopped after a restart", async () => {
  const w = await world({ EVM_LOG_RANGE: "3" });
  let env = w.env;
  try {
    const owed = await obligation(w, "cursor");
    const payment = await instruct(w, owed.obligationId);
    const cursorOf = (summary: { scanCursors: string }) => Number(/arbitrum:(\d+)/.exec(summary.scanCursors)![1]);
    const first = await runJob(env);
    const start = cursorOf(first);
    assert.equal(start, (await w.chain.head()) + 1, "a fresh cursor reads up to the head");

    await w.chain.mine(40);
    const hash = await w.chain.transfer(w.usdt, PAYER, RECIPIENT, BigInt(payment.tokenAmount));
    const bounded = await runJob(env);
    assert.deepEqual([bounded.blocksScanned, cursorOf(bounded), bounded.detected], [30, start + 30, 0]);

    // A restart: the cursor is in the database, the scan carries on from it.
    await env.close();
    env = await startTestEnv({ databaseUrl: w.env.databaseUrl, env: w.settings });
    const resumed = await runJob(env);
    assert.equal(cursorOf(resumed) - resumed.blocksScanned, start + 30, "no block read twice, none skipped");
    assert.equal(cursorOf(resumed), (await w.chain.head()) + 1);
    assert.equal(resumed.detected, 1);
    const partner = asPartner(env, w.partner.partnerId, w.partner.clientId, w.partner.clientSecret);
    const found = (await expectJson(await partner.call("GET", `/v1/users/ana/payments/${payment.paymentId}`), 200))
      .payment;
    assert.deepEqual([found.status, found.txHash], ["CONFIRMED", hash]);
  } finally {
    await env.close();
    await w.chain.stop();
  }
});

Deno.test("config: EVM_FINALITY defaults per network, never below the confirmations, and is validated", () => {
  const base = { SERVICE_ENV: "qa" };
  assert.deepEqual(parseConfig(base).evmFinality, { arbitrum: 20, bnb: 15 });
  assert.equal(parseConfig(base).evmLogRange, 2000);
  assert.deepEqual(parseConfig({ ...base, EVM_CONFIRMATIONS: '{"bnb":30}' }).evmFinality, { arbitrum: 20, bnb: 30 });
  assert.deepEqual(parseConfig({ ...base, EVM_FINALITY: '{"arbitrum":64}' }).evmFinality, { arbitrum: 64, bnb: 15 });
  assert.throws(
    () => parseConfig({ ...base, EVM_CONFIRMATIONS: '{"bnb":5}', EVM_FINALITY: '{"bnb":4}' }),
    (error) => error instanceof ConfigError && /EVM_FINALITY\.bnb/.test(error.message),
  );
  assert.throws(() => parseConfig({ ...base, EVM_FINALITY: "[1]" }), ConfigError);
  assert.throws(() => parseConfig({ ...base, EVM_LOG_RANGE: "0" }), ConfigError);
});
