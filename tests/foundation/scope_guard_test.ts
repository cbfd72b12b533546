import assert from "node:assert/strict";
import { findForbiddenField } from "../../routes/middleware/body_guard.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectError } from "../_helpers/http.ts";

Deno.test("platform-controlled fields are rejected at any depth", async (t) => {
  await t.step("names and prefixes of the spec, any case, nested in objects and arrays", () => {
    for (
      const body of [
        { principalId: "p" },
        { a: { allowedProviders: [] } },
        { list: [{ ok: 1 }, { deeper: [{ riskEnvelope: {} }] }] },
        { builderFeeTenthsBps: 1 },
        { builder: null },
        { BENEFICIARY: "0x" },
        { performanceFeePercent: 0.1 },
        { carryPolicy: "CARRY" },
        { performancePeriod: "WEEKLY" },
        { subscriptionMonthlyUsd: 1 },
        { paymentRecipient: "0x" },
        { obligationStatus: "PAID" },
      ]
    ) assert.ok(findForbiddenField(body), JSON.stringify(body));
    assert.equal(findForbiddenField({ externalUserId: "u", envelope: { maxLeverage: 2 }, reason: "abc" }), null);
  });

  const env = await startTestEnv();
  try {
    const partner = await createPartner(env);
    await t.step("answers 403 SCOPE_FIELD_REJECTED before anything else (even a missing Idempotency-Key)", async () => {
      const body = await expectError(
        await partner.call("POST", "/v1/users", {
          body: { externalUserId: "u-1", tags: [{ x: { principalId: "p" } }] },
        }),
        403,
        "SCOPE_FIELD_REJECTED",
      );
      assert.match(body.error.message, /principalId/);
      assert.equal(await env.deps.db.read.$count((await import("../../db/schema.ts")).idempotencyKeys), 0);
    });
  } finally {
    await env.close();
  }
});
