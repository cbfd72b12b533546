/**
 * Which routes take Idempotency-Key is declared in each route's definition
 * (`idempotentRoute`). The documented IK operations must be exactly the spec's
 * IK mutations that exist so far, and each must refuse a request without a key
 * (which proves the middleware is attached, not only documented).
 */
import assert from "node:assert/strict";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectError, expectJson } from "../_helpers/http.ts";

/** Spec, Authentication item 8 and the IK marks of the Endpoints tables. */
const SPEC_IK_OPERATIONS = [
  "POST /v1/users",
  "PUT /v1/users/{id}/setup",
  "PUT /v1/users/{id}/risk",
  "PUT /v1/users/{id}/automation",
  "POST /v1/orders/prepare",
  "POST /v1/orders/execute",
  "POST /v1/orders/{intentId}/reconcile",
  "POST /v1/users/{id}/obligations/{obligationId}/payment-instructions",
  "POST /v1/users/{id}/payments/{paymentId}/confirm",
];

/**
 * Mutations the spec does not mark IK but whose retry must not act twice
 * (issue 10): they honour a key when one is sent, without requiring it.
 */
const OPTIONAL_IK_OPERATIONS = ["POST /v1/users/{id}/connect-sessions"];

interface Operation {
  parameters?: { in: string; name: string; required?: boolean; description?: string }[];
}

Deno.test("IK routes are exactly the spec's IK mutations, documented and enforced", async () => {
  const env = await startTestEnv();
  try {
    const partner = await createPartner(env);
    const document = await expectJson(await env.app.request("/v1/openapi.json"), 200);
    const documented: string[] = [];
    const ik: string[] = [];
    const optionalIk: string[] = [];
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, operation] of Object.entries(item)) {
        const name = `${method.toUpperCase()} ${path}`;
        documented.push(name);
        const header = operation.parameters?.find((p) =>
          p.in === "header" && p.name.toLowerCase() === "idempotency-key"
        );
        if (!header) continue;
        const optional = header.description?.startsWith("Optional") ?? false;
        assert.equal(header.required ?? false, !optional, `${name}: Idempotency-Key required as the contract says`);
        (optional ? optionalIk : ik).push(name);
      }
    }
    const specIkDocumented = SPEC_IK_OPERATIONS.filter((name) => documented.includes(name));
    assert.ok(specIkDocumented.length > 0);
    assert.deepEqual(ik.sort(), specIkDocumented.sort(), "documented IK operations = the spec's IK operations built");
    assert.deepEqual(optionalIk.sort(), OPTIONAL_IK_OPERATIONS.filter((name) => documented.includes(name)).sort());

    for (const name of ik) {
      const [method, path] = name.split(" ");
      const concrete = path.replace(/\{[^}]+\}/g, "sample-1");
      await expectError(
        await partner.call(method, concrete, { body: {} }),
        400,
        "IDEMPOTENCY_KEY_REQUIRED",
      );
    }
  } finally {
    await env.close();
  }
});
