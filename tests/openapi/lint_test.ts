/**
 * Both OpenAPI documents, exactly as served, pass redocly's `recommended`
 * ruleset with no error and no warning (issue 32). redocly's library runs in
 * the test, offline: the documents hold only local `$ref`s.
 */
import assert from "node:assert/strict";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { startTestEnv } from "../_helpers/env.ts";
import { call, expectJson } from "../_helpers/http.ts";

const DOCUMENTS = ["/v1/openapi.json", "/operator/v1/openapi.json"];

Deno.test("redocly recommended: 0 errors and 0 warnings on both documents", async (t) => {
  const env = await startTestEnv();
  try {
    const config = await createConfig({ extends: ["recommended"] });
    for (const url of DOCUMENTS) {
      await t.step(url, async () => {
        const document = await expectJson(await call(env, "GET", url), 200);
        const problems = await lintFromString({
          source: JSON.stringify(document),
          absoluteRef: `file:///served${url}`,
          config,
        });
        const lines = problems.map((problem) =>
          `${problem.severity} ${problem.ruleId} ${problem.location[0]?.pointer ?? ""}: ${problem.message}`
        );
        const errors = problems.filter((problem) => problem.severity === "error").length;
        assert.equal(
          lines.length,
          0,
          `${url}: ${errors} errors, ${lines.length - errors} warnings\n${lines.join("\n")}`,
        );
      });
    }
  } finally {
    await env.close();
  }
});

Deno.test("every operation has a camelCase verb+noun operationId, unique across both documents, and a summary", async () => {
  const env = await startTestEnv();
  try {
    const seen = new Set<string>();
    for (const url of DOCUMENTS) {
      const document = await expectJson(await call(env, "GET", url), 200);
      type Item = Record<string, { operationId?: string; summary?: string }>;
      for (const [path, item] of Object.entries(document.paths as Record<string, Item>)) {
        for (const [method, operation] of Object.entries(item)) {
          const where = `${method.toUpperCase()} ${path}`;
          assert.match(operation.operationId ?? "", /^[a-z]+(?:[A-Z][a-z0-9]*)+$/, where);
          assert.ok(!seen.has(operation.operationId!), `${where}: ${operation.operationId} used twice`);
          seen.add(operation.operationId!);
          assert.ok((operation.summary ?? "").length > 0, `${where}: summary`);
        }
      }
    }
  } finally {
    await env.close();
  }
});
