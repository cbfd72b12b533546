/**
 * Intents against the VENUE_A simulator: recorded before the send, one entry
 * in flight per account, a lost answer settled by querying (exactly one order
 * at the venue), an unreachable venue, a crash between record and send.
 */
import assert from "node:assert/strict";
import { eq, sql } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { intents } from "../../db/schema.ts";
import { ApiError } from "../../domain/errors.ts";
import { insertSubmittingUnlessBusy } from "../../domain/execution/intents.ts";
import { reconcileIntent } from "../../domain/execution/reconcile_intent.ts";
import { sendIntent } from "../../domain/execution/send_intent.ts";
import { credentialsOf } from "../../domain/accounts/load_account.ts";
import { readyClient } from "../setup/setup_fixture.ts";
import { anaAtVenueA, engineCtx, simulatorFault } from "./execution_fixture.ts";

Deno.test("intents: sent orders are recorded with the venue's answer", async () => {
  const { env, partner } = await readyClient();
  try {
    const { account, draft, record } = await anaAtVenueA(env, partner.partnerId);
    const filled = await sendIntent(engineCtx(env), await record(draft("intent-market-1")), account);
    assert.equal(filled.status, "FILLED");
    assert.equal(filled.executedQuantity, "0.002");
    assert.ok(filled.orderId);
    assert.ok(filled.finalizedAt);
    assert.match(filled.clientOrderId, /^sv[0-9a-f]{30}$/);

    const resting = await sendIntent(
      engineCtx(env),
      await record(draft("intent-limit-1", { orderType: "LIMIT", price: "63000", timeInForce: "GTC" })),
      account,
    );
    assert.equal(resting.status, "ACCEPTED");
    assert.equal(resting.finalizedAt, null);

    const refused = await sendIntent(
      engineCtx(env),
      await record(draft("intent-tiny-1", { quantity: "0.0001" })),
      account,
    );
    assert.equal(refused.status, "REJECTED");
    assert.equal(refused.errorCode, "INVALID_ORDER");
    assert.match(refused.errorMessage!, /recusou a ordem/);
  } finally {
    await env.close();
  }
});

Deno.test("intents: one entry in flight per account; maintenance is never busy", async () => {
  const { env, partner } = await readyClient();
  try {
    const { draft, record } = await anaAtVenueA(env, partner.partnerId);
    await record(draft("intent-first-1"));
    await assert.rejects(
      () => record(draft("intent-second-1")),
      (error) => error instanceof ApiError && error.code === "ACCOUNT_BUSY",
    );
    const protect = await record(
      draft("intent-stop-1", { type: "STOP_LOSS", opensPosition: false, reduceOnly: true, orderType: "STOP_MARKET" }),
    );
    assert.equal(protect.status, "SUBMITTING");
  } finally {
    await env.close();
  }
});

Deno.test("intents: an entry that would be a second in flight is left out without failing the transaction", async () => {
  const { env, partner } = await readyClient();
  try {
    const { draft, record } = await anaAtVenueA(env, partner.partnerId);
    await record(draft("intent-first-2"));
    const stop = draft("intent-stop-2", {
      type: "STOP_LOSS",
      opensPosition: false,
      reduceOnly: true,
      orderType: "STOP_MARKET",
    });
    const recorded = await withTransaction(env.deps.db, async (tx) => {
      const now = env.clock.now();
      const answers = [];
      for (const one of [draft("intent-second-2"), stop, draft("intent-first-2")]) {
        answers.push(await insertSubmittingUnlessBusy(tx, one, now));
      }
      return answers;
    });
    assert.deepEqual(recorded.map((intent) => intent?.intentId ?? null), [null, "intent-stop-2", null]);
    const [[planIsNull, executed]] = await env.deps.db.read.values<[number, string]>(
      sql`SELECT protection_plan IS NULL, executed_quantity FROM intents WHERE intent_id = 'intent-stop-2'`,
    );
    assert.deepEqual([planIsNull, executed], [1, "0"], "absent columns are SQL NULL or their default, not 'null'");
    const entries = await env.deps.db.read.select().from(intents).where(eq(intents.opensPosition, true));
    assert.deepEqual(entries.map((intent) => intent.intentId), ["intent-first-2"]);
  } finally {
    await env.close();
  }
});

Deno.test("intents: a lost answer is UNCERTAIN until a query settles it, with exactly one order at the venue", async () => {
  const { env, partner } = await readyClient();
  try {
    const { account, draft, record } = await anaAtVenueA(env, partner.partnerId);
    await simulatorFault(env, "LOSE_RESPONSE");
    const uncertain = await sendIntent(engineCtx(env), await record(draft("intent-lost-1")), account);
    assert.equal(uncertain.status, "UNCERTAIN");
    assert.equal(uncertain.errorCode, "PROVIDER_DOWN");
    await assert.rejects(
      () => record(draft("intent-lost-2")),
      (error) => error instanceof ApiError && error.code === "ACCOUNT_BUSY",
      "an uncertain entry keeps the account busy",
    );
    await simulatorFault(env, "NONE");
    const { intent, resolved } = await reconcileIntent(engineCtx(env), uncertain, account);
    assert.equal(resolved, true);
    assert.equal(intent.status, "FILLED");
    assert.ok(intent.reconciledAt);
    const snapshot = await env.deps.venues.VENUE_A.getAccount(credentialsOf(account));
    assert.equal(snapshot.positions.length, 1);
    assert.equal(snapshot.positions[0].quantity, "0.002", "the order was placed once");
    await record(draft("intent-after-1", { orderType: "LIMIT", price: "63000", timeInForce: "GTC" }));
  } finally {
    await env.close();
  }
});

Deno.test("intents: an unreachable venue took nothing; a crash before the send settles as NOT_PLACED after the window", async () => {
  const { env, partner } = await readyClient();
  try {
    const { account, draft, record } = await anaAtVenueA(env, partner.partnerId);
    await simulatorFault(env, "DOWN");
    const down = await sendIntent(engineCtx(env), await record(draft("intent-down-1")), account);
    assert.equal(down.status, "NOT_PLACED");
    assert.equal(down.errorCode, "PROVIDER_DOWN");
    await simulatorFault(env, "NONE");

    // A process that died after recording, before sending: the intent is SUBMITTING with nothing at the venue.
    const orphan = await record(draft("intent-crash-1"));
    const early = await reconcileIntent(engineCtx(env), orphan, account);
    assert.equal(early.intent.status, "UNCERTAIN", "within the window the order might still arrive");
    assert.equal(early.resolved, false);
    await withTransaction(
      env.deps.db,
      (tx) => tx.update(intents).set({ sentWallAt: Date.now() - 60_000 }).where(eq(intents.id, orphan.id)),
    );
    const late = await reconcileIntent(engineCtx(env), { ...early.intent, sentWallAt: Date.now() - 60_000 }, account);
    assert.equal(late.intent.status, "NOT_PLACED");
    assert.equal(late.intent.errorCode, "NOT_AT_VENUE");
    const snapshot = await env.deps.venues.VENUE_A.getAccount(credentialsOf(account));
    assert.equal(snapshot.positions.length, 0);
  } finally {
    await env.close();
  }
});
