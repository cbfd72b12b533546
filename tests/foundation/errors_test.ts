import assert from "node:assert/strict";
import { startTestEnv } from "../_helpers/env.ts";
import { call, createPartner, expectError, expectJson } from "../_helpers/http.ts";

Deno.test("error envelope and request ids", async (t) => {
  const env = await startTestEnv({
    extend: (app) =>
      app.get("/v1/explode", () => {
        throw new Error("database password is hunter2");
      }),
  });
  try {
    const partner = await createPartner(env);

    await t.step("an unknown route answers 404 NOT_FOUND in the envelope", async () => {
      await expectError(await partner.call("GET", "/v1/nothing-here"), 404, "NOT_FOUND");
      await expectError(await call(env, "GET", "/elsewhere"), 404, "NOT_FOUND");
    });

    await t.step("malformed JSON answers 400 VALIDATION_ERROR", async () => {
      await expectError(
        await partner.call("POST", "/v1/users", { raw: "{not json", headers: { "content-type": "application/json" } }),
        400,
        "VALIDATION_ERROR",
      );
    });

    await t.step("a body that is not JSON answers 400 VALIDATION_ERROR (the spec's invalid body)", async () => {
      await expectError(
        await partner.call("POST", "/v1/users", {
          raw: "a=b",
          headers: { "content-type": "application/x-www-form-urlencoded" },
        }),
        400,
        "VALIDATION_ERROR",
      );
    });

    await t.step("a 1 MiB body answers 413 VALIDATION_ERROR", async () => {
      const big = JSON.stringify({ filler: "x".repeat(1024 * 1024) });
      await expectError(
        await partner.call("POST", "/v1/users", { raw: big, headers: { "content-type": "application/json" } }),
        413,
        "VALIDATION_ERROR",
      );
    });

    await t.step("a well-formed caller request id is echoed, anything else replaced", async () => {
      const echoed = await partner.call("GET", "/v1/health", { headers: { "x-request-id": "partner-trace:42.a_b" } });
      assert.equal(echoed.headers.get("x-request-id"), "partner-trace:42.a_b");
      assert.equal((await expectJson(echoed, 200)).requestId, "partner-trace:42.a_b");
      const replaced = await partner.call("GET", "/v1/health", { headers: { "x-request-id": "<script>" } });
      assert.match(replaced.headers.get("x-request-id") ?? "", /^req_[0-9a-z]{24}$/);
      await replaced.body?.cancel();
      const failing = await call(env, "GET", "/v1/health", { headers: { "x-request-id": "trace-401" } });
      assert.equal((await expectError(failing, 401, "B2B_CREDENTIAL_INVALID")).error.requestId, "trace-401");
    });

    await t.step("an unexpected exception is logged with the request id and answered generically", async () => {
      const response = await partner.call("GET", "/v1/explode");
      const body = await expectError(response, 500, "INTERNAL_ERROR");
      assert.ok(!JSON.stringify(body).includes("hunter2"));
      const line = env.logs.find((l) => l.includes(body.error.requestId));
      assert.ok(line, "the failure is logged with its request id");
      assert.match(line, /Unexpected error/);
    });

    await t.step("every code of the catalog has a status and a Portuguese message", async () => {
      const { ERROR_CATALOG } = await import("../../domain/errors.ts");
      for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
        assert.ok(entry.status >= 200 && entry.status < 600, code);
        assert.ok(entry.message.length > 5 && /[.]$/.test(entry.message), code);
      }
    });
  } finally {
    await env.close();
  }
});
