/**
 * Answers an audit of the landed API found to differ from the contract
 * (issue 9): each step failed before its fix.
 */
import assert from "node:assert/strict";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectError, expectJson } from "../_helpers/http.ts";

Deno.test("GET /v1/health lists only the providers of the partner's contract", async () => {
  const env = await startTestEnv();
  try {
    const narrow = await createPartner(env, {
      grants: { providers: ["VENUE_B"], strategies: ["trend-follow"], capabilities: ["PERP_TRADING", "BUILDER_FEE"] },
    });
    const health = await expectJson(await narrow.call("GET", "/v1/health"), 200);
    assert.deepEqual(health.providers.map((p: { providerId: string }) => p.providerId), ["VENUE_B"]);
  } finally {
    await env.close();
  }
});

Deno.test("a legacy partner's own legacy tenant ids address its one contract", async () => {
  const env = await startTestEnv();
  try {
    const legacy = await createPartner(env, { partnerId: "legacy", legacyTenantIds: ["legacy-east", "legacy-west"] });
    const stranger = await createPartner(env, { partnerId: "stranger" });
    await expectJson(
      await legacy.call("POST", "/v1/users", {
        body: { externalUserId: "east-1", tenantId: "legacy-east" },
        headers: { "idempotency-key": "key-east-1" },
      }),
      201,
    );
    const east = await expectJson(await legacy.call("GET", "/v1/tenants/legacy-east"), 200);
    assert.equal(east.tenant.tenantId, "legacy-east");
    assert.equal(east.tenant.clients, 1);
    const west = await expectJson(await legacy.call("GET", "/v1/tenants/legacy-west"), 200);
    assert.equal(west.tenant.clients, 0);
    assert.deepEqual(west.tenant.contract, east.tenant.contract, "one contract behind every tenant id");
    await expectError(await stranger.call("GET", "/v1/tenants/legacy-east"), 404, "NOT_FOUND");
    const restricted = await expectJson(
      await legacy.call("PUT", "/v1/tenants/legacy-west/restrictions", {
        body: { providers: ["VENUE_B"], reason: "só B no oeste" },
      }),
      200,
    );
    assert.deepEqual(restricted.tenant.partnerRestrictions.providers, ["VENUE_B"]);
    const main = await expectJson(await legacy.call("GET", "/v1/tenants/legacy"), 200);
    assert.deepEqual(main.tenant.partnerRestrictions.providers, ["VENUE_B"], "restrictions belong to the contract");
    await expectError(
      await stranger.call("PUT", "/v1/tenants/legacy-west/restrictions", {
        body: { providers: null, reason: "alheio" },
      }),
      404,
      "NOT_FOUND",
    );
  } finally {
    await env.close();
  }
});

Deno.test("a restrictions PUT that changes nothing keeps the version and emits nothing", async () => {
  const env = await startTestEnv();
  try {
    const partner = await createPartner(env);
    const put = (body: Record<string, unknown>) =>
      partner.call("PUT", `/v1/tenants/${partner.partnerId}/restrictions`, { body: { reason: "ajuste", ...body } });
    const tenantEvents = async () =>
      (await expectJson(await partner.call("GET", "/v1/events?limit=200"), 200)).events
        .filter((e: { type: string; data: { change: string } }) =>
          e.type === "tenant.updated" && e.data.change === "RESTRICTIONS"
        ).length;

    await expectJson(await put({ providers: null, strategies: null, envelope: null }), 200);
    assert.equal(await tenantEvents(), 0, "no restriction, asked to have none: nothing changed");

    await expectJson(await put({ providers: ["VENUE_B", "VENUE_A"] }), 200);
    const afterChange = await tenantEvents();
    assert.equal(afterChange, 1);
    const same = await expectJson(await put({ providers: ["VENUE_A", "VENUE_B"], strategies: null }), 200);
    assert.equal(await tenantEvents(), afterChange, "the same set in another order is no change");
    assert.deepEqual([...same.tenant.partnerRestrictions.providers].sort(), ["VENUE_A", "VENUE_B"]);

    await expectJson(await put({ providers: ["VENUE_A"] }), 200);
    assert.equal(await tenantEvents(), afterChange + 1, "a real change still announces itself");
  } finally {
    await env.close();
  }
});
