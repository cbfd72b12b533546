import assert from "node:assert/strict";
import { startTestEnv } from "../_helpers/env.ts";
import { call, expectJson } from "../_helpers/http.ts";

type Operation = { responses: Record<string, { description: string; content: Record<string, { schema: unknown }> }> };

Deno.test("OpenAPI documents (the reference page at /docs: tests/docs/)", async (t) => {
  const env = await startTestEnv();
  try {
    await t.step("GET /v1/openapi.json is an OpenAPI 3.0.3 document of the partner routes", async () => {
      const doc = await expectJson(await call(env, "GET", "/v1/openapi.json"), 200);
      assert.equal(doc.openapi, "3.0.3");
      assert.equal(doc.info.version, "1.0.0");
      const routes = [
        "/v1/health",
        "/v1/usage",
        "/v1/events",
        "/v1/tenants",
        "/v1/tenants/{tenantId}",
        "/v1/tenants/{tenantId}/restrictions",
        "/v1/providers",
        "/v1/strategies",
        "/v1/markets",
        "/v1/users",
        "/v1/users/{id}",
        "/v1/users/{id}/status",
        "/v1/users/{id}/commercial",
        "/v1/users/{id}/suspend",
        "/v1/users/{id}/reactivate",
        "/v1/users/{id}/strategies",
      ];
      for (const path of routes) assert.ok(doc.paths[path], path);
      const created = doc.paths["/v1/users"].post.responses["201"].content["application/json"].schema;
      assert.deepEqual(created.allOf[0], { $ref: "#/components/schemas/Client" });
      assert.equal(created.allOf[1].properties.created.type, "boolean");
      assert.ok(!Object.keys(doc.paths).some((p) => p.startsWith("/operator")));
      assert.ok(doc.components.schemas.Error);
      assert.deepEqual(doc.security, [{ basic: [] }]);
    });

    await t.step("every operation whose body the guard reads declares 413 with the error envelope", async () => {
      for (const url of ["/v1/openapi.json", "/operator/v1/openapi.json"]) {
        const doc = await expectJson(await call(env, "GET", url), 200);
        let bodyOperations = 0;
        for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
          for (const [method, op] of Object.entries(item)) {
            const where = `${method.toUpperCase()} ${path}`;
            assert.equal(op.responses["415"], undefined, `${where} declares no 415 (such a body answers 400)`);
            if (method === "get") {
              assert.equal(op.responses["413"], undefined, `${where} reads no body`);
              continue;
            }
            bodyOperations++;
            const tooLarge = op.responses["413"];
            assert.ok(tooLarge, `${where} declares 413`);
            assert.match(tooLarge.description, /64 KiB/);
            assert.deepEqual(tooLarge.content["application/json"].schema, { $ref: "#/components/schemas/Error" });
          }
        }
        assert.ok(bodyOperations > 10, url);
      }
      const doc = await expectJson(await call(env, "GET", "/v1/openapi.json"), 200);
      assert.deepEqual(Object.keys(doc.paths["/v1/users"].post.responses), [
        "201",
        "400",
        "401",
        "403",
        "404",
        "409",
        "413",
        "429",
        "500",
        "503",
      ]);
    });

    await t.step(
      "every response declares X-Request-Id; 429 and 503 Retry-After; IK answers Idempotent-Replayed",
      async () => {
        type Response = { headers?: Record<string, { $ref: string }> };
        type Item = Record<string, { parameters?: { name: string }[]; responses: Record<string, Response> }>;
        const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
        for (const url of ["/v1/openapi.json", "/operator/v1/openapi.json"]) {
          const doc = await expectJson(await call(env, "GET", url), 200);
          for (const [path, item] of Object.entries(doc.paths as Record<string, Item>)) {
            for (const [method, op] of Object.entries(item)) {
              const takesKey = op.parameters?.some((p) => p.name === "idempotency-key") ?? false;
              for (const [status, response] of Object.entries(op.responses)) {
                const where = `${method.toUpperCase()} ${path} ${status}`;
                assert.deepEqual(response.headers?.["X-Request-Id"], ref("X-Request-Id"), where);
                const retry = status === "429" || status === "503";
                assert.deepEqual(response.headers?.["Retry-After"], retry ? ref("Retry-After") : undefined, where);
                const replay = takesKey && status !== "429";
                assert.deepEqual(
                  response.headers?.["Idempotent-Replayed"],
                  replay ? ref("Idempotent-Replayed") : undefined,
                );
              }
            }
          }
        }
        const answer = await call(env, "GET", "/v1/health");
        assert.match(answer.headers.get("x-request-id") ?? "", /^req_/, "what the document declares is sent");
        await answer.body?.cancel();
      },
    );

    await t.step("the operator document is separate", async () => {
      const doc = await expectJson(await call(env, "GET", "/operator/v1/openapi.json"), 200);
      assert.ok(doc.paths["/operator/v1/partners"]);
      assert.deepEqual(doc.security, [{ bearer: [] }], "every operator route needs the bearer token");
      assert.equal(doc.components.securitySchemes.bearer.scheme, "bearer");
      const partnerDoc = await expectJson(await call(env, "GET", "/v1/openapi.json"), 200);
      assert.deepEqual(doc.servers, partnerDoc.servers, "both documents name the configured base URL");
      assert.equal(doc.servers.length, 1);
    });
  } finally {
    await env.close();
  }
});
