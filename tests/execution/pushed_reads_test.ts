/**
 * Reading what a push named (domain/execution/pushed_reads.ts) against the
 * VENUE_A simulator: a target's fill resizes the position and records the
 * fill from the symbol's read alone; what such a read cannot judge (a size
 * that changed in a symbol the push did not name) asks for the whole read,
 * leaving the account as it was; a pushed funding payment is read alone.
 */
import assert from "node:assert/strict";
import { and, eq } from "drizzle-orm";
import { accountPushes, accountStates, positions, resultFacts } from "../../db/schema.ts";
import { withTransaction } from "../../db/client.ts";
import { holdServiceLease } from "../../domain/jobs/service_leases.ts";
import { PUSH_KEEPER_LEASE } from "../../domain/execution/push_states.ts";
import { credentialsOf } from "../../domain/accounts/load_account.ts";
import { openPositionFromFill, protectPosition } from "../../domain/execution/protection.ts";
import { readFunding, readNamedSymbols, WHOLE_READ_NEEDED } from "../../domain/execution/pushed_reads.ts";
import { sendIntent } from "../../domain/execution/send_intent.ts";
import { expectJson, operator } from "../_helpers/http.ts";
import { readyClient } from "../setup/setup_fixture.ts";
import { anaAtVenueA, countWholeReads, engineCtx, TWO_TARGETS_PLAN } from "./execution_fixture.ts";

Deno.test("pushed reads: a target's fill is read from its symbol, what the read cannot judge asks for a whole read", async () => {
  const { env, partner } = await readyClient();
  const control = (method: string, path: string, body: unknown) =>
    fetch(`${env.venueUrls.venueA}/_control${path}`, { method, body: JSON.stringify(body) })
      .then((response) => response.json());
  try {
    const ctx = engineCtx(env);
    const { client, account, draft, record } = await anaAtVenueA(env, partner.partnerId);
    const entry = await sendIntent(ctx, await record(draft("entry-named-1", { quantity: "0.004" })), account);
    const opened = await protectPosition(ctx, await openPositionFromFill(ctx, entry, TWO_TARGETS_PLAN), account);
    await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
    const position = async () =>
      (await env.deps.db.read.select().from(positions).where(eq(positions.positionId, opened.positionId)))[0];
    const fills = async () =>
      (await env.deps.db.read.select().from(resultFacts).where(eq(resultFacts.clientId, client.id)))
        .filter((fact) => fact.kind === "FILL");
    const state = async () =>
      (await env.deps.db.read.select().from(accountStates).where(and(
        eq(accountStates.clientId, client.id),
        eq(accountStates.providerId, "VENUE_A"),
      )))[0];

    const before = (await fills()).length;
    await control("PUT", "/markets/BTCUSDT", { markPrice: "67100" }); // the first target fills
    const read = await readNamedSymbols(ctx, account, ["BTCUSDT"]);
    assert.notEqual(read, WHOLE_READ_NEEDED);
    assert.equal((await position()).quantity, "0.002", "resized by the target's fill");
    assert.equal((await fills()).length, before + 1, "the target's fill recorded");
    assert.deepEqual((await state()).positions.map((size) => size.quantity), ["0.002"]);

    // A trade the pushes did not name, in another symbol: the symbol's read cannot judge it.
    await env.deps.venues.VENUE_A.placeOrder(credentialsOf(account), {
      symbol: "ETHUSDT",
      side: "BUY",
      type: "MARKET",
      quantity: "0.01",
      reduceOnly: false,
      clientOrderId: "unnamed-trade",
    });
    const kept = await state();
    assert.equal(await readNamedSymbols(ctx, account, ["BTCUSDT"]), WHOLE_READ_NEEDED);
    assert.deepEqual(await state(), kept, "nothing recorded from a read that could not judge");

    await control("POST", "/funding", { symbol: "BTCUSDT", rate: "0.0001" });
    assert.equal(await readFunding(ctx, account), 1, "the pushed funding payment, read alone");
    assert.ok((await state()).fundingKnownThrough > kept.fundingKnownThrough, "funding known through this read");
    assert.equal(await readFunding(ctx, account), 0, "read again: nothing new");
  } finally {
    await env.close();
  }
});

Deno.test("pushed reads: the job's cheap check that finds a held position resized reads that symbol, not the account whole", async () => {
  const { env, partner } = await readyClient();
  try {
    const ctx = engineCtx(env);
    const { client, account, draft, record } = await anaAtVenueA(env, partner.partnerId);
    const runJob = async () =>
      (await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200)).summary;
    await runJob();
    // A keeper runs and the account's pushes flow (not yet confirmed): the job polls its sizes.
    await holdServiceLease(env.deps.db, PUSH_KEEPER_LEASE, "keeper", 60_000);
    await withTransaction(env.deps.db, (tx) =>
      tx.insert(accountPushes).values({
        clientId: client.id,
        providerId: "VENUE_A",
        owner: "keeper",
        live: false,
        flowingSince: Date.now() + 60_000,
        coversOrders: true,
        coversFunding: true,
        changedAt: Date.now(),
      }));
    // The service opens a position after the account's last read: its sizes no longer match.
    const entry = await sendIntent(ctx, await record(draft("entry-swept-1")), account);
    await protectPosition(
      ctx,
      await openPositionFromFill(ctx, entry, {
        stopLossPrice: "60000",
        takeProfits: [{ price: "70000", share: "1" }],
        autoBreakEven: false,
        signalId: null,
      }),
      account,
    );
    const counted = countWholeReads(env, "VENUE_A");
    const summary = await runJob();
    assert.deepEqual([summary.swept, summary.sweptAndRead], [1, 1], JSON.stringify(summary));
    assert.equal(counted.wholeReads, 0, "the differing symbol read alone");
    const [state] = await env.deps.db.read.select().from(accountStates).where(eq(accountStates.clientId, client.id));
    assert.deepEqual(state.positions.map((size) => [size.symbol, size.quantity]), [["BTCUSDT", "0.002"]]);
    assert.equal((await runJob()).sweptAndRead, 0, "the next check matches");
  } finally {
    await env.close();
  }
});
