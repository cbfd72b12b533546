/**
 * Answers an audit of the landed API found to differ from the contract
 * (issue 9): each step failed before its fix.
 */
import assert from "node:assert/strict";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectError, expectJson, type TestPartner } from "../_helpers/http.ts";

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

/** POST /v1/users with a fresh Idempotency-Key. */
function createClient(partner: TestPartner, body: Record<string, unknown>) {
  return partner.call("POST", "/v1/users", { body, headers: { "idempotency-key": `key-${crypto.randomUUID()}` } });
}

Deno.test("identifiers with control characters are refused, and nothing cuts a stored string short", async () => {
  const env = await startTestEnv();
  try {
    const partner = await createPartner(env);
    for (const id of ["alice\u0000one", "alice\u0000two", "alice\u001f", "alice\u007f", "alice\u009b", "alice\ud800"]) {
      await expectError(await createClient(partner, { externalUserId: id }), 400, "VALIDATION_ERROR");
    }
    await expectJson(await createClient(partner, { externalUserId: "alice" }), 201);
    const list = await expectJson(await partner.call("GET", "/v1/users"), 200);
    assert.deepEqual(list.users.map((user: { externalUserId: string }) => user.externalUserId), ["alice"]);
    // Free text is held to the same: NUL anywhere in a body is refused before it reaches the database.
    await expectError(
      await partner.call("POST", "/v1/users/alice/suspend", { body: { reason: "fraude\u0000oculta" } }),
      400,
      "VALIDATION_ERROR",
    );
    await expectError(
      await partner.call("GET", `/v1/users?tenantId=${encodeURIComponent("acme\u0000")}`),
      400,
      "VALIDATION_ERROR",
    );
    const status = await expectJson(await partner.call("GET", "/v1/users/alice"), 200);
    assert.equal(status.status, "ACTIVE");
  } finally {
    await env.close();
  }
});

Deno.test("unknown body fields are ignored on every write; platform fields are refused at any depth", async () => {
  const env = await startTestEnv();
  try {
    const partner = await createPartner(env);
    const extra = { nickname: "x", nested: { anything: [1, { deeper: true }] } };
    await expectJson(await createClient(partner, { externalUserId: "u-1", ...extra }), 201);
    await expectJson(await partner.call("POST", "/v1/users/u-1/suspend", { body: { reason: "teste", ...extra } }), 200);
    await expectJson(
      await partner.call("POST", "/v1/users/u-1/reactivate", { body: { reason: "voltou", ...extra } }),
      200,
    );
    await expectJson(
      await partner.call("PUT", "/v1/users/u-1/strategies", { body: { strategyIds: null, ...extra } }),
      200,
    );
    await expectJson(
      await partner.call("PUT", `/v1/tenants/${partner.partnerId}/restrictions`, {
        body: { providers: ["VENUE_A"], reason: "só A", ...extra },
      }),
      200,
    );
    // The envelope is the exception the spec names: "no other keys".
    await expectError(
      await partner.call("PUT", `/v1/tenants/${partner.partnerId}/restrictions`, {
        body: {
          envelope: { maxLeverage: 2, maxMarginPerTradeUsd: 10, maxConcurrentTrades: 1, maxDailyLossUsd: 5, extra: 1 },
          reason: "envelope",
        },
      }),
      400,
      "VALIDATION_ERROR",
    );

    const nested = (levels: number, inner: Record<string, unknown>) => {
      let value: unknown = inner;
      for (let i = 0; i < levels; i++) value = { level: value };
      return value;
    };
    const deepForbidden = await expectError(
      await createClient(partner, { externalUserId: "u-2", extra: nested(30, { partnerId: "p" }) }),
      403,
      "SCOPE_FIELD_REJECTED",
    );
    assert.match(deepForbidden.error.message, /partnerId/);
    for (const inner of [{ partnerId: "p" }, { harmless: 1 }]) {
      const tooDeep = await expectError(
        await createClient(partner, { externalUserId: "u-2", extra: nested(40, inner) }),
        400,
        "VALIDATION_ERROR",
      );
      assert.match(tooDeep.error.message, /aninhamento/);
    }
    const list = await expectJson(await partner.call("GET", "/v1/users"), 200);
    assert.deepEqual(list.users.map((user: { externalUserId: string }) => user.externalUserId), ["u-1"]);
  } finally {
    await env.close();
  }
});

