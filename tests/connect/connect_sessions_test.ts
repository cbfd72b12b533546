/** `POST/GET /v1/users/:id/connect-sessions` through the HTTP stack (spec, Provider connection). */
import assert from "node:assert/strict";
import { connectSessions, idempotencyKeys } from "../../db/schema.ts";
import { sha256Hex } from "../../domain/ids.ts";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { createPartner, expectError, expectJson, type TestPartner } from "../_helpers/http.ts";

const ORIGIN = "https://app.partner.example"; // registered by partnerBody()

async function setUp(env: TestEnv, partnerId = "acme") {
  const partner = await createPartner(env, { partnerId });
  await expectJson(
    await partner.call("POST", "/v1/users", {
      body: { externalUserId: "ana" },
      headers: { "idempotency-key": `create-ana-${partnerId}` },
    }),
    201,
  );
  return partner;
}

function openSession(partner: TestPartner, body: Record<string, unknown>, user = "ana") {
  return partner.call("POST", `/v1/users/${user}/connect-sessions`, {
    body,
    headers: { "idempotency-key": `cs-${crypto.randomUUID()}` },
  });
}

Deno.test("a connect session answers a one-time link once, and stores only the token's hash", async () => {
  const env = await startTestEnv();
  try {
    const partner = await setUp(env);
    const created = await expectJson(
      await openSession(partner, { providerId: "VENUE_A", returnUrl: `${ORIGIN}/volta` }),
      201,
    );
    assert.equal(created.status, "PENDING");
    assert.equal(created.scheme, "API_KEY");
    assert.equal(created.purpose, "CONNECT");
    assert.equal(created.opened, false);
    assert.equal(created.failureCode, null);
    assert.equal(created.completedAt, null);
    assert.equal(Date.parse(created.expiresAt) - env.clock.now(), 15 * 60_000);
    const match = /^(.+)\/connect#t=([A-Za-z0-9_-]{43})$/.exec(created.connectUrl);
    assert.ok(match, created.connectUrl);
    assert.equal(match[1], env.deps.config.connectUrl);
    const token = match[2];

    const read = await expectJson(
      await partner.call("GET", `/v1/users/ana/connect-sessions/${created.sessionId}`),
      200,
    );
    assert.equal(read.connectUrl, undefined);
    assert.equal(read.status, "PENDING");

    const [row] = await env.deps.db.read.select().from(connectSessions);
    assert.equal(row.tokenHash, sha256Hex(token));
    assert.doesNotMatch(JSON.stringify(row), new RegExp(token));
    assert.equal(row.returnUrl, `${ORIGIN}/volta`);
    // The idempotent answer is the creation response: a retry must get the link again.
    const stored = (await env.deps.db.read.select().from(idempotencyKeys)).find((row) =>
      row.route.includes("connect")
    )!;
    assert.match(stored.responseBody!, new RegExp(token));

    env.clock.freeze(env.clock.now() + 15 * 60_000);
    const expired = await expectJson(
      await partner.call("GET", `/v1/users/ana/connect-sessions/${created.sessionId}`),
      200,
    );
    assert.equal(expired.status, "EXPIRED");
  } finally {
    await env.close();
  }
});

Deno.test("a newer session cancels the pending one of the same client and provider only", async () => {
  const env = await startTestEnv();
  try {
    const partner = await setUp(env);
    const first = await expectJson(await openSession(partner, { providerId: "VENUE_A" }), 201);
    const other = await expectJson(await openSession(partner, { providerId: "VENUE_B" }), 201);
    assert.equal(other.scheme, "AGENT_WALLET");
    const second = await expectJson(await openSession(partner, { providerId: "VENUE_A" }), 201);
    const status = async (id: string) =>
      (await expectJson(await partner.call("GET", `/v1/users/ana/connect-sessions/${id}`), 200)).status;
    assert.equal(await status(first.sessionId), "CANCELLED");
    assert.equal(await status(second.sessionId), "PENDING");
    assert.equal(await status(other.sessionId), "PENDING");
  } finally {
    await env.close();
  }
});

