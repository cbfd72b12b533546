/**
 * The simulators' bulk set-up routes (benchmarks of thousands of connected
 * accounts): VENUE_A accounts by the thousand, VENUE_B wallets funded with
 * their agent and builder fee approved as if each had signed them. What they
 * make must work through the real adapters like one made the usual way.
 */
import assert from "node:assert/strict";
import { generateAgentKey } from "../../venues/venue_b/signing.ts";
import { startVenueA, TEST_BINDING } from "./venue_a_harness.ts";
import { AGENT_KEY_BINDING, BUILDER, newSecretBox, startSim } from "./venue_b_fixture.ts";
import { createVenueBAdapter } from "../../venues/venue_b/adapter.ts";

Deno.test("VENUE_A simulator: POST /_control/accounts/bulk makes that many accounts, each trading on its own key", async () => {
  await using h = await startVenueA();
  const { accounts } = await h.control<{ accounts: { apiKey: string; apiSecret: string }[] }>(
    "POST",
    "/accounts/bulk",
    { count: 3, balances: { USDT: "500" } },
  );
  assert.equal(accounts.length, 3);
  assert.equal(new Set(accounts.map((account) => account.apiKey)).size, 3, "each account its own key");
  const adapter = h.adapter();
  for (const { apiKey, apiSecret } of accounts) {
    const credentials = {
      scheme: "API_KEY" as const,
      apiKey,
      sealedApiSecret: await h.secrets.seal(apiSecret, TEST_BINDING),
    };
    const snapshot = await adapter.getAccount(credentials);
    assert.deepEqual(snapshot.balances.map((b) => [b.asset, b.total]), [["USDT", "500.00000000"]]);
    assert.deepEqual((await adapter.testCredentials(credentials)).problems, [], "ready like POST /accounts makes it");
  }
  for (const count of [0, 10_001, 1.5]) {
    await assert.rejects(h.control("POST", "/accounts/bulk", { count }), /answered 400/, `count ${count}`);
  }
});

Deno.test("VENUE_B simulator: POST /_control/wallets/bulk funds wallets with their agent and builder fee approved", async () => {
  await using sim = startSim({ wallets: [{ address: BUILDER, usdc: "100" }] });
  const wallets = [generateAgentKey(), generateAgentKey()].map((principal) => ({
    principal,
    agent: generateAgentKey(),
  }));
  const made = await sim.control("POST", "/wallets/bulk", {
    usdc: "2500",
    builder: { address: BUILDER, maxFeeTenthsBps: 25 },
    wallets: wallets.map(({ principal, agent }) => ({ address: principal.address, agentAddress: agent.address })),
  });
  assert.deepEqual(made, { wallets: 2 });
  const box = await newSecretBox();
  const adapter = createVenueBAdapter({ baseUrl: sim.baseUrl, secrets: box });
  for (const { principal, agent } of wallets) {
    const credentials = {
      scheme: "AGENT_WALLET" as const,
      accountAddress: principal.address,
      agentAddress: agent.address,
      sealedAgentPrivateKey: await box.seal(agent.privateKey, AGENT_KEY_BINDING),
    };
    assert.deepEqual((await adapter.testCredentials(credentials)).problems, [], "the agent is approved");
    assert.equal(await adapter.getMaxBuilderFee!(principal.address, BUILDER), 25);
    assert.deepEqual((await adapter.getAccount(credentials)).balances.map((b) => [b.asset, b.total]), [[
      "USDC",
      "2500",
    ]]);
  }

  // An agent another wallet holds is refused as the venue refuses it; the wallets before it are kept.
  const late = generateAgentKey();
  await assert.rejects(
    sim.control("POST", "/wallets/bulk", {
      usdc: "1",
      wallets: [{ address: late.address }, {
        address: generateAgentKey().address,
        agentAddress: wallets[0].agent.address,
      }],
    }),
    /wallets\[1\]: Agent already in use by another account\./,
  );
  const kept = await sim.post("/info", { type: "clearinghouseState", user: late.address });
  assert.equal((kept.body as { withdrawable: string }).withdrawable, "1.0");
  // A malformed list changes nothing.
  await assert.rejects(
    sim.control("POST", "/wallets/bulk", { usdc: "1", wallets: [{ address: late.address }, { address: "0x12" }] }),
    /wallets\[1\]\.address/,
  );
  const unchanged = await sim.post("/info", { type: "clearinghouseState", user: late.address });
  assert.equal((unchanged.body as { withdrawable: string }).withdrawable, "1.0");
});
