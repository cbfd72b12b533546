import assert from "node:assert/strict";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectError, expectJson, operator } from "../_helpers/http.ts";

Deno.test("catalogs", async (t) => {
  const env = await startTestEnv();
  try {
    const partner = await createPartner(env, { partnerId: "acme" });
    const narrow = await createPartner(env, {
      partnerId: "narrow",
      grants: { providers: ["VENUE_B"], strategies: ["trend-follow"], capabilities: ["PERP_TRADING", "BUILDER_FEE"] },
    });
    const strategy = {
      version: "2.0.0",
      status: "PUBLISHED",
      displayName: "Trend follow",
      summary: "Segue a tendência.",
      supportedProviders: ["VENUE_A", "VENUE_B"],
      supportedMarkets: ["BTCUSDT", "BTCUSDC"],
      configurableParameters: [{ key: "lookback", type: "number", label: "Janela", min: 5, max: 50, default: 20 }],
      riskRequirements: { minLeverage: 1, maxLeverage: 5, minMarginPerTradeUsd: 10, requiresStopLoss: true },
    };
    await expectJson(await operator(env, "PUT", "/operator/v1/strategies/trend-follow", strategy), 200);
    await expectJson(
      await operator(env, "PUT", "/operator/v1/strategies/mean-revert", { ...strategy, status: "RETIRED" }),
      200,
    );
    await expectJson(await operator(env, "PUT", "/operator/v1/strategies/other", strategy), 200);

    await t.step("GET /v1/providers lists only authorized providers with kind and granted capabilities", async () => {
      const all = await expectJson(await partner.call("GET", "/v1/providers"), 200);
      assert.deepEqual(all.providers.map((p: { providerId: string; kind: string }) => [p.providerId, p.kind]), [
        ["VENUE_A", "PERP_CEX"],
        ["VENUE_B", "PERP_DEX"],
      ]);
      assert.ok(all.providers[1].capabilities.includes("AGENT_WALLET"));
      const only = await expectJson(await narrow.call("GET", "/v1/providers"), 200);
      assert.deepEqual(only.providers, [{
        providerId: "VENUE_B",
        name: only.providers[0].name,
        kind: "PERP_DEX",
        capabilities: ["PERP_TRADING", "BUILDER_FEE"],
      }]);
      await expectJson(
        await partner.call("PUT", "/v1/tenants/acme/restrictions", {
          body: { providers: ["VENUE_B"], reason: "só B" },
        }),
        200,
      );
      const restricted = await expectJson(await partner.call("GET", "/v1/providers"), 200);
      assert.deepEqual(restricted.providers.map((p: { providerId: string }) => p.providerId), ["VENUE_B"]);
    });

    await t.step("GET /v1/strategies lists published and granted strategies in full", async () => {
      const body = await expectJson(await partner.call("GET", "/v1/strategies"), 200);
      assert.deepEqual(body.strategies, [{ strategyId: "trend-follow", ...strategy }]);
    });

    await t.step("GET /v1/markets validates and reads markets from the provider", async () => {
      await expectError(await partner.call("GET", "/v1/markets"), 400, "VALIDATION_ERROR");
      await expectError(await partner.call("GET", "/v1/markets?providerId=V"), 400, "VALIDATION_ERROR");
      await expectError(await partner.call("GET", "/v1/markets?providerId=VENUE_Z"), 400, "VALIDATION_ERROR");
      await expectError(await partner.call("GET", "/v1/markets?providerId=VENUE_B&symbol=BT"), 400, "VALIDATION_ERROR");
      // Removed by acme's own restriction: outside the effective grant, still inside the contract.
      await expectError(await partner.call("GET", "/v1/markets?providerId=VENUE_A"), 403, "PROVIDER_NOT_GRANTED");
      // Outside narrow's contract.
      await expectError(await narrow.call("GET", "/v1/markets?providerId=VENUE_A"), 403, "PROVIDER_NOT_ALLOWED");
      const list = await expectJson(await partner.call("GET", "/v1/markets?providerId=VENUE_B"), 200);
      assert.ok(list.markets.length >= 3);
      assert.ok(list.markets.every((m: { active: boolean }) => m.active));
      const one = await expectJson(await partner.call("GET", "/v1/markets?providerId=VENUE_B&symbol=BTC"), 200);
      assert.equal(one.market.providerSymbol, "BTC");
      assert.equal(typeof one.market.tickSize, "number");
      assert.equal(typeof one.market.maxLeverage, "number");
      await expectError(await partner.call("GET", "/v1/markets?providerId=VENUE_B&symbol=NOPE"), 404, "NOT_FOUND");
    });

    await t.step("an unreachable provider answers 503 PROVIDER_DOWN and shows in health", async () => {
      await fetch(`${env.venueUrls.venueB}/_control/faults`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ mode: "DOWN" }),
      }).then((r) => r.body?.cancel());
      await expectError(await partner.call("GET", "/v1/markets?providerId=VENUE_B"), 503, "PROVIDER_DOWN");
      const health = await expectJson(await partner.call("GET", "/v1/health"), 200);
      assert.equal(
        health.providers.find((p: { providerId: string }) => p.providerId === "VENUE_B").status,
        "UNAVAILABLE",
      );
    });
  } finally {
    await env.close();
  }
});
