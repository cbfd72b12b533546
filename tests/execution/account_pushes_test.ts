/**
 * The fleet's keeper of the venues' account pushes, as the reconcile job sees
 * it: one instance holds the keeper's lease at a time, an account whose
 * pushes its keeper records as live is left to them between sweeps, and a
 * keeper whose lease is gone counts for nothing (the job polls again).
 */
import assert from "node:assert/strict";
import { withTransaction } from "../../db/client.ts";
import { accountPushes } from "../../db/schema.ts";
import { holdServiceLease, releaseServiceLease, serviceLeaseHolder } from "../../domain/jobs/service_leases.ts";
import { PUSH_KEEPER_LEASE } from "../../domain/execution/push_states.ts";
import { HOUR_MS, MINUTE_MS } from "../../domain/clock.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { expectJson, operator } from "../_helpers/http.ts";
import { readyClient } from "../setup/setup_fixture.ts";
import { anaAtVenueA } from "./execution_fixture.ts";

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

Deno.test("reconcile job: an account with live pushes is left to them between sweeps, polled when their keeper is gone", async () => {
  const { env, partner } = await readyClient();
  try {
    const { client } = await anaAtVenueA(env, partner.partnerId);
    const runJob = async () =>
      (await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200)).summary;
    const pushes = (covers: { orders: boolean; funding: boolean }) =>
      withTransaction(env.deps.db, (tx) => {
        const row = {
          clientId: client.id,
          providerId: "VENUE_A",
          owner: "keeper",
          live: true,
          coversOrders: covers.orders,
          coversFunding: covers.funding,
          changedAt: Date.now(),
        };
        return tx.insert(accountPushes).values(row)
          .onConflictDoUpdate({ target: [accountPushes.clientId, accountPushes.providerId], set: row });
      });
    const advance = (ms: number) => env.clock.freeze(env.clock.now() + ms);

    assert.equal((await runJob()).accounts, 1, "read once: no pushes yet");
    await holdServiceLease(env.deps.db, PUSH_KEEPER_LEASE, "keeper", 60_000);
    await pushes({ orders: true, funding: true });
    assert.deepEqual([(await runJob()).accounts, (await runJob()).leftToPushes], [0, 1], "left to its pushes");
    advance(HOUR_MS - MINUTE_MS);
    assert.equal((await runJob()).accounts, 0, "still within the hourly sweep");
    advance(2 * MINUTE_MS);
    assert.equal((await runJob()).accounts, 1, "swept after an hour");
    assert.equal((await runJob()).accounts, 0);

    await pushes({ orders: false, funding: false });
    advance(16 * MINUTE_MS);
    assert.equal((await runJob()).accounts, 1, "only fills pushed: swept every quarter of an hour");

    await releaseServiceLease(env.deps.db, PUSH_KEEPER_LEASE, "keeper");
    assert.equal((await runJob()).accounts, 1, "the keeper is gone: its rows count for nothing");
    assert.equal((await runJob()).accounts, 1, "polled at every pass");
  } finally {
    await env.close();
  }
});
