/**
 * The fleet's keeper of the venues' account pushes, as the reconcile job sees
 * it: one instance holds the keeper's lease at a time; an account whose
 * pushes its keeper records as live is left to them, checked cheaply every
 * hour (read whole when the check differs or a read is owed anyway); a
 * keeper whose lease is gone counts for nothing (the job polls again).
 */
import assert from "node:assert/strict";
import { withTransaction } from "../../db/client.ts";
import { eq } from "drizzle-orm";
import { accountPushes, intents, performancePortions, positions } from "../../db/schema.ts";
import { openPositionFromFill } from "../../domain/execution/protection.ts";
import { sendIntent } from "../../domain/execution/send_intent.ts";
import { credentialsOf } from "../../domain/accounts/load_account.ts";
import { holdServiceLease, releaseServiceLease, serviceLeaseHolder } from "../../domain/jobs/service_leases.ts";
import { PUSH_KEEPER_LEASE } from "../../domain/execution/push_states.ts";
import { HOUR_MS, MINUTE_MS } from "../../domain/clock.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { expectJson, operator } from "../_helpers/http.ts";
import { readyClient } from "../setup/setup_fixture.ts";
import { anaAtVenueA, engineCtx } from "./execution_fixture.ts";

Deno.test("service leases: one holder at a time, taken over only once it ran out, the old holder then told", async () => {
  const env = await startTestEnv();
  try {
    const db = env.deps.db;
    assert.equal(await holdServiceLease(db, "role", "first", 200), true);
    assert.equal(await holdServiceLease(db, "role", "second", 200), false, "held: refused");
    assert.equal(await holdServiceLease(db, "role", "first", 200), true, "renewed by its holder");
    assert.equal(await serviceLeaseHolder(db, "role"), "first");
    await new Promise((resolve) => setTimeout(resolve, 250));
    assert.equal(await serviceLeaseHolder(db, "role"), null, "ran out");
    assert.equal(await holdServiceLease(db, "role", "second", 10_000), true, "taken over");
    assert.equal(await holdServiceLease(db, "role", "first", 200), false, "the old holder learns it lost the role");
    await releaseServiceLease(db, "role", "second");
    assert.equal(await holdServiceLease(db, "role", "first", 200), true, "a released role is free at once");
  } finally {
    await env.close();
  }
});

