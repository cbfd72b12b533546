import assert from "node:assert/strict";
import { findBodyProblem, MAX_BODY_DEPTH } from "../../routes/middleware/body_guard.ts";
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
    ) assert.equal(findBodyProblem(body, true)?.kind, "forbidden", JSON.stringify(body));
    assert.equal(findBodyProblem({ externalUserId: "u", envelope: { maxLeverage: 2 }, reason: "abc" }, true), null);
    assert.equal(findBodyProblem({ principalId: "p" }, false), null, "the operator API may send them");
  });

  await t.step("bodies nested deeper than the limit are refused, whatever they hold, without recursion", () => {
    const nest = (levels: number, inner: unknown) => {
      let value = inner;
      for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { next: value };
      return value;
    };
    assert.equal(findBodyProblem(nest(MAX_BODY_DEPTH, 1), true), null);
    assert.equal(findBodyProblem(nest(MAX_BODY_DEPTH + 1, 1), true)?.kind, "tooDeep");
    assert.equal(findBodyProblem(nest(200_000, { partnerId: "p" }), true)?.kind, "tooDeep");
  });

  await t.step("NUL and unpaired surrogates anywhere, keys included, are text the service cannot store whole", () => {
    for (const body of [{ reason: "a\u0000b" }, { list: [{ x: "\ud800" }] }, { ["k\u0000"]: 1 }, "\udc00"]) {
      assert.equal(findBodyProblem(body, true)?.kind, "unstorableText", JSON.stringify(body));
    }
    assert.equal(findBodyProblem({ reason: "tab\tnew\nline é 😀" }, true), null);
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
