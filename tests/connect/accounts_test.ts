/** Accounts, provider views and live reads after a hosted connection (VENUE_A through the simulator). */
import assert from "node:assert/strict";
import { events, providerAccounts } from "../../db/schema.ts";
import { credentialsOf } from "../../domain/accounts/load_account.ts";
import { expectError, expectJson } from "../_helpers/http.ts";
import { connectedVenueA, openLink, setUp } from "./connect_fixture.ts";

function eventsOf(rows: { eventType: string }[], type: string) {
  return rows.filter((row) => row.eventType === type);
}

Deno.test("a connected account shows in accounts, providers, status and live reads", async () => {
  const { env, partner } = await setUp();
  try {
    const before = await expectJson(await partner.call("GET", "/v1/users/ana/accounts"), 200);
    assert.deepEqual(before.accounts.map((a: { status: string }) => a.status), ["NOT_CONNECTED", "NOT_CONNECTED"]);
    await expectError(
      await partner.call("GET", "/v1/users/ana/account?providerId=VENUE_A"),
      422,
      "CREDENTIALS_MISSING",
    );
    await openLink(env, partner, "VENUE_B");
    await connectedVenueA(env, partner, { canWithdraw: true });

    const accounts = await expectJson(await partner.call("GET", "/v1/users/ana/accounts"), 200);
    const [a, b] = accounts.accounts;
    assert.equal(a.providerId, "VENUE_A");
    assert.equal(a.status, "CONNECTED");
    assert.equal(a.configured, true);
    assert.equal(a.scheme, "API_KEY");
    assert.deepEqual(a.permissions, { canRead: true, canFutures: true, canWithdraw: true });
    assert.equal(a.revokedAt, null);
    assert.equal(b.status, "NOT_CONNECTED");
    assert.doesNotMatch(JSON.stringify(accounts), /apiKey|secret|sealed/i);

    const providers = await expectJson(await partner.call("GET", "/v1/users/ana/providers"), 200);
    const [pa, pb] = providers.providers;
    assert.equal(pa.connection, "CONNECTED");
    assert.equal(pa.connectionFlow, "HOSTED");
    assert.equal(pa.eligibleForNewEntries, false, "connected, but no setup or automation: the entry gates block");
    assert.equal(pa.builder, null);
    assert.equal(pb.connection, "CONNECT_PENDING");
    assert.equal(pb.eligibleForNewEntries, false);
    assert.deepEqual(pb.builder, {
      required: true,
      feeTenthsBps: 25,
      approvalRequiredFromWallet: true,
      approvedByUser: null,
      approvalStatus: "NOT_CONNECTED",
      approvedMaxFeeTenthsBps: null,
    });
    const status = await expectJson(await partner.call("GET", "/v1/users/ana/status"), 200);
    assert.deepEqual(status.providers.map((p: { connection: string }) => p.connection), [
      "CONNECTED",
      "CONNECT_PENDING",
    ]);

    const balance = await expectJson(await partner.call("GET", "/v1/users/ana/account?providerId=VENUE_A"), 200);
    assert.equal(balance.providerId, "VENUE_A");
    const usdt = balance.balances.find((row: { asset: string }) => row.asset === "USDT");
    assert.equal(usdt.total, 1000);
    assert.deepEqual(balance.positions, []);
    const positions = await expectJson(await partner.call("GET", "/v1/users/ana/positions?providerId=VENUE_A"), 200);
    assert.deepEqual(positions, { providerId: "VENUE_A", positions: [], requestId: positions.requestId });

    const tested = await expectJson(await partner.call("POST", "/v1/users/ana/accounts/VENUE_A/test"), 200);
    assert.equal(tested.success, true);
    assert.equal(tested.error, null);
    assert.ok(Number.isInteger(tested.latencyMs));
    await expectError(await partner.call("POST", "/v1/users/ana/accounts/VENUE_B/test"), 400, "API_NOT_CONFIGURED");
    await expectError(
      await partner.call("PUT", "/v1/users/ana/accounts/VENUE_A", { body: { apiKey: "k", apiSecret: "s" } }),
      403,
      "HOSTED_CONNECT_REQUIRED",
    );
  } finally {
    await env.close();
  }
});

