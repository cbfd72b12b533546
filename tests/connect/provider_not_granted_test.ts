/**
 * The routes whose contract names only `403 PROVIDER_NOT_GRANTED` (issue 28):
 * connect sessions and the account test answer it for any provider outside the
 * effective grant, outside the contract as well as removed by the partner's
 * restriction; the routes that name PROVIDER_NOT_ALLOWED keep it.
 */
import assert from "node:assert/strict";
import { connectSessions } from "../../db/schema.ts";
import { call, createPartner, expectError, expectJson, type TestPartner } from "../_helpers/http.ts";
import type { TestEnv } from "../_helpers/env.ts";
import { setUp } from "./connect_fixture.ts";

/** A partner whose contract grants VENUE_B only, with its client "ana". */
async function narrowPartner(env: TestEnv): Promise<TestPartner> {
  const narrow = await createPartner(env, {
    partnerId: "narrow",
    grants: { providers: ["VENUE_B"], strategies: ["trend-follow"], capabilities: ["PERP_TRADING"] },
  });
  await expectJson(
    await narrow.call("POST", "/v1/users", {
      body: { externalUserId: "ana" },
      headers: { "idempotency-key": "narrow-create-ana" },
    }),
    201,
  );
  return narrow;
}

Deno.test("POST /v1/users/:id/connect-sessions answers 403 PROVIDER_NOT_GRANTED for a provider outside the contract", async () => {
  const { env } = await setUp();
  try {
    const narrow = await narrowPartner(env);
    await expectError(
      await narrow.call("POST", "/v1/users/ana/connect-sessions", { body: { providerId: "VENUE_A" } }),
      403,
      "PROVIDER_NOT_GRANTED",
    );
    assert.equal(await env.deps.db.read.$count(connectSessions), 0, "the refusal stored nothing");
  } finally {
    await env.close();
  }
});

Deno.test("POST /v1/users/:id/accounts/:provider/test answers 403 PROVIDER_NOT_GRANTED outside the contract and outside the restriction", async () => {
  const { env, partner } = await setUp();
  try {
    const narrow = await narrowPartner(env);
    await expectError(await narrow.call("POST", "/v1/users/ana/accounts/VENUE_A/test"), 403, "PROVIDER_NOT_GRANTED");
    await expectJson(
      await partner.call("PUT", `/v1/tenants/${partner.partnerId}/restrictions`, {
        body: { providers: ["VENUE_B"], reason: "só B" },
      }),
      200,
    );
    await expectError(await partner.call("POST", "/v1/users/ana/accounts/VENUE_A/test"), 403, "PROVIDER_NOT_GRANTED");
  } finally {
    await env.close();
  }
});

Deno.test("GET /v1/users/:id/account keeps PROVIDER_NOT_ALLOWED for a provider outside the contract, as its route names", async () => {
  const { env } = await setUp();
  try {
    const narrow = await narrowPartner(env);
    await expectError(
      await narrow.call("GET", "/v1/users/ana/account?providerId=VENUE_A"),
      403,
      "PROVIDER_NOT_ALLOWED",
    );
  } finally {
    await env.close();
  }
});

Deno.test("the OpenAPI document declares 403 PROVIDER_NOT_GRANTED for connect sessions and the account test", async () => {
  const { env } = await setUp();
  try {
    const doc = await expectJson(await call(env, "GET", "/v1/openapi.json"), 200);
    for (
      const operation of [
        doc.paths["/v1/users/{id}/connect-sessions"].post,
        doc.paths["/v1/users/{id}/accounts/{provider}/test"].post,
      ]
    ) {
      assert.match(operation.responses["403"].description, /PROVIDER_NOT_GRANTED/);
      assert.doesNotMatch(operation.responses["403"].description, /PROVIDER_NOT_ALLOWED/);
    }
    assert.match(
      doc.paths["/v1/users/{id}/connect-sessions"].post.responses["403"].description,
      /RETURN_URL_NOT_ALLOWED.*CLIENT_SUSPENDED/,
    );
  } finally {
    await env.close();
  }
});
