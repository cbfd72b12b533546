import assert from "node:assert/strict";
import { startTestEnv } from "../_helpers/env.ts";
import {
  asPartner,
  call,
  createPartner,
  expectError,
  expectJson,
  operator,
  type TestPartner,
} from "../_helpers/http.ts";

Deno.test("partner authentication", async (t) => {
  const env = await startTestEnv();
  try {
    const partner = await createPartner(env);
    let rotated!: TestPartner;

    await t.step("Basic credentials reach GET /v1/health", async () => {
      const body = await expectJson(await partner.call("GET", "/v1/health"), 200);
      assert.equal(body.api, "UP");
      assert.match(body.requestId, /^req_/);
    });

    await t.step("the X-Client-Id / X-Client-Secret pair works too", async () => {
      const response = await call(env, "GET", "/v1/health", {
        headers: { "x-client-id": partner.clientId, "x-client-secret": partner.clientSecret },
      });
      await expectJson(response, 200);
    });

    await t.step("missing, malformed, unknown or wrong credentials answer 401 B2B_CREDENTIAL_INVALID", async () => {
      await expectError(await call(env, "GET", "/v1/health"), 401, "B2B_CREDENTIAL_INVALID");
      await expectError(
        await call(env, "GET", "/v1/health", { headers: { authorization: "Basic %%%" } }),
        401,
        "B2B_CREDENTIAL_INVALID",
      );
      await expectError(
        await asPartner(env, partner.partnerId, "cli_unknown", partner.clientSecret).call("GET", "/v1/health"),
        401,
        "B2B_CREDENTIAL_INVALID",
      );
      await expectError(
        await asPartner(env, partner.partnerId, partner.clientId, partner.clientSecret + "x").call("GET", "/v1/health"),
        401,
        "B2B_CREDENTIAL_INVALID",
      );
    });

    await t.step("the secret is stored only as a hash", async () => {
      const rows = await env.deps.db.read.query.credentials.findMany();
      assert.ok(rows.every((row) => !JSON.stringify(row).includes(partner.clientSecret)));
      assert.match(rows[0].secretHash, /^[0-9a-f]{64}$/);
    });

    await t.step("rotation keeps the old pair valid until the overlap ends", async () => {
      const issued = await expectJson(
        await operator(env, "POST", `/operator/v1/partners/${partner.partnerId}/credentials`, { overlapSeconds: 60 }),
        201,
      );
      const fresh = asPartner(env, partner.partnerId, issued.credential.clientId, issued.credential.clientSecret);
      await expectJson(await fresh.call("GET", "/v1/health"), 200);
      await expectJson(await partner.call("GET", "/v1/health"), 200);
      env.clock.freeze(env.clock.now() + 59_000);
      await expectJson(await partner.call("GET", "/v1/health"), 200);
      env.clock.freeze(env.clock.now() + 1_000);
      await expectError(await partner.call("GET", "/v1/health"), 401, "B2B_CREDENTIAL_INVALID");
      await expectJson(await fresh.call("GET", "/v1/health"), 200);
      rotated = fresh;
    });

    await t.step("revocation is immediate", async () => {
      await expectJson(
        await operator(env, "DELETE", `/operator/v1/partners/${partner.partnerId}/credentials/${rotated.clientId}`),
        200,
      );
      await expectError(await rotated.call("GET", "/v1/health"), 401, "B2B_CREDENTIAL_INVALID");
    });

    await t.step("a suspended or revoked partner answers 403 PRINCIPAL_NOT_ACTIVE", async () => {
      const other = await createPartner(env);
      await expectJson(await operator(env, "POST", `/operator/v1/partners/${other.partnerId}/suspend`, {}), 200);
      await expectError(await other.call("GET", "/v1/health"), 403, "PRINCIPAL_NOT_ACTIVE");
      await expectJson(await operator(env, "POST", `/operator/v1/partners/${other.partnerId}/reactivate`), 200);
      await expectJson(await other.call("GET", "/v1/health"), 200);
      await expectJson(await operator(env, "POST", `/operator/v1/partners/${other.partnerId}/revoke`), 200);
      await expectError(await other.call("GET", "/v1/health"), 403, "PRINCIPAL_NOT_ACTIVE");
      await expectError(
        await operator(env, "POST", `/operator/v1/partners/${other.partnerId}/reactivate`),
        409,
        "VALIDATION_ERROR",
      );
    });

    await t.step("the operator API wants its bearer token", async () => {
      await expectError(
        await call(env, "GET", `/operator/v1/partners/${partner.partnerId}`),
        401,
        "OPERATOR_UNAUTHORIZED",
      );
      await expectError(
        await call(env, "GET", `/operator/v1/partners/${partner.partnerId}`, { headers: partner.headers }),
        401,
        "OPERATOR_UNAUTHORIZED",
      );
    });
  } finally {
    await env.close();
  }
});
