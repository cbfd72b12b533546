/**
 * What a partner's engineer or the operator reads for every operation of both
 * documents: a description that names the errors it answers, an example of
 * every JSON request body and of its success answer (the examples themselves
 * are checked by examples_test.ts and redocly). A route added without them
 * fails here.
 */
import assert from "node:assert/strict";
import { startTestEnv } from "../_helpers/env.ts";
import { call, expectJson } from "../_helpers/http.ts";

type MediaTypes = Record<string, { example?: unknown }>;
type Operation = {
  description?: string;
  requestBody?: { content: MediaTypes };
  responses: Record<string, { content?: MediaTypes }>;
};

/** Operations that answer nothing but success for a well-formed call: their description names no error. */
const ERRORLESS = new Set([
  "GET /v1/health",
  "GET /v1/providers",
  "GET /v1/strategies",
  "GET /v1/tenants",
  "GET /v1/usage",
  "GET /operator/v1/health",
  "GET /operator/v1/providers",
  "GET /operator/v1/strategies",
  "GET /operator/v1/asset-policies",
  "GET /operator/v1/signals/{signalId}/admissions",
  "GET /operator/v1/partners/{partnerId}/clients/{externalUserId}/admissions",
  "GET /operator/v1/partners/{partnerId}/webhook-deliveries",
]);

const hasExample = (content: MediaTypes | undefined) =>
  Object.values(content ?? {}).some((media) => media.example !== undefined);

Deno.test("every operation has a description with its errors, and examples of its JSON body and success answer", async () => {
  const env = await startTestEnv();
  try {
    const missing: string[] = [];
    let operations = 0;
    for (const url of ["/v1/openapi.json", "/operator/v1/openapi.json"]) {
      const document = await expectJson(await call(env, "GET", url), 200);
      for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Operation>>)) {
        for (const [method, operation] of Object.entries(item)) {
          operations++;
          const name = `${method.toUpperCase()} ${path}`;
          if (!operation.description) missing.push(`${name}: no description`);
          else if (!ERRORLESS.has(name) && !operation.description.includes("Errors:")) {
            missing.push(`${name}: the description names no error`);
          }
          const body = operation.requestBody?.content;
          if (body && !hasExample(body)) missing.push(`${name}: no request example`);
          const success = Object.entries(operation.responses).filter(([status]) => status.startsWith("2"));
          if (!success.some(([, response]) => hasExample(response.content))) {
            missing.push(`${name}: no success example`);
          }
        }
      }
    }
    assert.ok(operations >= 70, `both documents were read (${operations} operations)`);
    assert.deepEqual(missing, []);
  } finally {
    await env.close();
  }
});
