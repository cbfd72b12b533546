/**
 * The account's entry lease against the VENUE_A simulator: one entry at a
 * time, a live holder left alone by the reconciliation, a silent one taken
 * over and fenced out, and sends that cannot land after their deadline.
 */
import assert from "node:assert/strict";
import { and, eq, sql } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { entryLeases, intents, positions } from "../../db/schema.ts";
import { credentialsOf } from "../../domain/accounts/load_account.ts";
import { wallClockNow } from "../../domain/clock.ts";
import {
  assertHoldsEntryLease,
  claimEntryLease,
  type EntryLease,
  EntryLeaseLost,
  releaseEntryLease,
} from "../../domain/execution/entry_leases.ts";
import { sendIntent } from "../../domain/execution/send_intent.ts";
import { protectFilledEntry } from "../../domain/engine/entry_fills.ts";
import { VenueError } from "../../venues/types.ts";
import { expectError, expectJson, operator } from "../_helpers/http.ts";
import type { TestEnv } from "../_helpers/env.ts";
import { automationBody, completeSetup, ik, putAutomation, putSetup, readyClient } from "../setup/setup_fixture.ts";
import { anaAtVenueA, engineCtx, opening } from "./execution_fixture.ts";

const claim = (env: TestEnv, account: { clientId: number; providerId: string }, owner: string) =>
  withTransaction(env.deps.db, (tx) => claimEntryLease(tx, account, owner));

/** The holder goes silent: its lease ends now, as if it had stopped renewing it a lease ago. */
const runOut = (env: TestEnv, lease: EntryLease) =>
  withTransaction(env.deps.db, (tx) =>
    tx.update(entryLeases).set({ leasedUntil: wallClockNow() - 1 })
      .where(and(eq(entryLeases.clientId, lease.clientId), eq(entryLeases.providerId, lease.providerId))));

const reconcileJob = async (env: TestEnv) =>
  (await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200)).summary;

Deno.test("entry lease: one claim at a time per account, a fence that grows, a holder that may release", async () => {
  const { env, partner } = await readyClient();
  try {
    const { client } = await anaAtVenueA(env, partner.partnerId);
    const account = { clientId: client.id, providerId: "VENUE_A" };
    const first = (await claim(env, account, "holder-1"))!;
    assert.equal(first.fence, 1);
    assert.equal(await claim(env, account, "holder-2"), null, "held: no second claim");
    assert.notEqual(await claim(env, { ...account, providerId: "VENUE_B" }, "holder-2"), null, "another account");
    await withTransaction(env.deps.db, (tx) => releaseEntryLease(tx, first));
    const second = (await claim(env, account, "holder-2"))!;
    assert.equal(second.fence, 2);
    await runOut(env, second);
    const third = (await claim(env, account, "holder-3"))!;
    assert.equal(third.fence, 3, "a run-out lease is taken over");
    await assert.rejects(
      withTransaction(env.deps.db, (tx) => assertHoldsEntryLease(tx, second)),
      EntryLeaseLost,
    );
    await withTransaction(env.deps.db, (tx) => releaseEntryLease(tx, second));
    assert.equal(await claim(env, account, "holder-4"), null, "a fenced-out holder cannot release its successor");
  } finally {
    await env.close();
  }
});

Deno.test("entry lease: a manual opening while another entry holds the account is ACCOUNT_BUSY and sends nothing", async () => {
  const { env, partner } = await readyClient();
  try {
    const { client, account } = await anaAtVenueA(env, partner.partnerId);
    await expectJson(await putSetup(partner, completeSetup({ maxMarginPerTradeUsd: 100 })), 200);
    await expectJson(await putAutomation(partner, automationBody({ enabled: false })), 200);
    const held = (await claim(env, { clientId: client.id, providerId: "VENUE_A" }, "engine-run"))!;
    const execute = () => partner.call("POST", "/v1/orders/execute", { body: opening(), headers: ik() });
    await expectError(await execute(), 409, "ACCOUNT_BUSY");
    const recorded = await env.deps.db.read.select().from(intents).where(eq(intents.clientId, client.id));
    assert.equal(recorded.length, 0, "nothing recorded");
    assert.equal((await env.deps.venues.VENUE_A.getAccount(credentialsOf(account))).openOrders.length, 0);

    await withTransaction(env.deps.db, (tx) => releaseEntryLease(tx, held));
    const done = await expectJson(await execute(), 200);
    assert.equal(done.execution.status, "FILLED");
    const [lease] = await env.deps.db.read.select().from(entryLeases).where(eq(entryLeases.clientId, client.id));
    assert.deepEqual([lease.owner, lease.fence], [null, 2], "the opening claimed it and released it");
  } finally {
    await env.close();
  }
});

