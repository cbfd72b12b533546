/**
 * A VENUE_B agent's approval ends: approved with an explicit validity, read
 * back from the venue, announced two weeks ahead, renewed through a connect
 * link, and marked lost only once the venue no longer holds it.
 *
 * The service's clock is the test clock; the simulator's is the real one, as
 * a venue's would be. So moving the test clock past the end shows a venue that
 * still holds the agent, and the agent is removed at the venue to end it there.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { events, providerAccounts } from "../../db/schema.ts";
import { START } from "../_helpers/env.ts";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { expectError, expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import { connectWallet, fund, openPage, signAsWallet, walletSetUp } from "./connect_fixture.ts";
import { withTransaction } from "../../db/client.ts";

const DAY = 86_400_000;

async function runAccessExpiry(env: Awaited<ReturnType<typeof walletSetUp>>["env"]) {
  return (await expectJson(await operator(env, "POST", "/operator/v1/jobs/access-expiry/run"), 200)).summary;
}

async function venueBView(partner: TestPartner) {
  const view = await expectJson(await partner.call("GET", "/v1/users/ana/providers"), 200);
  return view.providers.find((provider: { providerId: string }) => provider.providerId === "VENUE_B");
}

Deno.test("a VENUE_B agent is approved for 179 days, announced two weeks before its end, renewed by a connect link, and lost only once the venue drops it", async () => {
  const { env, partner, wallet } = await walletSetUp();
  try {
    const eventsOf = async (type: string) =>
      (await env.deps.db.read.select().from(events).where(eq(events.eventType, type))).map((row) => row.data);
    const { request } = await openPage(env, partner);
    const agentStep = await expectJson(
      await request("/wallet/start", { walletAddress: wallet.address, chainId: "0xa4b1" }),
      200,
    );
    // The wallet signs the validity into the agent's name, as the venue reads it; the page shows both apart.
    const { name, validUntil } = agentStep.agent;
    assert.equal(agentStep.typedData.message.agentName, `${name} valid_until ${validUntil}`);
    const venueNow = Date.now();
    assert.ok(Math.abs(validUntil - (venueNow + 179 * DAY)) < 60_000, "179 days on the venue's clock");
    const builderStep = await expectJson(
      await request("/wallet/sign", { signature: await signAsWallet(wallet, agentStep.typedData) }),
      200,
    );
    await expectJson(
      await request("/wallet/sign", { signature: await signAsWallet(wallet, builderStep.typedData) }),
      200,
    );
    const [first] = await env.deps.db.read.select().from(providerAccounts);
    assert.equal(first.accessExpiresAt, validUntil, "stored as the venue lists it");
    assert.equal((await venueBView(partner)).accessExpiresAt, new Date(validUntil).toISOString());

    // Nothing to say while the end is more than two weeks away.
    assert.equal((await runAccessExpiry(env)).announced, 0);
    env.clock.freeze(validUntil - 13 * DAY);
    assert.equal((await runAccessExpiry(env)).announced, 1);
    assert.equal((await runAccessExpiry(env)).announced, 0, "once per end");
    assert.deepEqual(await eventsOf("provider.access_expiring"), [
      { providerId: "VENUE_B", connection: "CONNECTED", accessExpiresAt: new Date(validUntil).toISOString() },
    ]);

    // Renewal: a connect link approves a new agent; the builder fee approved before is not asked again.
    env.clock.freeze(START);
    const renewal = await openPage(env, partner);
    // Another wallet is another account: the renewal names the connected one, before anything is signed.
    const stranger = privateKeyToAccount(generatePrivateKey());
    await fund(env, stranger.address);
    const refused = await expectError(
      await renewal.request("/wallet/start", { walletAddress: stranger.address, chainId: "0xa4b1" }),
      403,
      "WALLET_MISMATCH",
    );
    assert.equal(refused.expectedAddress, wallet.address);
    const renewalStep = await expectJson(
      await renewal.request("/wallet/start", { walletAddress: wallet.address, chainId: "0xa4b1" }),
      200,
    );
    assert.equal(renewalStep.step, "AGENT");
    const renewalDone = await expectJson(
      await renewal.request("/wallet/sign", { signature: await signAsWallet(wallet, renewalStep.typedData) }),
      200,
    );
    assert.equal(renewalDone.status, "CONNECTED", "one signature: no builder step");
    const [renewed] = await env.deps.db.read.select().from(providerAccounts);
    assert.notEqual(renewed.agentAddress, first.agentAddress);
    assert.equal(renewed.connection, "CONNECTED");
    assert.ok(renewed.accessExpiresAt! >= validUntil);
    assert.equal(renewed.accessExpiryWarnedAt, null, "the new end is announced anew when near");
    const listed = await expectJson(
      await fetch(`${env.venueUrls.venueB}/info`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ type: "extraAgents", user: wallet.address }),
      }),
      200,
    );
    assert.deepEqual(listed.map((agent: { address: string }) => agent.address), [renewed.agentAddress]);

    // Past the end on our clock, the venue still holds it (its clock is behind): it stays CONNECTED.
    env.clock.freeze(renewed.accessExpiresAt! + DAY);
    const held = await runAccessExpiry(env);
    assert.equal(held.stillHeld, 1);
    assert.equal(held.lapsed, 0);
    assert.equal((await venueBView(partner)).connection, "CONNECTED");
    assert.deepEqual(await eventsOf("provider.access_lost"), []);

    // Gone at the venue: ACCESS_LOST, announced once.
    const removed = await fetch(`${env.venueUrls.venueB}/_control/agents/${renewed.agentAddress}`, {
      method: "DELETE",
    });
    assert.equal(removed.status, 200, await removed.text());
    assert.equal((await runAccessExpiry(env)).lapsed, 1);
    const lost = await venueBView(partner);
    assert.equal(lost.connection, "ACCESS_LOST");
    assert.equal(lost.accessExpiresAt, null);
    assert.deepEqual(await eventsOf("provider.access_lost"), [{ providerId: "VENUE_B", connection: "ACCESS_LOST" }]);
    assert.equal((await runAccessExpiry(env)).lapsed, 0);
  } finally {
    await env.close();
  }
});

Deno.test("an agent connected before the service read validities has its end read from the venue, a few accounts a run", async () => {
  const { env, partner, wallet } = await walletSetUp();
  try {
    await connectWallet((await openPage(env, partner)).request, wallet);
    const [connected] = await env.deps.db.read.select().from(providerAccounts);
    await withTransaction(
      env.deps.db,
      (tx) => tx.run(`UPDATE provider_accounts SET access_expires_at = NULL, access_checked_at = NULL`),
    );
    assert.equal((await venueBView(partner)).accessExpiresAt, null);

    const summary = await runAccessExpiry(env);
    assert.equal(summary.validityRead, 1);
    const [read] = await env.deps.db.read.select().from(providerAccounts);
    assert.equal(read.accessExpiresAt, connected.accessExpiresAt);
    assert.equal(read.accessCheckedAt, START);
    assert.equal((await runAccessExpiry(env)).validityRead, 0, "read once");
  } finally {
    await env.close();
  }
});