Deno.test("returnUrl must be https on a registered origin: every trick answers RETURN_URL_NOT_ALLOWED", async () => {
  const env = await startTestEnv();
  try {
    const partner = await setUp(env);
    const attacks = [
      "javascript:alert(1)",
      "JavaScript:alert(document.cookie)//https://app.partner.example",
      "data:text/html,<script>alert(1)</script>",
      "http://app.partner.example/volta",
      "https://evil.example/",
      "https://app.partner.example.evil.example/",
      "https://evil.example/https://app.partner.example",
      "https://app-partner.example/",
      "https://app.partner.examp1e/",
      "https://sub.app.partner.example/",
      "https://partner.example/",
      "https://user:pw@app.partner.example/",
      "https://app.partner.example@evil.example/",
      "https://app.partner.example%2F@evil.example/",
      "https://app.partner.example:8443/",
      "https://app.partner.example\\@evil.example/",
      " https://app.partner.example/",
      "https://app.partner.exa\tmple/",
      "https://app.partner.example\u0000.evil.example/",
      "//app.partner.example/volta",
      "/volta",
      "https://аpp.partner.example/", // Cyrillic "а"
      `https://app.partner.example/${"x".repeat(2100)}`,
    ];
    for (const returnUrl of attacks) {
      const response = await openSession(partner, { providerId: "VENUE_A", returnUrl });
      const body = await response.json();
      assert.ok(
        body.error?.code === "RETURN_URL_NOT_ALLOWED" || body.error?.code === "VALIDATION_ERROR",
        `${JSON.stringify(returnUrl)}: ${JSON.stringify(body)}`,
      );
      assert.ok(response.status === 403 || response.status === 400);
    }
    // Same origin written differently is the same origin.
    for (const returnUrl of [`${ORIGIN}/volta?x=1#fim`, "https://APP.partner.example:443/volta"]) {
      await expectJson(await openSession(partner, { providerId: "VENUE_A", returnUrl }), 201);
    }
    assert.equal(await env.deps.db.read.$count(connectSessions), 2, "refusals stored nothing");
  } finally {
    await env.close();
  }
});

Deno.test("connect sessions need an active client, a usable provider and, to approve a builder, an account", async () => {
  const env = await startTestEnv();
  try {
    const partner = await setUp(env);
    await expectError(await openSession(partner, { providerId: "VENUE_A" }, "nobody"), 404, "NOT_FOUND");
    await expectError(await openSession(partner, { providerId: "VENUE_X" }), 400, "VALIDATION_ERROR");
    await expectError(
      await openSession(partner, { providerId: "VENUE_B", purpose: "BUILDER_APPROVAL" }),
      422,
      "API_NOT_CONFIGURED",
    );
    await expectError(
      await openSession(partner, { providerId: "VENUE_A", purpose: "BUILDER_APPROVAL" }),
      400,
      "VALIDATION_ERROR",
    );
    await expectJson(
      await partner.call("PUT", "/v1/tenants/acme/restrictions", { body: { providers: ["VENUE_B"], reason: "só B" } }),
      200,
    );
    await expectError(await openSession(partner, { providerId: "VENUE_A" }), 403, "PROVIDER_NOT_GRANTED");
    const narrow = await createPartner(env, {
      partnerId: "narrow",
      grants: { providers: ["VENUE_B"], strategies: ["trend-follow"], capabilities: ["PERP_TRADING"] },
    });
    await expectJson(
      await narrow.call("POST", "/v1/users", {
        body: { externalUserId: "ana" },
        headers: { "idempotency-key": "narrow-create-ana" },
      }),
      201,
    );
    await expectError(await openSession(narrow, { providerId: "VENUE_A" }), 403, "PROVIDER_NOT_GRANTED");

    await expectJson(await partner.call("POST", "/v1/users/ana/suspend", { body: { reason: "fraude" } }), 200);
    await expectError(await openSession(partner, { providerId: "VENUE_B" }), 403, "CLIENT_SUSPENDED");
  } finally {
    await env.close();
  }
});

Deno.test("Idempotency-Key is honoured when sent and not required", async () => {
  const env = await startTestEnv();
  try {
    const partner = await setUp(env);
    const once = { body: { providerId: "VENUE_B" }, headers: { "idempotency-key": "connect-ana-b-0001" } };
    const first = await expectJson(await partner.call("POST", "/v1/users/ana/connect-sessions", once), 201);
    const retry = await partner.call("POST", "/v1/users/ana/connect-sessions", once);
    assert.equal(retry.headers.get("idempotent-replayed"), "true");
    const replayed = await expectJson(retry, 201);
    assert.equal(replayed.sessionId, first.sessionId);
    assert.equal(replayed.connectUrl, first.connectUrl);
    const keyless = await expectJson(
      await partner.call("POST", "/v1/users/ana/connect-sessions", { body: { providerId: "VENUE_B" } }),
      201,
    );
    assert.notEqual(keyless.sessionId, first.sessionId);
    assert.equal(await env.deps.db.read.$count(connectSessions), 2);
  } finally {
    await env.close();
  }
});

Deno.test("a session is visible only through its own client and partner", async () => {
  const env = await startTestEnv();
  try {
    const partner = await setUp(env);
    const stranger = await setUp(env, "stranger");
    await expectJson(
      await partner.call("POST", "/v1/users", {
        body: { externalUserId: "bia" },
        headers: { "idempotency-key": "create-bia-0001" },
      }),
      201,
    );
    const session = await expectJson(await openSession(partner, { providerId: "VENUE_A" }), 201);
    const path = (user: string) => `/v1/users/${user}/connect-sessions/${session.sessionId}`;
    await expectError(await partner.call("GET", path("bia")), 404, "NOT_FOUND");
    await expectError(await stranger.call("GET", path("ana")), 404, "NOT_FOUND");
    await expectError(await partner.call("GET", "/v1/users/ana/connect-sessions/cs_nothing"), 404, "NOT_FOUND");
  } finally {
    await env.close();
  }
});
