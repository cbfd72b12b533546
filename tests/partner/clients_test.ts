import assert from "node:assert/strict";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectError, expectJson, operator, type TestPartner } from "../_helpers/http.ts";

let keys = 0;
const create = (partner: TestPartner, body: Record<string, unknown>) =>
  partner.call("POST", "/v1/users", { body, headers: { "idempotency-key": `create-${++keys}-${Date.now()}` } });

const strategy = (status: string) => ({
  version: "1.0.0",
  status,
  displayName: "S",
  summary: "s",
  supportedProviders: ["VENUE_A"],
  supportedMarkets: ["BTCUSDT"],
  configurableParameters: [],
  riskRequirements: {},
});

Deno.test("clients", async (t) => {
  const env = await startTestEnv();
  try {
    const partner = await createPartner(env, { partnerId: "acme" });
    const other = await createPartner(env, { partnerId: "globex" });
    await expectJson(await operator(env, "PUT", "/operator/v1/strategies/trend-follow", strategy("PUBLISHED")), 200);
    await expectJson(await operator(env, "PUT", "/operator/v1/strategies/mean-revert", strategy("DRAFT")), 200);
    await expectJson(await operator(env, "PUT", "/operator/v1/strategies/not-granted", strategy("PUBLISHED")), 200);

    await t.step(
      "POST /v1/users creates (201, created: true) and an existing pair answers created: false",
      async () => {
        const first = await expectJson(await create(partner, { externalUserId: "user-1" }), 201);
        assert.equal(first.created, true);
        assert.equal(first.tenantId, "acme");
        assert.equal(first.status, "ACTIVE");
        assert.equal("id" in first, false);
        const again = await expectJson(await create(partner, { externalUserId: "user-1" }), 201);
        assert.equal(again.created, false);
        assert.equal(again.createdAt, first.createdAt);
      },
    );

    await t.step("the same externalUserId under another partner is another client", async () => {
      const theirs = await expectJson(await create(other, { externalUserId: "user-1" }), 201);
      assert.equal(theirs.created, true);
      assert.equal(theirs.tenantId, "globex");
    });

    await t.step("externalUserId is 1-120 printable characters, never an e-mail address, never . or ..", async () => {
      const refused = ["", "x".repeat(121), "😀".repeat(121), "ana@example.com", ".", "..", "tab\there", "\u0085"];
      for (const bad of refused) {
        await expectError(await create(partner, { externalUserId: bad }), 400, "VALIDATION_ERROR");
      }
      await expectJson(await create(partner, { externalUserId: "x".repeat(120) }), 201);
      await expectJson(await create(partner, { externalUserId: "😀".repeat(120) }), 201); // 120 code points
      await expectError(await create(partner, {}), 400, "VALIDATION_ERROR");
      await expectError(
        await partner.call("POST", "/v1/users", { body: { externalUserId: "no-key" } }),
        400,
        "IDEMPOTENCY_KEY_REQUIRED",
      );
    });

    await t.step("tenantId: another's answers 404; legacy multi-tenant partners must send it", async () => {
      await expectError(await create(partner, { externalUserId: "user-2", tenantId: "globex" }), 404, "NOT_FOUND");
      await expectJson(await create(partner, { externalUserId: "user-2", tenantId: "acme" }), 201);
      const legacy = await createPartner(env, { partnerId: "legacy", legacyTenantIds: ["legacy-br", "legacy-pt"] });
      await expectError(await create(legacy, { externalUserId: "u" }), 400, "TENANT_REQUIRED");
      await expectJson(await create(legacy, { externalUserId: "u", tenantId: "legacy-br" }), 201);
      await expectError(await create(legacy, { externalUserId: "u", tenantId: "legacy-pt" }), 409, "TENANT_MISMATCH");
      const filtered = await expectJson(await legacy.call("GET", "/v1/users?tenantId=legacy-br"), 200);
      assert.deepEqual(filtered.users.map((u: { externalUserId: string }) => u.externalUserId), ["u"]);
    });

    await t.step("GET /v1/users lists newest first and pages through everything with the cursor", async () => {
      for (let i = 0; i < 7; i++) {
        env.clock.freeze(env.clock.now() + 1000);
        await expectJson(await create(partner, { externalUserId: `page-${i}` }), 201);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const query: string = `/v1/users?limit=3${cursor ? `&cursor=${cursor}` : ""}`;
        const page = await expectJson(await partner.call("GET", query), 200);
        assert.ok(page.users.length <= 3);
        seen.push(...page.users.map((u: { externalUserId: string }) => u.externalUserId));
        cursor = page.nextCursor;
      } while (cursor);
      assert.equal(seen.length, 11);
      assert.deepEqual(seen.slice(0, 3), ["page-6", "page-5", "page-4"]);
      assert.equal(new Set(seen).size, seen.length);
      await expectError(await partner.call("GET", "/v1/users?limit=0"), 400, "VALIDATION_ERROR");
      await expectError(await partner.call("GET", "/v1/users?limit=501"), 400, "VALIDATION_ERROR");
      await expectError(await partner.call("GET", "/v1/users?cursor=%%%"), 400, "VALIDATION_ERROR");
      const tenant = await expectJson(await partner.call("GET", "/v1/tenants/acme"), 200);
      assert.equal(tenant.tenant.clients, 11);
    });

    await t.step("POST /v1/users replays the stored response for the same key and refuses another body", async () => {
      const headers = { "idempotency-key": "create-replay-0001" };
      const first = await expectJson(
        await partner.call("POST", "/v1/users", { body: { externalUserId: "replayed" }, headers }),
        201,
      );
      const replay = await partner.call("POST", "/v1/users", { body: { externalUserId: "replayed" }, headers });
      assert.equal(replay.headers.get("idempotent-replayed"), "true");
      assert.deepEqual(await expectJson(replay, 201), first);
      await expectError(
        await partner.call("POST", "/v1/users", { body: { externalUserId: "someone-else" }, headers }),
        409,
        "IDEMPOTENCY_CONFLICT",
      );
      await expectError(await partner.call("GET", "/v1/users/someone-else"), 404, "NOT_FOUND");
    });

    await t.step("a client of another partner answers exactly like a missing one", async () => {
      const theirs = await create(other, { externalUserId: "only-globex" });
      await theirs.body?.cancel();
      for (const path of ["", "/status", "/commercial", "/strategies"]) {
        const foreign = await expectError(await partner.call("GET", `/v1/users/only-globex${path}`), 404, "NOT_FOUND");
        const missing = await expectError(
          await partner.call("GET", `/v1/users/nobody-at-all${path}`),
          404,
          "NOT_FOUND",
        );
        assert.deepEqual({ ...foreign.error, requestId: "" }, { ...missing.error, requestId: "" });
      }
      await expectError(
        await partner.call("POST", "/v1/users/only-globex/suspend", { body: { reason: "teste" } }),
        404,
        "NOT_FOUND",
      );
    });

    await t.step("reads: single client, status and commercial", async () => {
      const single = await expectJson(await partner.call("GET", "/v1/users/user-1"), 200);
      assert.deepEqual(single.automations, []);
      const status = await expectJson(await partner.call("GET", "/v1/users/user-1/status"), 200);
      assert.equal(status.access.active, true);
      assert.deepEqual(status.strategies, ["trend-follow"]);
      assert.deepEqual(status.providers.map((p: { providerId: string }) => p.providerId), ["VENUE_A", "VENUE_B"]);
      assert.equal(status.providers[0].connection, "NOT_CONNECTED");
      assert.equal(status.openPositions, 0);
      const commercial = await expectJson(await partner.call("GET", "/v1/users/user-1/commercial"), 200);
      assert.equal(commercial.clientStatus, "ACTIVE");
      assert.deepEqual(commercial.providers[0], {
        providerId: "VENUE_A",
        allowed: true,
        state: "ACTIVE",
        reasonCode: "B2B_CONTRACT_ACTIVE",
        graceUntil: null,
        source: "B2B_CONTRACT",
      });
    });

    await t.step(
      "strategies: null selects all granted, [] none, outside the grant or unpublished refused",
      async () => {
        let selection = await expectJson(await partner.call("GET", "/v1/users/user-1/strategies"), 200);
        assert.deepEqual(selection, {
          ...selection,
          granted: ["trend-follow"],
          selected: ["trend-follow"],
          selectionMode: "ALL_GRANTED",
        });
        selection = await expectJson(
          await partner.call("PUT", "/v1/users/user-1/strategies", { body: { strategyIds: [] } }),
          200,
        );
        assert.deepEqual([selection.selected, selection.selectionMode], [[], "EXPLICIT"]);
        await expectError(
          await partner.call("PUT", "/v1/users/user-1/strategies", { body: { strategyIds: ["not-granted"] } }),
          403,
          "GRANT_ESCALATION",
        );
        await expectError(
          await partner.call("PUT", "/v1/users/user-1/strategies", { body: { strategyIds: ["mean-revert"] } }),
          403,
          "STRATEGY_NOT_AVAILABLE",
        );
        selection = await expectJson(
          await partner.call("PUT", "/v1/users/user-1/strategies", { body: { strategyIds: ["trend-follow"] } }),
          200,
        );
        assert.deepEqual([selection.selected, selection.selectionMode], [["trend-follow"], "EXPLICIT"]);
        selection = await expectJson(
          await partner.call("PUT", "/v1/users/user-1/strategies", { body: { strategyIds: null } }),
          200,
        );
        assert.equal(selection.selectionMode, "ALL_GRANTED");
        await expectError(
          await partner.call("PUT", "/v1/users/user-1/strategies", { body: {} }),
          400,
          "VALIDATION_ERROR",
        );
      },
    );

    await t.step("suspend and reactivate with a reason; writes refused while suspended, reads continue", async () => {
      await expectError(
        await partner.call("POST", "/v1/users/user-1/suspend", { body: { reason: "x" } }),
        400,
        "VALIDATION_ERROR",
      );
      const suspended = await expectJson(
        await partner.call("POST", "/v1/users/user-1/suspend", { body: { reason: "pedido do parceiro" } }),
        200,
      );
      assert.equal(suspended.status, "SUSPENDED");
      await expectError(
        await partner.call("PUT", "/v1/users/user-1/strategies", { body: { strategyIds: null } }),
        403,
        "OWNER_NOT_ALLOWED",
      );
      const status = await expectJson(await partner.call("GET", "/v1/users/user-1/status"), 200);
      assert.equal(status.access.active, false);
      assert.equal(status.providers[0].commercial.reasonCode, "B2B_ACCESS_SUSPENDED");
      const listed = await expectJson(await partner.call("GET", "/v1/users?status=SUSPENDED"), 200);
      assert.deepEqual(listed.users.map((u: { externalUserId: string }) => u.externalUserId), ["user-1"]);
      const reactivated = await expectJson(
        await partner.call("POST", "/v1/users/user-1/reactivate", { body: { reason: "regularizado" } }),
        200,
      );
      assert.equal(reactivated.status, "ACTIVE");
    });

    await t.step("a reactivated client still cannot trade while another gate blocks it", async () => {
      await expectJson(
        await operator(env, "POST", "/operator/v1/partners/acme/contract/suspend", { reason: "contrato" }),
        200,
      );
      const status = await expectJson(await partner.call("GET", "/v1/users/user-1/status"), 200);
      assert.equal(status.status, "ACTIVE");
      assert.equal(status.access.active, false);
      assert.ok(status.providers.every((p: { commercial: { allowed: boolean } }) => !p.commercial.allowed));
      assert.equal(status.providers[0].commercial.reasonCode, "CONTRACT_SUSPENDED");
      const tenant = await expectJson(await partner.call("GET", "/v1/tenants/acme"), 200);
      assert.equal(tenant.tenant.status, "SUSPENDED");
      await expectError(await create(partner, { externalUserId: "late-comer" }), 403, "TENANT_NOT_ACTIVE");
      const existing = await expectJson(await create(partner, { externalUserId: "user-1" }), 201);
      assert.equal(existing.created, false);
    });

    await t.step("client.updated events tell creation, suspension, reactivation and strategy changes", async () => {
      const events = await expectJson(await partner.call("GET", "/v1/events?type=client.updated&limit=500"), 200);
      const user1 = events.events.filter((e: { externalUserId: string }) => e.externalUserId === "user-1")
        .map((e: { data: { change: string } }) => e.data.change);
      assert.deepEqual(user1, ["CREATED", "STRATEGIES", "STRATEGIES", "STRATEGIES", "SUSPENDED", "REACTIVATED"]);
    });
  } finally {
    await env.close();
  }
});
