/**
 * The venues as a service wires them from its configuration (the registry and
 * the QA simulators of tests/_helpers/env.ts, as main.ts builds them): VENUE_A
 * checks keys on its spot host, and VENUE_B signs for the network its
 * simulator verifies, so signed actions are accepted end to end.
 */
import assert from "node:assert/strict";
import { ConfigError, parseConfig } from "../../config.ts";
import type { UserSignedAction, VenueCredentials } from "../../venues/types.ts";
import { generateAgentKey, type Hex, signUserSignedAction } from "../../venues/venue_b/signing.ts";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { TEST_BINDING } from "./venue_a_harness.ts";
import { AGENT_KEY_BINDING } from "./venue_b_fixture.ts";

async function control(base: string, method: string, path: string, body: unknown) {
  const response = await fetch(`${base}/_control${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await response.json();
  assert.ok(response.ok, `${method} ${path}: ${JSON.stringify(json)}`);
  return json;
}

Deno.test("production refuses to start without VENUE_A's spot host and user-data-stream host", () => {
  const production = {
    SERVICE_ENV: "production",
    OPERATOR_TOKEN: "o".repeat(32),
    MASTER_KEY: btoa("k".repeat(32)),
    VENUE_A_URL: "https://fapi.example",
    VENUE_B_URL: "https://api.example",
    VENUE_B_BUILDER_ADDRESS: `0x${"cd".repeat(20)}`,
  };
  assert.throws(() => parseConfig(production), (error) => {
    assert.ok(error instanceof ConfigError);
    assert.match(error.message, /VENUE_A_SPOT_URL: obrigatória em production/);
    assert.match(error.message, /VENUE_A_STREAM_URL: obrigatória em production/);
    return true;
  });
  const complete = parseConfig({
    ...production,
    VENUE_A_SPOT_URL: "https://api.example",
    VENUE_A_STREAM_URL: "wss://fstream.example",
  });
  assert.deepEqual([complete.venueASpotUrl, complete.venueAStreamUrl], [
    "https://api.example",
    "wss://fstream.example",
  ]);
});

Deno.test("a QA service checks a VENUE_A key's permissions on the spot host of its simulator", async () => {
  const env = await startTestEnv();
  try {
    const { apiKey, apiSecret } = await control(env.venueUrls.venueA, "POST", "/accounts", {});
    const check = await env.deps.venues.VENUE_A.testCredentials({
      scheme: "API_KEY",
      apiKey,
      sealedApiSecret: await env.deps.secrets.seal(apiSecret, TEST_BINDING),
    });
    assert.deepEqual(check.problems, []);
    assert.deepEqual(check.permissions, { canRead: true, canFutures: true, canWithdraw: false });
  } finally {
    await env.close();
  }
});

/** The hosted page's wallet step: the approval the adapter builds, signed by the wallet, relayed to the venue. */
async function approveInWallet(env: TestEnv, privateKey: Hex, action: UserSignedAction["action"]) {
  await env.deps.venues.VENUE_B.submitUserSignedAction!(signUserSignedAction(privateKey, action));
}

Deno.test("a QA service's VENUE_B signatures name the network its simulator verifies: approvals and orders are accepted", async () => {
  const env = await startTestEnv();
  try {
    const venue = env.deps.venues.VENUE_B;
    const approvals = venue.walletApprovals!;
    const wallet = generateAgentKey();
    await control(env.venueUrls.venueB, "POST", "/wallets", { address: wallet.address, usdc: "1000" });
    await control(env.venueUrls.venueB, "PUT", "/markets/ETH", { markPrice: "3200", bid: "3199.9", ask: "3200.1" });

    // User-signed actions: the adapter builds them for its network (hyperliquidChain).
    const agent = approvals.newAgentKey();
    const signatureChainId = "0xa4b1";
    await approveInWallet(
      env,
      wallet.privateKey,
      approvals.agentApproval({ agentAddress: agent.address, signatureChainId }).action,
    );
    const builder = env.deps.config.venueBBuilderAddress;
    await approveInWallet(
      env,
      wallet.privateKey,
      approvals.builderApproval({ builder, maxFeeTenthsBps: 10, signatureChainId }),
    );
    assert.equal(await venue.getMaxBuilderFee!(wallet.address, builder), 10);

    // An L1 action: the agent signs the order for the same network.
    const credentials: VenueCredentials = {
      scheme: "AGENT_WALLET",
      accountAddress: wallet.address,
      agentAddress: agent.address,
      sealedAgentPrivateKey: await env.deps.secrets.seal(agent.privateKey, AGENT_KEY_BINDING),
    };
    const order = await venue.placeOrder(credentials, {
      symbol: "ETHUSDC",
      side: "BUY",
      type: "LIMIT",
      price: "3000",
      quantity: "0.01",
      timeInForce: "GTC",
      reduceOnly: false,
      clientOrderId: "network-check",
      builder: { address: builder, feeTenthsBps: 10 },
    });
    assert.equal(order.status, "NEW");
    assert.equal((await venue.getOrder(credentials, "ETHUSDC", "network-check"))?.status, "NEW");
  } finally {
    await env.close();
  }
});
