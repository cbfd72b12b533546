/**
 * VENUE_B builder fees accrue only to a builder in standard mode (venue docs,
 * trading/account-abstraction-modes: "builder codes" addresses must be in
 * standard mode to accrue builder fees). A fill still happens and the trader
 * still sees its fee; the builder's `referral` rewards do not grow. The
 * adapter reads the builder's mode (`userAbstraction`) once per TTL.
 */
import assert from "node:assert/strict";
import { approveBuilder, BUILDER, connectClient, recordingFetch, startSim } from "./venue_b_fixture.ts";
import { BUILDER_MODE_TTL_MS } from "../../venues/venue_b/constants.ts";

const MODES = [
  { abstraction: "default", accrues: true },
  { abstraction: "disabled", accrues: true },
  { abstraction: "dexAbstraction", accrues: false },
  { abstraction: "unifiedAccount", accrues: false },
  { abstraction: "portfolioMargin", accrues: false },
] as const;

Deno.test("VENUE_B simulator credits builder rewards only to a builder in standard mode", async (t) => {
  for (const { abstraction, accrues } of MODES) {
    await t.step(abstraction, async () => {
      await using sim = startSim();
      const { adapter, credentials } = await connectClient(sim, { builderFee: 10 });
      await sim.control("PUT", `/wallets/${BUILDER}/abstraction`, { abstraction });
      await sim.control("PUT", "/markets/BTC", { markPrice: "65000", bid: "64999", ask: "65001" });
      const bought = await adapter.placeOrder(credentials, {
        symbol: "BTCUSDC",
        side: "BUY",
        type: "MARKET",
        quantity: "0.1",
        reduceOnly: false,
        clientOrderId: "open-1",
        builder: { address: BUILDER, feeTenthsBps: 10 },
      });
      assert.equal(bought.status, "FILLED", "the fill happens whatever the builder's mode");
      const referral = await sim.post("/info", { type: "referral", user: BUILDER });
      assert.equal(referral.status, 200);
      const rewards = (referral.body as { builderRewards: string }).builderRewards;
      assert.equal(Number(rewards), accrues ? 0.65001 : 0, `builderRewards ${rewards} in ${abstraction}`);
    });
  }
});

Deno.test("VENUE_B adapter tells whether the builder accrues fees, reading its mode once per TTL", async () => {
  await using sim = startSim();
  let clock = Date.now();
  const recorder = recordingFetch();
  const { adapter, principal } = await connectClient(sim, {
    adapter: { fetch: recorder.fetch, now: () => clock },
  });
  await approveBuilder(sim, adapter, principal, 10);
  const reads = () => recorder.bodies.filter((entry) => entry.body.type === "userAbstraction").length;

  assert.deepEqual(await adapter.getBuilderStanding!(BUILDER), { mode: "default", accruesFees: true });
  await sim.control("PUT", `/wallets/${BUILDER}/abstraction`, { abstraction: "unifiedAccount" });
  assert.deepEqual(
    await adapter.getBuilderStanding!(BUILDER),
    { mode: "default", accruesFees: true },
    "within the TTL the cached mode answers",
  );
  assert.equal(reads(), 1);

  clock += BUILDER_MODE_TTL_MS + 1;
  assert.deepEqual(await adapter.getBuilderStanding!(BUILDER), { mode: "unifiedAccount", accruesFees: false });
  assert.equal(reads(), 2);
  await sim.control("PUT", `/wallets/${BUILDER}/abstraction`, { abstraction: "disabled" });
  assert.deepEqual(
    await adapter.getBuilderStanding!(BUILDER, { fresh: true }),
    { mode: "disabled", accruesFees: true },
    "a fresh read skips the cache",
  );
  assert.deepEqual(await adapter.getBuilderStanding!(BUILDER), { mode: "disabled", accruesFees: true });
  assert.equal(reads(), 3, "and refreshes it");
  const body = recorder.bodies.find((entry) => entry.body.type === "userAbstraction")!.body;
  assert.deepEqual(body, { type: "userAbstraction", user: BUILDER });
});
