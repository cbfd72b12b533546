/** The connect page's API (`/connect/api`) with VENUE_A keys from the simulator, through the HTTP stack. */
import assert from "node:assert/strict";
import { connectSessions, events, providerAccounts } from "../../db/schema.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { call, createPartner, expectError, expectJson } from "../_helpers/http.ts";
import { getAddress } from "viem";
import { exchange, openLink, setUp, simulatorAccount, submitKey, switchToOneWay } from "./connect_fixture.ts";

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
    const last = await expectError(await submitKey(env, ticket, wrongSecret), 400, "PROVIDER_CREDENTIAL_REJECTED");
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
    const limited = await expectError(
      await call(env, "POST", "/connect/api/session", { body: { token: "C".repeat(43) } }),
      429,
      "TOO_MANY_REQUESTS",
    );
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

Deno.test("a settings refusal (hedge mode) costs no attempt: fixed at the exchange, the same key connects", async () => {
  const { env, partner } = await setUp();
  try {
    const { session, token } = await openLink(env, partner);
    const { ticket } = await exchange(env, token);
    const hedge = await simulatorAccount(env, { dualSidePosition: true });
    // More refusals than a link has attempts: none of them counts.
    for (let i = 0; i < 6; i++) {
      const refused = await expectError(await submitKey(env, ticket, hedge), 422, "ACCOUNT_SETTINGS_INVALID");
      assert.deepEqual(refused.problems, ["HEDGE_MODE_ENABLED"]);
      assert.equal(refused.attemptsLeft, undefined);
      assert.match(refused.error.message, /One-way/);
    }
    const state = await expectJson(
      await partner.call("GET", `/v1/users/ana/connect-sessions/${session.sessionId}`),
      200,
    );
    assert.equal(state.status, "PENDING");
    assert.equal(state.failureCode, "ACCOUNT_SETTINGS_INVALID", "the partner sees why the client is stuck");
    const [row] = await env.deps.db.read.select().from(connectSessions);
    assert.equal(row.attempts, 0);

    await switchToOneWay(env, hedge);
    const connected = await expectJson(await submitKey(env, ticket, hedge), 200);
    assert.equal(connected.status, "CONNECTED");
    // A wrong key still counts (the refused-keys test above covers the fifth).
  } finally {
    await env.close();
  }
});

Deno.test("a refused body names its field, in plain words and without the field's name in the text", async () => {
  const { env, partner } = await setUp();
  try {
    const { ticket } = await exchange(env, (await openLink(env, partner)).token);
    const short = await expectError(
      await submitKey(env, ticket, { apiKey: "abc", apiSecret: "s".repeat(20) }),
      400,
      "VALIDATION_ERROR",
    );
    assert.equal(short.field, "apiKey");
    assert.equal(
      short.error.message,
      "A API Key parece incompleta. Copie de novo a API Key inteira na corretora e cole aqui.",
    );
    const spaced = await expectError(
      await submitKey(env, ticket, { apiKey: "k".repeat(20), apiSecret: "abc def ghi jkl mno" }),
      400,
      "VALIDATION_ERROR",
    );
    assert.equal(spaced.field, "apiSecret");
    assert.doesNotMatch(spaced.error.message, /apiSecret/);
    const missing = await expectError(
      await call(env, "POST", "/connect/api/api-key", { body: {}, headers: { authorization: `Bearer ${ticket}` } }),
      400,
      "VALIDATION_ERROR",
    );
    assert.equal(missing.field, "apiKey");
    assert.equal(missing.error.message, "Cole a API Key.");
    const link = await expectError(
      await call(env, "POST", "/connect/api/session", { body: { token: "short" } }),
      400,
      "VALIDATION_ERROR",
    );
    assert.equal(link.field, "token");
    assert.match(link.error.message, /Abra de novo o link completo/);
    const [row] = await env.deps.db.read.select().from(connectSessions);
    assert.equal(row.attempts, 0, "a refused body is no attempt");
  } finally {
    await env.close();
  }
});

