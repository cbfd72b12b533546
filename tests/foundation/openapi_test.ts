import assert from "node:assert/strict";
import { startTestEnv } from "../_helpers/env.ts";
import { call, expectJson } from "../_helpers/http.ts";

Deno.test("OpenAPI document and reference page", async (t) => {
  const env = await startTestEnv();
  try {
    await t.step("GET /v1/openapi.json is an OpenAPI 3.0.3 document of the partner routes", async () => {
      const doc = await expectJson(await call(env, "GET", "/v1/openapi.json"), 200);
      assert.equal(doc.openapi, "3.0.3");
      assert.equal(doc.info.version, "1.0.0-mvp");
      for (const path of ["/v1/health", "/v1/usage", "/v1/events"]) assert.ok(doc.paths[path], path);
      assert.ok(!Object.keys(doc.paths).some((p) => p.startsWith("/operator")));
      assert.ok(doc.components.schemas.Error);
      assert.deepEqual(doc.security, [{ basic: [] }]);
    });

    await t.step("the operator document is separate", async () => {
      const doc = await expectJson(await call(env, "GET", "/operator/v1/openapi.json"), 200);
      assert.ok(doc.paths["/operator/v1/partners"]);
    });

    await t.step("/docs renders a readable page from the same document", async () => {
      const response = await call(env, "GET", "/docs");
      assert.equal(response.status, 200);
      assert.match(response.headers.get("content-type") ?? "", /text\/html/);
      const html = await response.text();
      assert.match(html, /<h1>Partner trading-automation API<\/h1>/);
      assert.match(html, /\/v1\/usage/);
    });
  } finally {
    await env.close();
  }
});