Deno.test("reconcile job: an account with live pushes is left to them, checked cheaply hourly, read whole when owed", async () => {
  const { env, partner } = await readyClient();
  try {
    const { client, account, draft, record } = await anaAtVenueA(env, partner.partnerId);
    const runJob = async () =>
      (await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200)).summary;
    const plan = async () => {
      const summary = await runJob();
      if (summary.fundingRead) return "FUNDING";
      return summary.leftToPushes ? "LEAVE" : summary.swept ? (summary.sweptAndRead ? "SWEEP, READ" : "SWEEP") : "READ";
    };
    const pushes = (coversFunding: boolean, state = { live: true, flowingSince: Date.now() - 1000 }) =>
      withTransaction(env.deps.db, (tx) => {
        const row = {
          clientId: client.id,
          providerId: "VENUE_A",
          owner: "keeper",
          ...state,
          coversOrders: true,
          coversFunding,
          changedAt: Date.now(),
        };
        return tx.insert(accountPushes).values(row)
          .onConflictDoUpdate({ target: [accountPushes.clientId, accountPushes.providerId], set: row });
      });
    const advance = (ms: number) => env.clock.freeze(env.clock.now() + ms);

    assert.equal(await plan(), "READ", "no pushes yet");
    await holdServiceLease(env.deps.db, PUSH_KEEPER_LEASE, "keeper", 60_000);
    assert.equal(await plan(), "SWEEP", "a keeper runs, the account's pushes do not flow yet: its sizes polled");
    // Pushes flow, but only from a moment after any read started: polled until a read covers the gap.
    await pushes(true, { live: false, flowingSince: Date.now() + 60_000 });
    assert.equal(await plan(), "SWEEP");
    assert.equal(await plan(), "SWEEP", "a read that started before the pushes flowed does not cover the gap");
    await pushes(true, { live: false, flowingSince: Date.now() - 1000 });
    assert.equal(await plan(), "SWEEP", "the read that covers the gap");
    assert.equal(
      (await env.deps.db.read.select().from(accountPushes).where(eq(accountPushes.clientId, client.id)))[0].live,
      true,
      "recorded live by the job's read",
    );
    assert.equal(await plan(), "LEAVE", "left to its pushes");
    advance(HOUR_MS - MINUTE_MS);
    assert.equal(await plan(), "LEAVE", "still within the hour");
    advance(2 * MINUTE_MS);
    assert.equal(await plan(), "SWEEP", "an hour on: its positions' sizes checked, and they match");
    assert.equal(await plan(), "LEAVE", "the check counts as a read");

    // A fill the pushes never told: the check finds the venue's position differ and reads the account whole.
    await env.deps.venues.VENUE_A.placeOrder(credentialsOf(account), {
      symbol: "BTCUSDT",
      side: "BUY",
      type: "MARKET",
      quantity: "0.002",
      reduceOnly: false,
      clientOrderId: "unseen-fill",
    });
    advance(HOUR_MS + MINUTE_MS);
    assert.equal(await plan(), "SWEEP, READ");
    assert.equal(await plan(), "LEAVE");

    // A close whose result waits for the funding through its time, once the venue has published it: funding alone.
    const waiting = {
      clientId: client.id,
      providerId: "VENUE_A",
      venueRef: "FILL:BTCUSDT:waiting",
      positionId: "position-waiting",
      status: "PENDING",
      pendingReason: "FUNDING_PENDING",
      realizedMicros: 0,
      venueFeesMicros: 0,
      fundingMicros: 0,
      builderFeesMicros: 0,
      netMicros: 0,
      factsCount: 1,
    };
    await withTransaction(
      env.deps.db,
      (tx) => tx.insert(performancePortions).values({ ...waiting, closedAt: Date.now() - 10_000 }),
    );
    assert.equal(await plan(), "LEAVE", "closed seconds ago: the venue may not show its funding yet");
    await withTransaction(
      env.deps.db,
      (tx) =>
        tx.update(performancePortions).set({ closedAt: Date.now() - 2 * MINUTE_MS })
          .where(eq(performancePortions.venueRef, waiting.venueRef)),
    );
    assert.equal(await plan(), "FUNDING");
    await withTransaction(
      env.deps.db,
      (tx) => tx.delete(performancePortions).where(eq(performancePortions.venueRef, waiting.venueRef)),
    );
    assert.equal(await plan(), "LEAVE");

    await pushes(false);
    advance(HOUR_MS + MINUTE_MS);
    assert.equal(await plan(), "READ", "a position whose funding is not pushed: read whole hourly");

    await record(draft("entry-at-work"));
    assert.equal(await plan(), "READ", "an order at work: read at every pass, whatever is pushed");
    await withTransaction(env.deps.db, (tx) => tx.delete(intents).where(eq(intents.intentId, "entry-at-work")));

    // An opener that died after recording its position and before its stop: read whole until it is protected.
    const entry = await sendIntent(engineCtx(env), await record(draft("entry-opener-died")), account);
    const orphan = await openPositionFromFill(engineCtx(env), entry, {
      stopLossPrice: "60000",
      takeProfits: [{ price: "70000", share: "1" }],
      autoBreakEven: false,
      signalId: null,
    });
    assert.equal(orphan.protectionStatus, "UNKNOWN");
    await pushes(true);
    assert.equal(await plan(), "READ", "a position whose protection is unknown: read whole");
    const [protectedNow] = await env.deps.db.read.select().from(positions)
      .where(eq(positions.positionId, orphan.positionId));
    assert.equal(protectedNow.protectionStatus, "PROTECTED", protectedNow.protectionReason ?? "");
    assert.equal(await plan(), "LEAVE", "protected: left to its pushes again");

    // A keeper that stopped renewing (killed): its lease has 15 s left, the job does not wait for it to run out.
    await holdServiceLease(env.deps.db, PUSH_KEEPER_LEASE, "keeper", 15_000);
    assert.equal(await plan(), "READ", "the keeper went silent: its rows count for nothing");
    await holdServiceLease(env.deps.db, PUSH_KEEPER_LEASE, "keeper", 30_000);
    assert.equal(await plan(), "LEAVE", "renewed on time: left to its pushes again");

    await releaseServiceLease(env.deps.db, PUSH_KEEPER_LEASE, "keeper");
    assert.equal(await plan(), "READ", "the keeper is gone: its rows count for nothing");
  } finally {
    await env.close();
  }
});
