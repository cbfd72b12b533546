/**
 * A wallet signature relayed again: the process that relayed it died before
 * answering (issue 29, defect 1), so the venue already has the signed action
 * and refuses its nonce as used. The retried `POST /connect/api/wallet/sign`
 * settles by asking the venue what holds, never by relaying anew. Reproduced
 * without a kill by relaying the signed action to the simulator first, as the
 * dead process did.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { QA_BUILDER_ADDRESS } from "../../config.ts";
import { connectSessions, events, providerAccounts } from "../../db/schema.ts";
import type { HexAddress, UserSignedAction } from "../../venues/types.ts";
import { approveAgentAction, approveBuilderFeeAction, generateAgentKey } from "../../venues/venue_b/signing.ts";
import type { TestEnv } from "../_helpers/env.ts";
import { expectError, expectJson } from "../_helpers/http.ts";
import { openPage, signAsWallet, type Wallet, walletSetUp as setUp } from "./connect_fixture.ts";

/** What the dead process did: relay the session's pending action with the wallet's signature. */
async function relayAsTheDeadProcess(env: TestEnv, sessionId: string, signature: string) {
  const [session] = await env.deps.db.read.select().from(connectSessions)
    .where(eq(connectSessions.sessionId, sessionId));
  const pending = session.pendingAction as { action: UserSignedAction["action"] };
  const venue = env.deps.venues.VENUE_B;
  await venue.submitUserSignedAction!(venue.walletApprovals!.withSignature(pending.action, signature));
}

/** The wallet signs and relays an action of its own, outside the page (in the venue's app, say). */
async function signAtTheVenue(env: TestEnv, wallet: Wallet, action: UserSignedAction["action"]) {
  const venue = env.deps.venues.VENUE_B;
  const signature = await signAsWallet(wallet, venue.walletApprovals!.typedDataForWallet(action));
  await venue.submitUserSignedAction!(venue.walletApprovals!.withSignature(action, signature));
}

async function connectedEvents(env: TestEnv) {
  return (await env.deps.db.read.select().from(events)).filter((e) => e.eventType === "provider.connected");
}

async function sessionRow(env: TestEnv, sessionId: string) {
  const [row] = await env.deps.db.read.select().from(connectSessions).where(eq(connectSessions.sessionId, sessionId));
  return row;
}

Deno.test("POST /connect/api/wallet/sign of an agent approval the venue already took goes on as a first relay would", async () => {
  const { env, partner, wallet } = await setUp();
  try {
    const { session, request } = await openPage(env, partner);
    const agentStep = await expectJson(
      await request("/wallet/start", { walletAddress: wallet.address, chainId: "0xa4b1" }),
      200,
    );
    const signature = await signAsWallet(wallet, agentStep.typedData);
    await relayAsTheDeadProcess(env, session.sessionId, signature);

    const builderStep = await expectJson(await request("/wallet/sign", { signature }), 200);
    assert.equal(builderStep.step, "BUILDER");
    assert.equal(builderStep.typedData.message.maxFeeRate, "0.025%");
    const done = await expectJson(
      await request("/wallet/sign", { signature: await signAsWallet(wallet, builderStep.typedData) }),
      200,
    );
    assert.deepEqual(done, { status: "CONNECTED", builderFeeTenthsBps: 25, walletAddress: wallet.address });

    const row = await sessionRow(env, session.sessionId);
    assert.equal(row.status, "CONNECTED");
    assert.equal(row.attempts, 0);
    const [account] = await env.deps.db.read.select().from(providerAccounts);
    assert.equal(account.connection, "CONNECTED");
    assert.equal(account.accountAddress, wallet.address.toLowerCase());
    assert.equal(account.agentAddress, row.agentAddress);
    assert.equal(account.approvedBuilderFeeTenthsBps, 25);
    const connected = await connectedEvents(env);
    assert.equal(connected.length, 1);
    assert.equal(connected[0].data.agentAddress, row.agentAddress);
    // Once: the same signature again finds the session used.
    await expectError(await request("/wallet/sign", { signature }), 409, "CONNECT_ALREADY_USED");
    assert.equal((await connectedEvents(env)).length, 1);
  } finally {
    await env.close();
  }
});

Deno.test("POST /connect/api/wallet/sign of a builder fee approval the venue already took connects once", async () => {
  const { env, partner, wallet } = await setUp();
  try {
    const { session, request } = await openPage(env, partner);
    const agentStep = await expectJson(
      await request("/wallet/start", { walletAddress: wallet.address, chainId: "0xa4b1" }),
      200,
    );
    const builderStep = await expectJson(
      await request("/wallet/sign", { signature: await signAsWallet(wallet, agentStep.typedData) }),
      200,
    );
    const signature = await signAsWallet(wallet, builderStep.typedData);
    await relayAsTheDeadProcess(env, session.sessionId, signature);

    const done = await expectJson(await request("/wallet/sign", { signature }), 200);
    assert.deepEqual(done, { status: "CONNECTED", builderFeeTenthsBps: 25, walletAddress: wallet.address });
    const [account] = await env.deps.db.read.select().from(providerAccounts);
    assert.equal(account.connection, "CONNECTED");
    assert.equal(account.approvedBuilderFeeTenthsBps, 25);
    assert.equal((await sessionRow(env, session.sessionId)).attempts, 0);
    assert.equal((await connectedEvents(env)).length, 1);
  } finally {
    await env.close();
  }
});

