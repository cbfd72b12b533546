/**
 * The connect page's wallet flow (VENUE_B) through the HTTP stack, with a
 * local key signing the typed data exactly as a browser wallet's
 * `eth_signTypedData_v4` would.
 */
import assert from "node:assert/strict";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ConfigError, parseConfig, QA_BUILDER_ADDRESS } from "../../config.ts";
import { connectSessions, events, providerAccounts } from "../../db/schema.ts";
import { approveBuilderFeeAction, signUserSignedAction } from "../../venues/venue_b/signing.ts";
import { connectWallet, fund, openPage, signAsWallet, walletSetUp as setUp } from "./connect_fixture.ts";
import { expectError, expectJson } from "../_helpers/http.ts";
import { withTransaction } from "../../db/client.ts";

Deno.test("a wallet approves the agent and the builder fee; the account connects with the agent sealed", async () => {
  const { env, partner, wallet } = await setUp();
  try {
    const { session, request } = await openPage(env, partner);
    const agentStep = await expectJson(
      await request("/wallet/start", { walletAddress: wallet.address, chainId: "0x66eee" }),
      200,
    );
    assert.equal(agentStep.step, "AGENT");
    assert.equal(agentStep.typedData.primaryType, "HyperliquidTransaction:ApproveAgent");
    // What the page shows before the wallet opens: the agent by address and name, the builder, the fee.
    assert.equal(agentStep.walletAddress, wallet.address);
    const { name, validUntil } = agentStep.agent;
    assert.equal(agentStep.typedData.message.agentName, `${name} valid_until ${validUntil}`);
    assert.equal(agentStep.agent.address.toLowerCase(), agentStep.typedData.message.agentAddress);
    assert.match(agentStep.agent.address, /^0x(?=.*[a-f])(?=.*[A-F])[0-9a-fA-F]{40}$/, "checksum casing");
    assert.equal(agentStep.builderAddress.toLowerCase(), QA_BUILDER_ADDRESS.toLowerCase());
    assert.equal(agentStep.builderFeeTenthsBps, 25);
    assert.equal(agentStep.typedData.domain.chainId, 0x66eee);
    const builderStep = await expectJson(
      await request("/wallet/sign", { signature: await signAsWallet(wallet, agentStep.typedData) }),
      200,
    );
    assert.equal(builderStep.step, "BUILDER");
    assert.equal(builderStep.builderFeeTenthsBps, 25);
    assert.equal(builderStep.typedData.message.maxFeeRate, "0.025%");
    assert.equal(builderStep.typedData.message.builder, QA_BUILDER_ADDRESS);
    const done = await expectJson(
      await request("/wallet/sign", { signature: await signAsWallet(wallet, builderStep.typedData) }),
      200,
    );
    assert.equal(done.status, "CONNECTED");

    const state = await expectJson(
      await partner.call("GET", `/v1/users/ana/connect-sessions/${session.sessionId}`),
      200,
    );
    assert.equal(state.status, "CONNECTED");
    const [account] = await env.deps.db.read.select().from(providerAccounts);
    assert.equal(account.accountAddress, wallet.address.toLowerCase());
    assert.equal(account.approvedBuilderFeeTenthsBps, 25);
    assert.equal(account.connection, "CONNECTED");
    // The sealed agent key opens as the account's credential and trades-ready per the venue.
    const check = await env.deps.venues.VENUE_B.testCredentials({
      scheme: "AGENT_WALLET",
      accountAddress: account.accountAddress as `0x${string}`,
      agentAddress: account.agentAddress as `0x${string}`,
      sealedAgentPrivateKey: {
        sealed: account.sealedSecret,
        binding: `provider_accounts/${account.accountId}/credential_secret`,
      },
    });
    assert.deepEqual(check.problems, []);
    const connected = (await env.deps.db.read.select().from(events)).filter((e) =>
      e.eventType === "provider.connected"
    );
    assert.equal(connected.length, 1);
  } finally {
    await env.close();
  }
});

Deno.test("a zero builder fee needs no builder approval", async () => {
  const { env, partner, wallet } = await setUp(0);
  try {
    const { request } = await openPage(env, partner);
    await connectWallet(request, wallet);
    const [account] = await env.deps.db.read.select().from(providerAccounts);
    assert.equal(account.connection, "CONNECTED");
  } finally {
    await env.close();
  }
});