Deno.test("entry lease: the reconciliation leaves a live holder's entry alone and takes over a silent one, fencing it out", async () => {
  const { env, partner } = await readyClient();
  try {
    const { client, draft, record, account } = await anaAtVenueA(env, partner.partnerId);
    const ctx = engineCtx(env);
    const lease = (await claim(env, { clientId: client.id, providerId: "VENUE_A" }, "frozen-holder"))!;
    // The holder recorded its entry, stamped sent long enough ago that its deadline has passed, and froze.
    const recorded = await record(draft("entry-frozen-1", {
      protectionPlan: { stopLossPrice: "60000", takeProfits: [{ price: "70000", share: "1" }] },
    }));
    const intent = { ...recorded, sentWallAt: wallClockNow() - 60_000 };
    await withTransaction(
      env.deps.db,
      (tx) => tx.update(intents).set({ sentWallAt: intent.sentWallAt }).where(eq(intents.id, intent.id)),
    );

    const whileHeld = await reconcileJob(env);
    assert.deepEqual([whileHeld.entriesInProgress, whileHeld.intentsChecked], [1, 0], "a live holder is left alone");
    assert.equal(
      (await env.deps.db.read.select().from(intents).where(eq(intents.id, intent.id)))[0].status,
      "SUBMITTING",
    );

    // Its lease runs out and another holder takes the account over; then the frozen holder wakes and sends.
    await runOut(env, lease);
    const successor = (await claim(env, { clientId: client.id, providerId: "VENUE_A" }, "successor"))!;
    assert.equal(successor.fence, 2);
    const late = await sendIntent(ctx, intent, account, { lease });
    assert.equal(late.status, "SUBMITTING", "fenced out: its outcome is not recorded, the holder settles it");
    const snapshot = await env.deps.venues.VENUE_A.getAccount(credentialsOf(account));
    assert.equal(snapshot.positions.length + snapshot.openOrders.length, 0, "past its deadline it sent nothing");

    // The successor goes silent too: the reconciliation takes over, settles the entry by a query, releases.
    await runOut(env, successor);
    const takeover = await reconcileJob(env);
    assert.deepEqual([takeover.entriesInProgress, takeover.intentsChecked], [0, 1]);
    const [settled] = await env.deps.db.read.select().from(intents).where(eq(intents.id, intent.id));
    assert.deepEqual([settled.status, settled.errorCode], ["NOT_PLACED", "NOT_AT_VENUE"]);
    const [after] = await env.deps.db.read.select().from(entryLeases).where(eq(entryLeases.clientId, client.id));
    assert.deepEqual([after.owner, after.fence], [null, 3], "taken over (fence 3), then released");

    // The fenced-out holder's writes change nothing: not the intent, not a position.
    await assert.rejects(withTransaction(env.deps.db, (tx) => assertHoldsEntryLease(tx, lease)), EntryLeaseLost);
    const filled = { ...settled, status: "FILLED", executedQuantity: "0.002", executedPrice: "65000" };
    await protectFilledEntry(ctx, filled, account, lease);
    assert.equal(
      (await env.deps.db.read.select().from(positions).where(eq(positions.clientId, client.id))).length,
      0,
      "no position opened by a fenced-out holder",
    );
  } finally {
    await env.close();
  }
});

Deno.test("entry lease: a VENUE_A send too near its deadline stays here; one with time left goes", async () => {
  const { env, partner } = await readyClient();
  try {
    const { account } = await anaAtVenueA(env, partner.partnerId);
    const request = {
      symbol: "BTCUSDT",
      side: "BUY" as const,
      type: "LIMIT" as const,
      quantity: "0.002",
      price: "65010",
      reduceOnly: false,
      clientOrderId: "svdeadline0000000000000000000001",
    };
    await assert.rejects(
      env.deps.venues.VENUE_A.placeOrder(credentialsOf(account), { ...request, deadline: wallClockNow() + 100 }),
      (error) => error instanceof VenueError && error.kind === "UNAVAILABLE",
    );
    const [[orders]] = await env.deps.db.read.values<[number]>(sql`SELECT count(*) FROM intents`);
    assert.equal(orders, 0);
    assert.equal((await env.deps.venues.VENUE_A.getAccount(credentialsOf(account))).openOrders.length, 0);
    const placed = await env.deps.venues.VENUE_A.placeOrder(credentialsOf(account), {
      ...request,
      deadline: wallClockNow() + 3_000,
    });
    assert.equal(placed.status, "FILLED", "with time left it goes, valid at the venue until its deadline");
  } finally {
    await env.close();
  }
});

Deno.test("entry lease: a prepared opening sent while another entry's outcome is unknown is ACCOUNT_BUSY, never a 500", async () => {
  const { env, partner } = await readyClient();
  try {
    const { client, draft, record } = await anaAtVenueA(env, partner.partnerId);
    await expectJson(await putSetup(partner, completeSetup({ maxMarginPerTradeUsd: 100 })), 200);
    await expectJson(await putAutomation(partner, automationBody({ enabled: false })), 200);
    const body = opening({ intentId: "prepared-0001" });
    await expectJson(await partner.call("POST", "/v1/orders/prepare", { body, headers: ik() }), 200);
    // The lease is free, but an entry whose answer was lost still holds the account until a query settles it.
    await record(draft("in-flight-0001"));
    await expectError(await partner.call("POST", "/v1/orders/execute", { body, headers: ik() }), 409, "ACCOUNT_BUSY");
    const [prepared] = await env.deps.db.read.select().from(intents).where(eq(intents.intentId, "prepared-0001"));
    assert.equal(prepared.status, "PREPARED", "unchanged, to be sent once the account is free");
    const [lease] = await env.deps.db.read.select().from(entryLeases).where(eq(entryLeases.clientId, client.id));
    assert.equal(lease.owner, null, "the opening released the lease it claimed");
  } finally {
    await env.close();
  }
});