Deno.test("a handoff link is single-use, replaces the previous one, and supersedes the tab that asked for it", async () => {
  const { env, partner } = await setUp();
  try {
    const { token } = await openLink(env, partner, "VENUE_B");
    const first = await exchange(env, token);
    const ask = (ticket: string) =>
      call(env, "POST", "/connect/api/handoff", { headers: { authorization: `Bearer ${ticket}` } });
    const old = await expectJson(await ask(first.ticket), 200);
    const handoff = await expectJson(await ask(first.ticket), 200);
    const handoffToken = handoff.url.split("#t=")[1] as string;
    const oldToken = old.url.split("#t=")[1] as string;
    env.watchedSecrets.add("handoff token", handoffToken);
    env.watchedSecrets.add("handoff token", oldToken);
    assert.equal(handoff.url, `${env.deps.config.connectUrl}/connect#t=${handoffToken}`);
    assert.match(handoffToken, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(handoffToken, token, "never the partner's link token");
    assert.equal(handoff.expiresAt, first.session.expiresAt, "it expires with the session");
    const [stored] = await env.deps.db.read.select().from(connectSessions);
    assert.notEqual(stored.handoffTokenHash, handoffToken, "stored hashed");

    // Issuing a new one replaced the first.
    await expectError(
      await call(env, "POST", "/connect/api/session", { body: { token: oldToken } }),
      404,
      "CONNECT_INVALID",
    );
    // The wallet's browser exchanges it: it works like the link token, once.
    const wallet = await exchange(env, handoffToken);
    assert.equal(wallet.session.providerId, "VENUE_B");
    await expectError(
      await call(env, "POST", "/connect/api/session", { body: { token: handoffToken } }),
      404,
      "CONNECT_INVALID",
    );
    // The tab that asked for it is told the link was opened elsewhere, for a read and for an action alike.
    const elsewhere = await expectError(
      await call(env, "GET", "/connect/api/session", { headers: { authorization: `Bearer ${first.ticket}` } }),
      409,
      "CONNECT_OPENED_ELSEWHERE",
    );
    assert.match(elsewhere.error.message, /outra aba ou aparelho/);
    await expectError(await ask(first.ticket), 409, "CONNECT_OPENED_ELSEWHERE");
    await expectJson(
      await call(env, "GET", "/connect/api/session", { headers: { authorization: `Bearer ${wallet.ticket}` } }),
      200,
    );
    // A handoff expires with its session.
    const late = await expectJson(await ask(wallet.ticket), 200);
    env.watchedSecrets.add("handoff token", late.url.split("#t=")[1]);
    env.clock.freeze(env.clock.now() + 15 * 60_000);
    await expectError(
      await call(env, "POST", "/connect/api/session", { body: { token: late.url.split("#t=")[1] } }),
      409,
      "CONNECT_EXPIRED",
    );
  } finally {
    await env.close();
  }
});

Deno.test("the same link opened in a second tab: the first tab's ticket answers CONNECT_OPENED_ELSEWHERE", async () => {
  const { env, partner } = await setUp();
  try {
    const { token } = await openLink(env, partner);
    const first = await exchange(env, token);
    const second = await exchange(env, token);
    const keys = await simulatorAccount(env);
    await expectError(await submitKey(env, first.ticket, keys), 409, "CONNECT_OPENED_ELSEWHERE");
    // Not a ticket of this session at all: still "invalid".
    await expectError(await submitKey(env, "D".repeat(43), keys), 404, "CONNECT_INVALID");
    await expectJson(await submitKey(env, second.ticket, keys), 200);
  } finally {
    await env.close();
  }
});

Deno.test("after the end, the last ticket reads the final state (and nothing more) until an hour past expiry", async () => {
  const { env, partner } = await setUp();
  try {
    const { token } = await openLink(env, partner);
    const { ticket } = await exchange(env, token);
    const read = () => call(env, "GET", "/connect/api/session", { headers: { authorization: `Bearer ${ticket}` } });
    assert.equal((await expectJson(await read(), 200)).session.status, "PENDING");
    const keys = await simulatorAccount(env);
    await expectJson(await submitKey(env, ticket, keys), 200);

    const after = await expectJson(await read(), 200);
    assert.equal(after.session.status, "CONNECTED");
    assert.equal(after.session.partnerName, "Corretora Exemplo");
    assert.equal(after.session.returnUrl, "https://app.partner.example/volta");
    // Nothing else works with it.
    await expectError(await submitKey(env, ticket, keys), 409, "CONNECT_ALREADY_USED");
    await expectError(
      await call(env, "POST", "/connect/api/handoff", { headers: { authorization: `Bearer ${ticket}` } }),
      409,
      "CONNECT_ALREADY_USED",
    );
    // The partner's link opened again says the account is connected, with who asked.
    const spent = await expectError(
      await call(env, "POST", "/connect/api/session", { body: { token } }),
      409,
      "CONNECT_ALREADY_USED",
    );
    assert.equal(
      spent.error.message,
      "Este link já foi usado: sua conta Venue A já está conectada a Corretora Exemplo.",
    );
    assert.deepEqual(spent.session, {
      providerName: "Venue A",
      partnerName: "Corretora Exemplo",
      purpose: "CONNECT",
      returnUrl: "https://app.partner.example/volta",
      status: "CONNECTED",
    });

    env.clock.freeze(env.clock.now() + 15 * 60_000 + 59 * 60_000);
    assert.equal((await expectJson(await read(), 200)).session.status, "CONNECTED");
    env.clock.freeze(env.clock.now() + 60_000);
    await expectError(await read(), 409, "CONNECT_EXPIRED");
  } finally {
    await env.close();
  }
});

Deno.test("an expired session's ticket reads EXPIRED; the page session carries the egress addresses", async () => {
  const env = await startTestEnv({ env: { EGRESS_ADDRESSES: "203.0.113.7,2001:db8::1" } });
  try {
    const partner = await createPartner(env, { name: "Corretora Exemplo" });
    await expectJson(
      await partner.call("POST", "/v1/users", {
        body: { externalUserId: "ana" },
        headers: { "idempotency-key": "ana-00001" },
      }),
      201,
    );
    const page = await exchange(env, (await openLink(env, partner)).token);
    assert.deepEqual(page.session.egressAddresses, ["203.0.113.7", "2001:db8::1"]);
    assert.equal(page.session.builder, null);
    env.clock.freeze(env.clock.now() + 15 * 60_000);
    const read = await expectJson(
      await call(env, "GET", "/connect/api/session", { headers: { authorization: `Bearer ${page.ticket}` } }),
      200,
    );
    assert.equal(read.session.status, "EXPIRED");

    const wallet = await exchange(env, (await openLink(env, partner, "VENUE_B")).token);
    assert.deepEqual(wallet.session.egressAddresses, []);
    assert.deepEqual(wallet.session.builder, {
      address: getAddress(env.deps.config.venueBBuilderAddress),
      feeTenthsBps: 25,
    });
  } finally {
    await env.close();
  }
});
