/**
 * Every example declared through `jsonContent`/`jsonBody` (routes/schemas/common.ts
 * `declaredExamples`) parses with the zod schema the route validates or answers
 * with, and is served in a document. Every served example, declared this way or
 * not, is also checked against the document's own schema by redocly's
 * `no-invalid-media-type-examples` (tests/openapi/lint_test.ts).
 */
import assert from "node:assert/strict";
import { declaredExamples } from "../../routes/schemas/common.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { call, expectJson } from "../_helpers/http.ts";

type MediaTypes = Record<string, { example?: unknown }>;
type Operation = {
  requestBody?: { content: MediaTypes };
  responses: Record<string, { content?: MediaTypes }>;
};

Deno.test("every example in both documents parses with its zod schema", async () => {
  const env = await startTestEnv();
  try {
    assert.ok(declaredExamples.length > 0);
    for (const { schema, example } of declaredExamples) {
      const parsed = schema.safeParse(example);
      assert.ok(parsed.success, `${JSON.stringify(example)}\n${parsed.error}`);
    }
    const served = new Set<string>();
    for (const url of ["/v1/openapi.json", "/operator/v1/openapi.json"]) {
      const document = await expectJson(await call(env, "GET", url), 200);
      for (const item of Object.values(document.paths as Record<string, Record<string, Operation>>)) {
        for (const operation of Object.values(item)) {
          const media = [operation.requestBody?.content, ...Object.values(operation.responses).map((r) => r.content)];
          for (const content of media) {
            for (const { example } of Object.values(content ?? {})) {
              if (example !== undefined) served.add(JSON.stringify(example));
            }
          }
        }
      }
    }
    for (const { example } of declaredExamples) {
      assert.ok(served.has(JSON.stringify(example)), `declared but not served: ${JSON.stringify(example)}`);
    }
  } finally {
    await env.close();
  }
});