Deno.test("POST /connect/api/wallet/sign of an agent approval the venue took but no longer holds is AGENT_APPROVAL_REJECTED", async () => {
  const { env, partner, wallet } = await setUp();
  try {
    const { session, request } = await openPage(env, partner);
    const agentStep = await expectJson(
      await request("/wallet/start", { walletAddress: wallet.address, chainId: "0xa4b1" }),
      200,
    );
    const signature = await signAsWallet(wallet, agentStep.typedData);
    await relayAsTheDeadProcess(env, session.sessionId, signature);
    // The wallet approves another agent under the same name, which replaces ours at the venue.
    await signAtTheVenue(
      env,
      wallet,
      approveAgentAction({
        isMainnet: env.deps.config.venueBMainnet,
        signatureChainId: "0xa4b1",
        agentAddress: generateAgentKey().address,
        agentName: agentStep.typedData.message.agentName,
        nonce: agentStep.typedData.message.nonce + 1,
      }),
    );

    const refused = await expectError(await request("/wallet/sign", { signature }), 400, "AGENT_APPROVAL_REJECTED");
    assert.equal(refused.attemptsLeft, 4);
    const row = await sessionRow(env, session.sessionId);
    assert.equal(row.status, "PENDING");
    assert.equal(row.failureCode, "AGENT_APPROVAL_REJECTED");
    assert.deepEqual(await env.deps.db.read.select().from(providerAccounts), []);
    assert.equal((await connectedEvents(env)).length, 0);
  } finally {
    await env.close();
  }
});

Deno.test("POST /connect/api/wallet/sign of a builder fee approval the venue took but no longer holds is BUILDER_APPROVAL_REJECTED", async () => {
  const { env, partner, wallet } = await setUp();
  try {
    const { session, request } = await openPage(env, partner);
    const agentStep = await expectJson(
      await request("/wallet/start", { walletAddress: wallet.address, chainId: "0xa4b1" }),
      200,
    );
    const builderStep = await expectJson(
      await request("/wallet/sign", { signature: await signAsWallet(wallet, agentStep.typedData) }),
      200,
    );
    const signature = await signAsWallet(wallet, builderStep.typedData);
    await relayAsTheDeadProcess(env, session.sessionId, signature);
    // The wallet lowers its approval for our builder below the partner's fee.
    await signAtTheVenue(
      env,
      wallet,
      approveBuilderFeeAction({
        isMainnet: env.deps.config.venueBMainnet,
        signatureChainId: "0xa4b1",
        builder: QA_BUILDER_ADDRESS as HexAddress,
        maxFeeTenthsBps: 10,
        nonce: builderStep.typedData.message.nonce + 1,
      }),
    );

    const refused = await expectError(await request("/wallet/sign", { signature }), 400, "BUILDER_APPROVAL_REJECTED");
    assert.equal(refused.attemptsLeft, 4);
    const row = await sessionRow(env, session.sessionId);
    assert.equal(row.status, "PENDING");
    assert.equal(row.failureCode, "BUILDER_APPROVAL_REJECTED");
    assert.equal((await connectedEvents(env)).length, 0);
  } finally {
    await env.close();
  }
});

Deno.test("POST /connect/api/wallet/sign whose relay's answer is lost asks the venue at once instead of answering 503", async () => {
  const { env, partner, wallet } = await setUp();
  const fault = (mode: string) =>
    fetch(`${env.venueUrls.venueB}/_control/faults`, { method: "PUT", body: JSON.stringify({ mode }) })
      .then((response) => response.body?.cancel());
  try {
    const { session, request } = await openPage(env, partner);
    const agentStep = await expectJson(
      await request("/wallet/start", { walletAddress: wallet.address, chainId: "0xa4b1" }),
      200,
    );
    // The venue applies the approval and its answer never comes back.
    await fault("LOSE_RESPONSE");
    const builderStep = await expectJson(
      await request("/wallet/sign", { signature: await signAsWallet(wallet, agentStep.typedData) }),
      200,
    );
    await fault("NONE");
    assert.equal(builderStep.step, "BUILDER");
    await expectJson(
      await request("/wallet/sign", { signature: await signAsWallet(wallet, builderStep.typedData) }),
      200,
    );
    assert.equal((await sessionRow(env, session.sessionId)).status, "CONNECTED");
    assert.equal((await connectedEvents(env)).length, 1);
  } finally {
    await fault("NONE");
    await env.close();
  }
});
