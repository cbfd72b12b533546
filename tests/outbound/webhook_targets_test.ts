/**
 * Webhook endpoints are URLs a partner gives us, so hostile: registration
 * refuses every address form of the platform's own network, a delivery
 * checks what the name resolves to now and connects only there (a name that
 * rebinds to a private address reaches nothing), redirects are not followed
 * and an endless answer is read no further than its excerpt. Receivers are
 * real local HTTP and HTTPS servers; a test resolver stands in for DNS, the
 * one part that cannot be real here.
 */
import assert from "node:assert/strict";
import { sql } from "drizzle-orm";
import { parseConfig } from "../../config.ts";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { createPartner, expectError, operator } from "../_helpers/http.ts";
import { deliver, hooked } from "../webhooks/webhook_fixture.ts";

const CERT = Deno.readTextFileSync(new URL("./fixtures/hook_partner_test.crt", import.meta.url));
const KEY = Deno.readTextFileSync(new URL("./fixtures/hook_partner_test.key", import.meta.url));
const PUBLIC_ADDRESS = "93.184.215.14";

/** A resolver the test steers: each name answers what `answers` holds for it now. */
function steeredResolver(answers: Record<string, string[]>) {
  return { resolveHost: (hostname: string) => Promise.resolve(answers[hostname] ?? []), caCerts: [CERT] };
}

/** A local receiver (TLS with the fixture's certificate for hook.partner.test, or plain) answering `answer()`. */
function receiver(answer: () => Response, tls = true) {
  const hosts: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {}, ...(tls ? { cert: CERT, key: KEY } : {}) },
    async (request) => {
      hosts.push(request.headers.get("host") ?? "");
      await request.body?.cancel();
      return answer();
    },
  );
  return { port: server.addr.port, hosts, close: () => server.shutdown() };
}

async function endpointRows(env: TestEnv): Promise<number> {
  const [[count]] = await env.deps.db.read.values<[number]>(sql`SELECT count(*) FROM webhook_endpoints`);
  return count;
}

Deno.test("PUT webhook refuses loopback, private, link-local, CGNAT, multicast, unspecified and wrapped forms", async () => {
  const env = await startTestEnv({ outbound: steeredResolver({ "rebinds.partner.test": ["10.0.0.5"] }) });
  try {
    await createPartner(env, { partnerId: "partner-1" });
    const refused = [
      "https://127.0.0.1:8443/",
      "https://10.0.0.5/",
      "https://169.254.169.254/latest",
      "https://[::1]/",
      "https://localhost/",
      "https://api.localhost/hooks",
      "https://0.0.0.0/",
      "https://[::ffff:127.0.0.1]/",
      "https://192.168.1.10/",
      "https://172.16.0.1/",
      "https://100.64.0.1/",
      "https://224.0.0.1/",
      "https://[fe80::1]/",
      "https://[fd00::1]/",
      "https://[64:ff9b::a9fe:a9fe]/",
      "https://[2002:a00:5::1]/",
      "https://[::]/",
      "https://2130706433/",
      "https://0x7f.1/",
      "https://127.1/",
      "https://rebinds.partner.test/hooks",
      "https://nowhere.partner.test/hooks",
      `http://${PUBLIC_ADDRESS}/hooks`,
      `https://user:secret@${PUBLIC_ADDRESS}/hooks`,
      "ftp://example.com/hooks",
    ];
    for (const url of refused) {
      const error = await expectError(
        await operator(env, "PUT", "/operator/v1/partners/partner-1/webhook", { url }),
        400,
        "VALIDATION_ERROR",
      );
      assert.match(error.error.message, /^url: /, url);
    }
    assert.equal(await endpointRows(env), 0, "nothing registered");
  } finally {
    await env.close();
  }
});

Deno.test("OUTBOUND_ALLOW_LOOPBACK opens loopback only, and production refuses to start with it", async () => {
  assert.throws(
    () => parseConfig({ SERVICE_ENV: "production", OUTBOUND_ALLOW_LOOPBACK: "true" }),
    /OUTBOUND_ALLOW_LOOPBACK: proibida em production/,
  );
  const env = await startTestEnv({ env: { OUTBOUND_ALLOW_LOOPBACK: "true" } });
  try {
    await createPartner(env, { partnerId: "partner-1" });
    for (const url of ["http://127.0.0.1:9/hooks", "https://[::1]:9/hooks", "http://localhost:9/hooks"]) {
      const answer = await operator(env, "PUT", "/operator/v1/partners/partner-1/webhook", { url });
      assert.equal(answer.status, 200, url);
      env.watchedSecrets.add("webhook secret", (await answer.json()).signingSecret);
    }
    for (const url of ["https://10.0.0.5/", "https://169.254.169.254/", "https://[fd00::1]/", "http://0.0.0.0:9/"]) {
      await expectError(
        await operator(env, "PUT", "/operator/v1/partners/partner-1/webhook", { url }),
        400,
        "VALIDATION_ERROR",
      );
    }
  } finally {
    await env.close();
  }
});

