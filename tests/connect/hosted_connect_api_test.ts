/** The connect page's API (`/connect/api`) with VENUE_A keys from the simulator, through the HTTP stack. */
import assert from "node:assert/strict";
import { connectSessions, events, providerAccounts } from "../../db/schema.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { call, createPartner, expectError, expectJson } from "../_helpers/http.ts";
import { exchange, openLink, setUp, simulatorAccount, submitKey } from "./connect_fixture.ts";

Deno.test("a VENUE_A key pasted on the page connects the account, sealed, with provider.connected", async () => {
  const { env, partner } = await setUp();
  try {
    const { session, token } = await openLink(env, partner);
    const page = await exchange(env, token);
    assert.equal(page.session.providerId, "VENUE_A");
    assert.equal(page.session.scheme, "API_KEY");
    assert.equal(page.session.partnerName, "Corretora Exemplo");
    assert.equal(page.session.returnUrl, "https://app.partner.example/volta");
    assert.equal(page.session.attemptsLeft, 5);
    const opened = await expectJson(
      await partner.call("GET", `/v1/users/ana/connect-sessions/${session.sessionId}`),
      200,
    );
    assert.equal(opened.opened, true);

    const keys = await simulatorAccount(env, { canWithdraw: true });
    const connected = await expectJson(await submitKey(env, page.ticket, keys), 200);
    assert.equal(connected.status, "CONNECTED");
    assert.equal(connected.permissions.canWithdraw, true);
    assert.ok(connected.warnings.includes("WITHDRAWALS_ENABLED"));

    const done = await expectJson(
      await partner.call("GET", `/v1/users/ana/connect-sessions/${session.sessionId}`),
      200,
    );
    assert.equal(done.status, "CONNECTED");
    assert.ok(done.completedAt);
    const [account] = await env.deps.db.read.select().from(providerAccounts);
    assert.equal(account.connection, "CONNECTED");
    assert.doesNotMatch(JSON.stringify(account), new RegExp(keys.apiSecret));
    const feed = await env.deps.db.read.select().from(events);
    const event = feed.find((row) => row.eventType === "provider.connected")!;
    assert.equal(event.externalUserId, "ana");
    assert.equal(event.data.sessionId, session.sessionId);

    // The link is single-use: once connected, neither token nor ticket works again.
    await expectError(
      await call(env, "POST", "/connect/api/session", { body: { token } }),
      409,
      "CONNECT_ALREADY_USED",
    );
    await expectError(await submitKey(env, page.ticket, keys), 409, "CONNECT_ALREADY_USED");
  } finally {
    await env.close();
  }
});

Deno.test("refused keys count as attempts; the fifth fails the session with provider.connect_failed", async () => {
  const { env, partner } = await setUp();
  try {
    const { session, token } = await openLink(env, partner);
    const { ticket } = await exchange(env, token);
    const good = await simulatorAccount(env);
    const wrongSecret = { apiKey: good.apiKey, apiSecret: "x".repeat(64) };
    for (let attempt = 1; attempt <= 4; attempt++) {
      const refused = await expectError(await submitKey(env, ticket, wrongSecret), 400, "PROVIDER_CREDENTIAL_REJECTED");
      assert.equal(refused.attemptsLeft, 5 - attempt);
      const state = await expectJson(
        await partner.call("GET", `/v1/users/ana/connect-sessions/${session.sessionId}`),
        200,
      );
      assert.equal(state.status, "PENDING");
      assert.equal(state.failureCode, "PROVIDER_CREDENTIAL_REJECTED");
    }
    const futuresOff = await simulatorAccount(env, { enableFutures: false });
    const last = await expectError(await submitKey(env, ticket, futuresOff), 400, "PROVIDER_CREDENTIAL_REJECTED");
    assert.match(last.error.message, /Futuros/);
    assert.equal(last.attemptsLeft, 0);
    const failed = await expectJson(
      await partner.call("GET", `/v1/users/ana/connect-sessions/${session.sessionId}`),
      200,
    );
    assert.equal(failed.status, "FAILED");
    await expectError(await submitKey(env, ticket, good), 409, "CONNECT_ATTEMPTS_EXHAUSTED");
    await expectError(
      await call(env, "POST", "/connect/api/session", { body: { token } }),
      409,
      "CONNECT_ATTEMPTS_EXHAUSTED",
    );
    const feed = await env.deps.db.read.select().from(events);
    assert.equal(feed.filter((row) => row.eventType === "provider.connect_failed").length, 1);
    assert.equal(await env.deps.db.read.$count(providerAccounts), 0);
  } finally {
    await env.close();
  }
});