Deno.test("any addressable externalUserId works end to end, percent-encoded in every path", async () => {
  const env = await startTestEnv();
  try {
    const partner = await createPartner(env);
    const ids = [
      "ana maria",
      "a/b",
      "100%",
      "%2F",
      "q?x=1&y=2",
      "hash#1",
      "back\\slash",
      "ünïcødé-日本",
      "😀 emoji",
      "...",
      " leading and trailing ",
    ];
    for (const id of ids) {
      const created = await expectJson(await createClient(partner, { externalUserId: id }), 201);
      assert.equal(created.externalUserId, id);
      const path = `/v1/users/${encodeURIComponent(id)}`;
      for (const read of ["", "/status", "/commercial"]) {
        const body = await expectJson(await partner.call("GET", path + read), 200);
        if (read !== "/commercial") assert.equal(body.externalUserId, id, `${id}${read}`);
      }
      await expectJson(await partner.call("GET", `${path}/strategies`), 200);
      await expectJson(await partner.call("PUT", `${path}/strategies`, { body: { strategyIds: [] } }), 200);
      const suspended = await expectJson(
        await partner.call("POST", `${path}/suspend`, { body: { reason: "teste" } }),
        200,
      );
      assert.equal(suspended.externalUserId, id);
      await expectJson(await partner.call("POST", `${path}/reactivate`, { body: { reason: "teste" } }), 200);
    }
    const list = await expectJson(await partner.call("GET", "/v1/users?limit=500"), 200);
    assert.deepEqual(list.users.map((user: { externalUserId: string }) => user.externalUserId).sort(), [...ids].sort());
    const events = await expectJson(await partner.call("GET", "/v1/events?limit=500"), 200);
    const named = new Set(
      events.events.map((event: { externalUserId: string | null }) => event.externalUserId),
    );
    for (const id of ids) assert.ok(named.has(id), `events name ${JSON.stringify(id)} exactly`);

    // Percent-encoding that does not decode names nothing, so no id has two spellings.
    for (const path of ["/v1/users/%ED%A0%80", "/v1/users/100%", "/v1/users/%zz/status"]) {
      await expectError(await partner.call("GET", path), 404, "NOT_FOUND");
    }
  } finally {
    await env.close();
  }
});

Deno.test("every money field has one validator: anything not exact to 6 decimals is 400, never 500", async () => {
  const env = await startTestEnv();
  try {
    const partner = await createPartner(env);
    const restrict = (maxDailyLossUsd: unknown) =>
      partner.call("PUT", `/v1/tenants/${partner.partnerId}/restrictions`, {
        body: {
          envelope: { maxLeverage: 2, maxMarginPerTradeUsd: 10, maxConcurrentTrades: 1, maxDailyLossUsd },
          reason: "limite diário",
        },
      });
    for (const amount of [49.9999999999999, 1e-13, 100.0000000000001, 1.1234567, 1e-7, 1e300, -1, "10"]) {
      await expectError(await restrict(amount), 400, "VALIDATION_ERROR");
    }
    const accepted = await expectJson(await restrict(1.123456), 200);
    assert.equal(accepted.tenant.partnerRestrictions.riskEnvelope.maxDailyLossUsd, 1.123456);
    await expectJson(await restrict(1e-6), 200);
  } finally {
    await env.close();
  }
});

Deno.test("a path id that cannot exist answers 404 like one that does not; unknown routes are 404 whatever the body", async () => {
  const env = await startTestEnv();
  try {
    const partner = await createPartner(env);
    for (const path of [`/v1/users/${"x".repeat(121)}`, "/v1/users/%00/status", `/v1/tenants/${"t".repeat(65)}`]) {
      await expectError(await partner.call("GET", path), 404, "NOT_FOUND");
    }
    await expectError(
      await partner.call("POST", `/v1/users/${"x".repeat(121)}/suspend`, { body: { reason: "teste" } }),
      404,
      "NOT_FOUND",
    );
    for (const [method, path] of [["POST", "/v1/nowhere"], ["PATCH", "/v1/users"], ["DELETE", "/v1/health"]]) {
      await expectError(await partner.call(method, path, { body: { partnerId: "p", grants: {} } }), 404, "NOT_FOUND");
    }
  } finally {
    await env.close();
  }
});