Deno.test("a key the venue stops accepting: the test route changes nothing, a live read marks ACCESS_LOST once", async () => {
  const { env, partner } = await setUp();
  try {
    const keys = await connectedVenueA(env, partner);
    await fetch(`${env.venueUrls.venueA}/_control/accounts/${keys.apiKey}`, { method: "DELETE" }).then((r) =>
      r.body?.cancel()
    );

    const failed = await partner.call("POST", "/v1/users/ana/accounts/VENUE_A/test");
    assert.equal(failed.status, 400);
    const body = await failed.json();
    assert.equal(body.success, false);
    assert.equal(typeof body.error, "string");
    assert.equal(body.permissions, null);
    assert.equal((await env.deps.db.read.select().from(providerAccounts))[0].connection, "CONNECTED");

    for (let i = 0; i < 2; i++) {
      await expectError(
        await partner.call("GET", "/v1/users/ana/account?providerId=VENUE_A"),
        422,
        "PROVIDER_CREDENTIAL_REJECTED",
      );
    }
    const providers = await expectJson(await partner.call("GET", "/v1/users/ana/providers"), 200);
    assert.equal(providers.providers[0].connection, "ACCESS_LOST");
    assert.equal(providers.providers[0].eligibleForNewEntries, false);
    assert.equal(eventsOf(await env.deps.db.read.select().from(events), "provider.access_lost").length, 1);
    // Reconnecting shows RECOVERING while the new link is pending.
    await openLink(env, partner);
    const recovering = await expectJson(await partner.call("GET", "/v1/users/ana/providers"), 200);
    assert.equal(recovering.providers[0].connection, "RECOVERING");
  } finally {
    await env.close();
  }
});

Deno.test("DELETE revokes: secret erased without positions, kept while one is open; repeated DELETE is quiet", async () => {
  const { env, partner } = await setUp();
  try {
    await connectedVenueA(env, partner);
    await expectError(await partner.call("DELETE", "/v1/users/ana/accounts/VENUE_B"), 422, "API_NOT_CONFIGURED");
    const revoked = await expectJson(await partner.call("DELETE", "/v1/users/ana/accounts/VENUE_A"), 200);
    assert.equal(revoked.account.status, "REVOKED");
    assert.equal(revoked.account.configured, false);
    assert.equal(revoked.account.secretRetainedForReconciliation, false);
    assert.ok(revoked.account.revokedAt);
    const [row] = await env.deps.db.read.select().from(providerAccounts);
    assert.equal(row.sealedSecret, "");
    const again = await expectJson(await partner.call("DELETE", "/v1/users/ana/accounts/VENUE_A"), 200);
    assert.equal(again.account.status, "REVOKED");
    assert.equal(eventsOf(await env.deps.db.read.select().from(events), "provider.disconnected").length, 1);
    await expectError(
      await partner.call("GET", "/v1/users/ana/account?providerId=VENUE_A"),
      422,
      "CREDENTIALS_MISSING",
    );
    const accounts = await expectJson(await partner.call("GET", "/v1/users/ana/accounts"), 200);
    assert.equal(accounts.accounts[0].status, "REVOKED");

    // Connected again, with an open position this time: the secret is kept to protect and close it.
    await connectedVenueA(env, partner);
    const [account] = await env.deps.db.read.select().from(providerAccounts);
    assert.equal(account.connection, "CONNECTED");
    await env.deps.venues.VENUE_A.placeOrder(credentialsOf(account), {
      symbol: "BTCUSDT",
      side: "BUY",
      type: "MARKET",
      quantity: "0.002",
      reduceOnly: false,
      clientOrderId: "open-before-revoke",
    });
    const kept = await expectJson(await partner.call("DELETE", "/v1/users/ana/accounts/VENUE_A"), 200);
    assert.equal(kept.account.secretRetainedForReconciliation, true);
    assert.notEqual((await env.deps.db.read.select().from(providerAccounts))[0].sealedSecret, "");
  } finally {
    await env.close();
  }
});