Deno.test("a delivery connects to the address it checked, and TLS still verifies the URL's name", async () => {
  const answers: Record<string, string[]> = {
    "hook.partner.test": ["127.0.0.1"],
    "other.partner.test": ["127.0.0.1"],
  };
  const env = await startTestEnv({ env: { OUTBOUND_ALLOW_LOOPBACK: "true" }, outbound: steeredResolver(answers) });
  const endpoint = receiver(() => new Response("ok"));
  try {
    // Neither name exists in any DNS: reaching the receiver at all means the connection used the checked answer.
    const right = await hooked(env, "right", `https://hook.partner.test:${endpoint.port}/hooks`);
    const wrong = await hooked(env, "wrong", `https://other.partner.test:${endpoint.port}/hooks`);
    await right.newClient("u1");
    await wrong.newClient("u2");
    assert.deepEqual(await deliver(env), { enqueued: 2, attempted: 2, delivered: 1, retrying: 1, dead: 0 });
    assert.deepEqual(endpoint.hosts, [`hook.partner.test:${endpoint.port}`]);
    const [refused] = await wrong.deliveries();
    assert.equal(refused.history[0].responseCode, null);
    assert.match(
      refused.history[0].excerpt,
      /^conexão falhou: .*(certificate|Certificate)/,
      "the name is not the cert's",
    );
  } finally {
    await endpoint.close();
    await env.close();
  }
});

Deno.test("a name that resolved public at registration and private at delivery reaches nothing", async () => {
  const answers: Record<string, string[]> = { "hook.partner.test": [PUBLIC_ADDRESS] };
  const env = await startTestEnv({ outbound: steeredResolver(answers) });
  const endpoint = receiver(() => new Response("ok"));
  try {
    const partner = await hooked(env, "partner-1", `https://hook.partner.test:${endpoint.port}/hooks`);
    await partner.newClient("u1");
    answers["hook.partner.test"] = ["127.0.0.1"]; // the rebinding: a live receiver listens there
    assert.deepEqual(await deliver(env), { enqueued: 1, attempted: 1, delivered: 0, retrying: 1, dead: 0 });
    answers["hook.partner.test"] = [PUBLIC_ADDRESS, "10.0.0.5"]; // one bad answer among good ones is enough
    env.clock.freeze(env.clock.now() + 60_000);
    assert.deepEqual(await deliver(env), { enqueued: 0, attempted: 1, delivered: 0, retrying: 1, dead: 0 });
    assert.deepEqual(endpoint.hosts, [], "no connection reached the receiver");
    const [delivery] = await partner.deliveries();
    assert.deepEqual(delivery.history.map((attempt: { responseCode: number | null }) => attempt.responseCode), [
      null,
      null,
    ]);
    assert.deepEqual(delivery.history.map((attempt: { excerpt: string }) => attempt.excerpt), [
      "destino recusado: o destino 127.0.0.1 é um endereço loopback; só endereços públicos são aceitos",
      "destino recusado: o destino 10.0.0.5 é um endereço privado; só endereços públicos são aceitos",
    ]);
  } finally {
    await endpoint.close();
    await env.close();
  }
});

Deno.test("a redirect is a failed attempt with its status, never followed", async () => {
  const env = await startTestEnv({ env: { OUTBOUND_ALLOW_LOOPBACK: "true" } });
  const internal = receiver(() => new Response("internal secret"), false);
  const secretUrl = `http://127.0.0.1:${internal.port}/secret`;
  const endpoint = receiver(() => new Response(null, { status: 303, headers: { location: secretUrl } }), false);
  try {
    const partner = await hooked(env, "partner-1", `http://127.0.0.1:${endpoint.port}/hooks`);
    await partner.newClient("u1");
    assert.deepEqual(await deliver(env), { enqueued: 1, attempted: 1, delivered: 0, retrying: 1, dead: 0 });
    assert.equal(endpoint.hosts.length, 1);
    assert.deepEqual(internal.hosts, [], "the redirect's target was never asked");
    const [delivery] = await partner.deliveries();
    assert.equal(delivery.status, "PENDING");
    assert.equal(delivery.history[0].responseCode, 303);
    assert.equal(delivery.history[0].excerpt, `redirecionamento não seguido: ${secretUrl}`);
  } finally {
    await internal.close();
    await endpoint.close();
    await env.close();
  }
});

Deno.test("an endless answer is read up to the excerpt, then dropped", async () => {
  const env = await startTestEnv({ env: { OUTBOUND_ALLOW_LOOPBACK: "true" } });
  let sent = 0;
  let cancelled!: () => void;
  const dropped = new Promise<void>((resolve) => cancelled = resolve);
  const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
  const endpoint = receiver(() =>
    new Response(
      new ReadableStream({
        pull(controller) {
          sent += chunk.byteLength;
          controller.enqueue(chunk);
        },
        cancel: () => cancelled(),
      }),
    ), false);
  try {
    const partner = await hooked(env, "partner-1", `http://127.0.0.1:${endpoint.port}/hooks`);
    await partner.newClient("u1");
    // Read whole, the answer would never end: the attempt would time out after 10 s and not count as delivered.
    assert.deepEqual(await deliver(env), { enqueued: 1, attempted: 1, delivered: 1, retrying: 0, dead: 0 });
    await dropped;
    const [delivery] = await partner.deliveries();
    assert.equal(delivery.history[0].excerpt, "x".repeat(512));
    assert.ok(sent < 64 * 1024 * 1024, `the endpoint got to send ${sent} bytes`);
  } finally {
    await endpoint.close();
    await env.close();
  }
});