Deno.test("another wallet's signature is WALLET_MISMATCH and counts as an attempt; garbage is a validation error", async () => {
  const { env, partner, wallet } = await setUp();
  try {
    const { request } = await openPage(env, partner);
    const agentStep = await expectJson(
      await request("/wallet/start", { walletAddress: wallet.address, chainId: "0xa4b1" }),
      200,
    );
    const stranger = privateKeyToAccount(generatePrivateKey());
    const refused = await expectError(
      await request("/wallet/sign", { signature: await signAsWallet(stranger, agentStep.typedData) }),
      403,
      "WALLET_MISMATCH",
    );
    assert.equal(refused.attemptsLeft, 4);
    await expectError(await request("/wallet/sign", { signature: `0x${"ab".repeat(65)}` }), 400, "VALIDATION_ERROR");
    await expectError(await request("/wallet/sign", { signature: "0x1234" }), 400, "VALIDATION_ERROR");
    // The right wallet still completes.
    const next = await expectJson(
      await request("/wallet/sign", { signature: await signAsWallet(wallet, agentStep.typedData) }),
      200,
    );
    assert.equal(next.step, "BUILDER");
  } finally {
    await env.close();
  }
});

Deno.test("BUILDER_APPROVAL runs only the builder step, for the connected wallet only; another wallet, before signing, is named and costs no attempt", async () => {
  const { env, partner, wallet } = await setUp(0);
  try {
    await connectWallet((await openPage(env, partner)).request, wallet);
    // The operator raises the fee: the wallet must approve the new ceiling.
    await withTransaction(env.deps.db, (tx) => tx.run(`UPDATE partners SET builder_fee_tenths_bps = 40`));
    const approval = await openPage(env, partner, "BUILDER_APPROVAL");
    const stranger = privateKeyToAccount(generatePrivateKey());
    for (let i = 0; i < 6; i++) {
      const refused = await expectError(
        await approval.request("/wallet/start", { walletAddress: stranger.address, chainId: "0xa4b1" }),
        403,
        "WALLET_MISMATCH",
      );
      assert.equal(refused.expectedAddress, wallet.address, "named as wallets show it (checksum casing)");
      assert.match(refused.error.message, new RegExp(`Conecte a carteira ${wallet.address}`));
      assert.equal(refused.attemptsLeft, undefined, "nothing was signed: no attempt");
    }
    const [row] = (await env.deps.db.read.select().from(connectSessions))
      .filter((session) => session.purpose === "BUILDER_APPROVAL");
    assert.equal(row.attempts, 0);
    const builderStep = await expectJson(
      await approval.request("/wallet/start", { walletAddress: wallet.address, chainId: "0xa4b1" }),
      200,
    );
    assert.equal(builderStep.step, "BUILDER");
    assert.equal(builderStep.typedData.message.maxFeeRate, "0.04%");
    const done = await expectJson(
      await approval.request("/wallet/sign", { signature: await signAsWallet(wallet, builderStep.typedData) }),
      200,
    );
    assert.equal(done.status, "CONNECTED");
    const [account] = await env.deps.db.read.select().from(providerAccounts);
    assert.equal(account.approvedBuilderFeeTenthsBps, 40);
  } finally {
    await env.close();
  }
});

Deno.test("one VENUE_B network for adapter and simulator: testnet in QA, mainnet in production, or as configured", () => {
  assert.equal(parseConfig({}).venueBMainnet, false);
  assert.equal(parseConfig({ VENUE_B_NETWORK: "mainnet" }).venueBMainnet, true);
  const production = {
    SERVICE_ENV: "production",
    OPERATOR_TOKEN: "o".repeat(32),
    MASTER_KEY: btoa("k".repeat(32)),
    VENUE_A_URL: "https://fapi.example",
    VENUE_A_SPOT_URL: "https://api.example",
    VENUE_A_STREAM_URL: "wss://fstream.example",
    VENUE_B_URL: "https://api.example",
    VENUE_B_BUILDER_ADDRESS: QA_BUILDER_ADDRESS,
  };
  assert.equal(parseConfig(production).venueBMainnet, true);
  assert.equal(parseConfig({ ...production, VENUE_B_NETWORK: "testnet" }).venueBMainnet, false);
  assert.throws(() => parseConfig({ VENUE_B_NETWORK: "devnet" }), ConfigError);
});

