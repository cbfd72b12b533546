/**
 * The setup's bounds as the contract states them (issue 28): orderSizeUsd at
 * least 1, capitalBase and maxLossPerTrade above 0. A 0 is 400 VALIDATION_ERROR
 * and the OpenAPI document states each bound, not a minimum of 0.
 */
import assert from "node:assert/strict";
import { call, expectError, expectJson } from "../_helpers/http.ts";
import { setUp } from "../connect/connect_fixture.ts";
import { completeSetup, ik, putSetup } from "./setup_fixture.ts";

Deno.test("PUT /v1/users/:id/setup, preview and PUT risk answer 400 for orderSizeUsd, capitalBase or maxLossPerTrade of 0", async () => {
  const { env, partner } = await setUp();
  try {
    for (const zero of [{ orderSizeUsd: 0 }, { orderSizeUsd: 0.999999 }, { capitalBase: 0 }, { maxLossPerTrade: 0 }]) {
      const field = Object.keys(zero)[0];
      const stored = await expectError(
        await putSetup(partner, completeSetup({ enabled: false, ...zero })),
        400,
        "VALIDATION_ERROR",
      );
      assert.match(stored.error.message, new RegExp(field));
      await expectError(
        await partner.call("POST", "/v1/users/ana/setup/preview", { body: completeSetup({ enabled: false, ...zero }) }),
        400,
        "VALIDATION_ERROR",
      );
    }
    await expectError(
      await partner.call("PUT", "/v1/users/ana/risk", {
        body: {
          providerId: "VENUE_A",
          maxConcurrentTrades: 1,
          maxMarginPerTradeUsd: 10,
          maxDailyLossUsd: 10,
          maxLossPerTrade: 0,
        },
        headers: ik(),
      }),
      400,
      "VALIDATION_ERROR",
    );
    const smallest = await expectJson(
      await putSetup(
        partner,
        completeSetup({ enabled: false, orderSizeUsd: 1, maxLossPerTrade: 0.000001 }),
      ),
      200,
    );
    assert.equal(smallest.orderSizeUsd, 1);
    assert.equal(smallest.maxLossPerTrade, 0.000001);
  } finally {
    await env.close();
  }
});

Deno.test("the OpenAPI document states orderSizeUsd minimum 1 and capitalBase, maxLossPerTrade above 0", async () => {
  const { env } = await setUp();
  try {
    const doc = await expectJson(await call(env, "GET", "/v1/openapi.json"), 200);
    const body = (path: string, method: string) =>
      doc.paths[path][method].requestBody.content["application/json"].schema;
    const bodies = [
      body("/v1/users/{id}/setup", "put"),
      body("/v1/users/{id}/setup/preview", "post"),
    ];
    for (const schema of bodies) {
      const properties = schema.properties ??
        schema.allOf?.find((part: { properties?: unknown }) => part.properties)?.properties;
      assert.equal(properties.orderSizeUsd.minimum, 1, JSON.stringify(properties.orderSizeUsd));
      for (const field of ["capitalBase", "maxLossPerTrade"]) {
        assert.equal(properties[field].minimum, 0, JSON.stringify(properties[field]));
        assert.equal(properties[field].exclusiveMinimum, true, JSON.stringify(properties[field]));
      }
    }
    const risk = body("/v1/users/{id}/risk", "put");
    assert.equal(
      risk.properties.maxLossPerTrade.exclusiveMinimum,
      true,
      JSON.stringify(risk.properties.maxLossPerTrade),
    );
  } finally {
    await env.close();
  }
});