Deno.test("expired, cancelled, unknown and other-flow links answer the spec's codes", async () => {
  const { env, partner } = await setUp();
  try {
    const first = await openLink(env, partner);
    const second = await openLink(env, partner);
    await expectError(
      await call(env, "POST", "/connect/api/session", { body: { token: first.token } }),
      409,
      "CONNECT_NOT_ACTIVE",
    );
    await expectError(
      await call(env, "POST", "/connect/api/session", { body: { token: "A".repeat(43) } }),
      404,
      "CONNECT_INVALID",
    );
    await expectError(
      await call(env, "POST", "/connect/api/session", { body: { token: "short" } }),
      400,
      "VALIDATION_ERROR",
    );
    await expectError(
      await submitKey(env, "B".repeat(43), { apiKey: "k".repeat(20), apiSecret: "s".repeat(20) }),
      404,
      "CONNECT_INVALID",
    );

    const walletLink = await openLink(env, partner, "VENUE_B");
    const walletPage = await exchange(env, walletLink.token);
    await expectError(
      await submitKey(env, walletPage.ticket, { apiKey: "k".repeat(20), apiSecret: "s".repeat(20) }),
      400,
      "WRONG_SCHEME",
    );

    const { ticket } = await exchange(env, second.token);
    env.clock.freeze(env.clock.now() + 15 * 60_000);
    await expectError(await submitKey(env, ticket, await simulatorAccount(env)), 409, "CONNECT_EXPIRED");
    await expectError(
      await call(env, "POST", "/connect/api/session", { body: { token: second.token } }),
      409,
      "CONNECT_EXPIRED",
    );
    const rows = await env.deps.db.read.select().from(connectSessions);
    assert.ok(rows.every((row) => row.attempts === 0), "nothing above counted as an attempt");
  } finally {
    await env.close();
  }
});

Deno.test("the page and its API carry the hosted-page security headers", async () => {
  const { env } = await setUp();
  try {
    for (
      const response of [
        await call(env, "GET", "/connect"),
        await call(env, "POST", "/connect/api/session", { body: {} }),
      ]
    ) {
      const csp = response.headers.get("content-security-policy") ?? "";
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /script-src 'nonce-[A-Za-z0-9_-]+'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(response.headers.get("referrer-policy"), "no-referrer");
      assert.equal(response.headers.get("x-frame-options"), "DENY");
      assert.equal(response.headers.get("cache-control"), "no-store");
      await response.body?.cancel();
    }
  } finally {
    await env.close();
  }
});

Deno.test("one address gets at most 60 hosted-page requests a minute, then 429 TOO_MANY_REQUESTS", async () => {
  const { env } = await setUp();
  try {
    for (let i = 0; i < 60; i++) {
      const response = await call(env, "POST", "/connect/api/session", { body: { token: "C".repeat(43) } });
      assert.equal(response.status, 404);
      await response.body?.cancel();
    }
    const limited = await expectError(await call(env, "GET", "/connect"), 429, "TOO_MANY_REQUESTS");
    assert.ok(limited.error.message);
    env.clock.freeze(env.clock.now() + 60_000);
    const page = await call(env, "GET", "/connect");
    assert.equal(page.status, 200);
    await page.body?.cancel();
  } finally {
    await env.close();
  }
});

Deno.test("QA test credentials: a funded simulator key that connects, funds for a test wallet, 404 outside QA", async () => {
  const { env, partner } = await setUp();
  try {
    const { ticket } = await exchange(env, (await openLink(env, partner)).token);
    const ask = (ticketValue: string, body: unknown = {}) =>
      call(env, "POST", "/connect/api/qa/test-credentials", {
        body,
        headers: { authorization: `Bearer ${ticketValue}` },
      });
    const keys = await expectJson(await ask(ticket), 200) as { apiKey: string; apiSecret: string };
    env.watchedSecrets.add("test apiSecret", keys.apiSecret);
    await expectJson(await submitKey(env, ticket, keys), 200);

    const wallet = await exchange(env, (await openLink(env, partner, "VENUE_B")).token);
    await expectError(await ask(wallet.ticket), 400, "VALIDATION_ERROR");
    const address = `0x${"ab".repeat(20)}`;
    assert.equal((await expectJson(await ask(wallet.ticket, { walletAddress: address }), 200)).funded, true);
    const state = await fetch(`${env.venueUrls.venueB}/info`, {
      method: "POST",
      body: JSON.stringify({ type: "clearinghouseState", user: address }),
    }).then((response) => response.json());
    assert.equal(state.marginSummary.accountValue, "10000.0");
  } finally {
    await env.close();
  }

  const production = await startTestEnv({
    env: {
      SERVICE_ENV: "production",
      VENUE_A_URL: "https://fapi.example",
      VENUE_A_SPOT_URL: "https://api.example",
      VENUE_A_STREAM_URL: "wss://fstream.example",
      VENUE_B_URL: "https://api.example",
      VENUE_B_BUILDER_ADDRESS: `0x${"cd".repeat(20)}`,
    },
  });
  try {
    const partner = await createPartner(production);
    await expectJson(
      await partner.call("POST", "/v1/users", {
        body: { externalUserId: "ana" },
        headers: { "idempotency-key": "ana-00001" },
      }),
      201,
    );
    const page = await (await call(production, "GET", "/connect")).text();
    assert.doesNotMatch(page, /test_wallet/);
    await expectError(await call(production, "GET", "/connect/assets/test_wallet.js"), 404, "NOT_FOUND");
    const { ticket } = await exchange(production, (await openLink(production, partner)).token);
    await expectError(
      await call(production, "POST", "/connect/api/qa/test-credentials", {
        body: {},
        headers: { authorization: `Bearer ${ticket}` },
      }),
      404,
      "NOT_FOUND",
    );
  } finally {
    await production.close();
  }
});