Deno.test("a wallet the venue does not know (never deposited) is told to deposit first, costing no attempt", async () => {
  const { env, partner } = await setUp();
  try {
    const unfunded = privateKeyToAccount(generatePrivateKey());
    const { session, request } = await openPage(env, partner);
    const agentStep = await expectJson(
      await request("/wallet/start", { walletAddress: unfunded.address, chainId: "0xa4b1" }),
      200,
    );
    const refused = await expectError(
      await request("/wallet/sign", { signature: await signAsWallet(unfunded, agentStep.typedData) }),
      422,
      "WALLET_NOT_ON_VENUE",
    );
    assert.equal(refused.attemptsLeft, undefined);
    assert.match(refused.error.message, new RegExp(`${unfunded.address}.*Deposite USDC na Venue B`));
    const [row] = await env.deps.db.read.select().from(connectSessions);
    assert.equal(row.attempts, 0);
    assert.equal(row.status, "PENDING");
    const state = await expectJson(
      await partner.call("GET", `/v1/users/ana/connect-sessions/${session.sessionId}`),
      200,
    );
    assert.equal(state.failureCode, "WALLET_NOT_ON_VENUE", "the partner sees why the client is stuck");

    // Deposited, the same link connects.
    await fund(env, unfunded.address, "100");
    await connectWallet(request, unfunded);
  } finally {
    await env.close();
  }
});

Deno.test("the venue refusing the builder approval answers BUILDER_APPROVAL_REJECTED as an attempt", async () => {
  const { env, partner } = await setUp();
  try {
    // A wallet that already approved the venue's maximum number of builders cannot approve ours.
    const privateKey = generatePrivateKey();
    const crowded = privateKeyToAccount(privateKey);
    await fund(env, crowded.address, "5000");
    for (let i = 0; i < 10; i++) {
      const builder = privateKeyToAccount(generatePrivateKey()).address;
      await fund(env, builder, "200");
      const action = approveBuilderFeeAction({
        isMainnet: env.deps.config.venueBMainnet,
        builder,
        maxFeeTenthsBps: 10,
        // Behind the clock: the page's own approval takes a nonce of now, and a venue refuses a nonce twice.
        nonce: Date.now() - 1_000 + i,
      });
      await env.deps.venues.VENUE_B.submitUserSignedAction!(signUserSignedAction(privateKey, action));
    }
    const second = await openPage(env, partner);
    const step = await expectJson(
      await second.request("/wallet/start", { walletAddress: crowded.address, chainId: "0xa4b1" }),
      200,
    );
    const builderStep = await expectJson(
      await second.request("/wallet/sign", { signature: await signAsWallet(crowded, step.typedData) }),
      200,
    );
    assert.equal(builderStep.step, "BUILDER");
    const refusedBuilder = await expectError(
      await second.request("/wallet/sign", { signature: await signAsWallet(crowded, builderStep.typedData) }),
      400,
      "BUILDER_APPROVAL_REJECTED",
    );
    assert.equal(refusedBuilder.attemptsLeft, 4);
  } finally {
    await env.close();
  }
});

Deno.test("an unreachable venue: live reads answer 503 PROVIDER_DOWN, the builder check reads UNKNOWN", async () => {
  const { env, partner, wallet } = await setUp();
  try {
    await connectWallet((await openPage(env, partner)).request, wallet);
    await fetch(`${env.venueUrls.venueB}/_control/faults`, {
      method: "PUT",
      body: JSON.stringify({ mode: "DOWN" }),
    }).then((response) => response.body?.cancel());
    await expectError(await partner.call("GET", "/v1/users/ana/account?providerId=VENUE_B"), 503, "PROVIDER_DOWN");
    const providers = await expectJson(await partner.call("GET", "/v1/users/ana/providers"), 200);
    const venueB = providers.providers.find((p: { providerId: string }) => p.providerId === "VENUE_B");
    assert.equal(venueB.connection, "CONNECTED");
    assert.equal(venueB.builder.approvedByUser, null);
    assert.equal(venueB.builder.approvalStatus, "UNKNOWN");
    assert.equal(venueB.eligibleForNewEntries, false);
  } finally {
    await env.close();
  }
});
