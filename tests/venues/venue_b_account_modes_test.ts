/**
 * VENUE_B balances for every account abstraction mode: standard accounts keep
 * USDC collateral in the perp clearinghouse state, unified-account and
 * portfolio-margin accounts in the spot clearinghouse state.
 */
import assert from "node:assert/strict";
import type { WireClearinghouseState, WireSpotClearinghouseState } from "../../venues/venue_b/wire.ts";
import { connectClient, startSim } from "./venue_b_fixture.ts";

Deno.test("VENUE_B getAccount reads balances where the account's abstraction mode keeps them", async () => {
  await using sim = startSim();
  for (const abstraction of ["default", "disabled", "unifiedAccount", "portfolioMargin"]) {
    const { adapter, credentials, principal } = await connectClient(sim, { usdc: "10000" });
    await sim.control("PUT", `/wallets/${principal.address}/abstraction`, { abstraction });
    assert.equal(
      await sim.post("/info", { type: "userAbstraction", user: principal.address }).then((r) => r.body),
      abstraction,
    );
    await sim.control("PUT", "/markets/ETH", { markPrice: "3200", bid: "3199.9", ask: "3200.1" });
    await adapter.placeOrder(credentials, {
      symbol: "ETHUSDC",
      side: "BUY",
      type: "MARKET",
      quantity: "1",
      reduceOnly: false,
      clientOrderId: `open-${abstraction}`,
    });
    const account = await adapter.getAccount(credentials);
    assert.deepEqual(account.positions.map((p) => [p.symbol, p.quantity]), [["ETHUSDC", "1"]], abstraction);
    const [usdc, ...others] = account.balances;
    assert.equal(others.length, 0);
    assert.equal(usdc.asset, "USDC");
    assert.ok(Number(usdc.total) > 9990 && Number(usdc.total) < 10000, `${abstraction}: total ${usdc.total}`);
    assert.ok(Number(usdc.free) < Number(usdc.total), `${abstraction}: margin is held`);
    assert.ok(Number(usdc.free) > 9000, `${abstraction}: free ${usdc.free}`);
    assert.equal(usdc.usdValue, usdc.total);

    // Where the venue puts the collateral for this mode.
    const spot = (await sim.post("/info", { type: "spotClearinghouseState", user: principal.address }))
      .body as WireSpotClearinghouseState;
    const perp = (await sim.post("/info", { type: "clearinghouseState", user: principal.address }))
      .body as WireClearinghouseState;
    const unified = abstraction === "unifiedAccount" || abstraction === "portfolioMargin";
    assert.equal(spot.balances.length, unified ? 1 : 0, abstraction);
    assert.equal(Number(perp.withdrawable) === 0, unified, abstraction);
  }
});

Deno.test("VENUE_B simulator refuses an unknown abstraction mode", async () => {
  await using sim = startSim();
  await assert.rejects(
    sim.control("PUT", `/wallets/0x${"12".repeat(20)}/abstraction`, { abstraction: "everything" }),
    /abstraction must be one of/,
  );
});
