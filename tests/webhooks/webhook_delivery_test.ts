/**
 * Webhook delivery to real local HTTP receivers: every signature checked by
 * an independent HMAC over the raw body, the retry schedule driven on the
 * test clock through the webhook-delivery job, DEAD after twelve attempts,
 * resend, a hanging receiver that stalls no one else, and key rotation.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { createPartner, expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import { ik } from "../setup/setup_fixture.ts";
import type { Ctx } from "../../domain/context.ts";
import { WebhookWorker } from "../../domain/webhooks/worker.ts";
import { claimDue, enqueueNewEvents } from "../../domain/webhooks/deliveries.ts";

/** The receivers here run on this machine: loopback targets allowed, as QA allows them when asked. */
const LOOPBACK_RECEIVER = { env: { OUTBOUND_ALLOW_LOOPBACK: "true" } };

interface Received {
  headers: Headers;
  body: string;
  at: number;
}

/** A local endpoint answering `status()` (or never, while `hang` is set), recording every request. */
function receiver(status: () => number, hang = false) {
  const received: Received[] = [];
  let release: () => void = () => {};
  const hanging = new Promise<void>((resolve) => release = resolve);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    received.push({ headers: request.headers, body: await request.text(), at: Date.now() });
    if (hang) await hanging;
    return new Response("ok", { status: status() });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hooks`,
    received,
    async close() {
      release();
      await server.shutdown();
    },
  };
}

/** The receiver's own check: every `v1` of the header that matches an HMAC of `<t>.<body>` under `secret`. */
function verifies(entry: Received, secret: string): boolean {
  const header = entry.headers.get("x-svc-signature")!;
  const t = /t=(\d+)/.exec(header)![1];
  const expected = createHmac("sha256", secret).update(`${t}.${entry.body}`).digest("hex");
  return [...header.matchAll(/v1=([0-9a-f]{64})/g)].some((match) => match[1] === expected);
}

async function register(env: TestEnv, partnerId: string, url: string, overlapSeconds?: number) {
  const body = await expectJson(
    await operator(env, "PUT", `/operator/v1/partners/${partnerId}/webhook`, { url, overlapSeconds }),
    200,
  );
  env.watchedSecrets.add("webhook secret", body.signingSecret);
  return body.signingSecret as string;
}

const runJob = async (env: TestEnv) =>
  (await expectJson(await operator(env, "POST", "/operator/v1/jobs/webhook-delivery/run"), 200)).summary;

async function newClient(partner: TestPartner, externalUserId: string) {
  await expectJson(await partner.call("POST", "/v1/users", { body: { externalUserId }, headers: ik() }), 201);
}

Deno.test("webhooks: signed pushes, the retry schedule on the test clock, DEAD after 12, resend", async () => {
  const env = await startTestEnv(LOOPBACK_RECEIVER);
  let answer = 200;
  const endpoint = receiver(() => answer);
  try {
    const partner = await createPartner(env, { partnerId: "hooked" });
    await newClient(partner, "before"); // before the registration: never pushed
    const secret = await register(env, "hooked", endpoint.url);
    assert.match(secret, /^whsec_/);
    await newClient(partner, "ana");
    assert.deepEqual(await runJob(env), { enqueued: 1, attempted: 1, delivered: 1, retrying: 0, dead: 0 });
    const [push] = endpoint.received;
    const event = JSON.parse(push.body);
    assert.deepEqual([event.eventType, event.externalUserId, event.principalId], ["client.updated", "ana", "hooked"]);
    assert.equal(push.headers.get("content-type"), "application/json");
    assert.equal(push.headers.get("x-svc-event-id"), event.eventId);
    assert.equal(push.headers.get("x-svc-event-type"), "client.updated");
    assert.match(push.headers.get("x-svc-signature")!, /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.ok(verifies(push, secret), "the signature is an HMAC of t.body under the secret");
    const t = Number(push.headers.get("x-svc-timestamp"));
    assert.ok(Math.abs(t * 1000 - push.at) < 5_000, "timestamp within tolerance of the receiver's clock");
    assert.deepEqual(await runJob(env), { enqueued: 0, attempted: 0, delivered: 0, retrying: 0, dead: 0 });

    // A failing endpoint: attempts after 1, 2, 4 … minutes, at most 6 hours, twelve in all.
    answer = 500;
    await newClient(partner, "bia");
    assert.equal((await runJob(env)).retrying, 1);
    const delays = [1, 2, 4, 8, 16, 32, 64, 128, 256, 360, 360];
    for (const [index, minutes] of delays.entries()) {
      env.clock.freeze(env.clock.now() + minutes * 60_000 - 1);
      assert.equal((await runJob(env)).attempted, 0, `attempt ${index + 2} not before ${minutes} min`);
      env.clock.freeze(env.clock.now() + 1);
      const summary = await runJob(env);
      assert.equal(summary.attempted, 1, `attempt ${index + 2} after ${minutes} min`);
      assert.equal(summary.dead, index === delays.length - 1 ? 1 : 0);
    }
    const pushes = endpoint.received.filter((entry) => JSON.parse(entry.body).externalUserId === "bia");
    assert.equal(pushes.length, 12);
    assert.equal(new Set(pushes.map((entry) => entry.headers.get("x-svc-event-id"))).size, 1, "the same eventId");
    const [dead] = (await expectJson(
      await operator(env, "GET", "/operator/v1/partners/hooked/webhook-deliveries?status=DEAD"),
      200,
    )).deliveries;
    assert.equal(dead.history.length, 12);
    assert.deepEqual([dead.history[0].responseCode, dead.history[0].excerpt], [500, "ok"]);

    answer = 202;
    await expectJson(await operator(env, "POST", `/operator/v1/webhook-deliveries/${dead.deliveryId}/resend`), 200);
    assert.equal((await runJob(env)).delivered, 1);
    const [delivered] = (await expectJson(
      await operator(env, "GET", "/operator/v1/partners/hooked/webhook-deliveries?status=DELIVERED&limit=1"),
      200,
    )).deliveries;
    assert.deepEqual([delivered.deliveryId, delivered.history.length], [dead.deliveryId, 13]);
  } finally {
    await endpoint.close();
    await env.close();
  }
});

Deno.test("webhooks: a hanging endpoint times out after 10 s without holding back another partner's pushes", async () => {
  const env = await startTestEnv(LOOPBACK_RECEIVER);
  const healthy = receiver(() => 200);
  const hanging = receiver(() => 200, true);
  const ctx: Ctx = { ...env.deps, actor: { kind: "system", job: "webhook-delivery" }, requestId: "test" };
  const worker = new WebhookWorker(ctx);
  try {
    const slow = await createPartner(env, { partnerId: "slow" });
    const fast = await createPartner(env, { partnerId: "fast" });
    await register(env, "slow", hanging.url);
    await register(env, "fast", healthy.url);
    await newClient(slow, "s1");
    await newClient(slow, "s2");
    await worker.pass();
    await newClient(fast, "f1");
    const started = Date.now();
    // The slow partner's attempts hang; the fast partner's event goes out on the next pass all the same.
    await worker.pass();
    while (!healthy.received.length && Date.now() - started < 5_000) await new Promise((r) => setTimeout(r, 20));
    assert.equal(healthy.received.length, 1);
    assert.ok(Date.now() - started < 2_000, "not held behind the hanging endpoint");
    await worker.stop();
    assert.ok(Date.now() - started >= 9_000, "the hanging attempts were waited for 10 s");
    const deliveries = (await expectJson(
      await operator(env, "GET", "/operator/v1/partners/slow/webhook-deliveries"),
      200,
    )).deliveries;
    assert.deepEqual(deliveries.map((d: { status: string }) => d.status), ["PENDING", "PENDING"]);
    assert.match(deliveries[0].history[0].excerpt, /^timeout after 10000 ms/);
  } finally {
    await healthy.close();
    await hanging.close();
    await env.close();
  }
});

Deno.test("webhooks: during a rotation each push carries both signatures; after the overlap only the new one", async () => {
  const env = await startTestEnv(LOOPBACK_RECEIVER);
  const endpoint = receiver(() => 200);
  try {
    const partner = await createPartner(env, { partnerId: "rotating" });
    const first = await register(env, "rotating", endpoint.url);
    const second = await register(env, "rotating", endpoint.url, 3600);
    assert.notEqual(first, second);
    await newClient(partner, "ana");
    await runJob(env);
    const [during] = endpoint.received;
    assert.equal([...during.headers.get("x-svc-signature")!.matchAll(/v1=/g)].length, 2);
    assert.ok(verifies(during, first) && verifies(during, second));
    env.clock.freeze(env.clock.now() + 3600_000);
    await newClient(partner, "bia");
    await runJob(env);
    const after = endpoint.received[1];
    assert.ok(verifies(after, second) && !verifies(after, first));
  } finally {
    await endpoint.close();
    await env.close();
  }
});

Deno.test("webhooks: the running sender pushes a new event within seconds of its commit", async () => {
  const env = await startTestEnv(LOOPBACK_RECEIVER);
  const endpoint = receiver(() => 200);
  const worker = new WebhookWorker({ ...env.deps, actor: { kind: "system", job: "webhook-delivery" }, requestId: "t" });
  try {
    const partner = await createPartner(env, { partnerId: "live" });
    await register(env, "live", endpoint.url);
    worker.start();
    const committed = Date.now();
    await newClient(partner, "ana");
    while (!endpoint.received.length && Date.now() - committed < 5_000) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(endpoint.received.length, 1);
    // The service passes every second: a push waits at most about that long.
    assert.ok(endpoint.received[0].at - committed < 2_500, `pushed after ${endpoint.received[0].at - committed} ms`);
  } finally {
    await worker.stop();
    await endpoint.close();
    await env.close();
  }
});

Deno.test("webhooks: a busy partner's backlog drains as its endpoint answers, not four per pass", async () => {
  const env = await startTestEnv(LOOPBACK_RECEIVER);
  const endpoint = receiver(() => 200);
  const worker = new WebhookWorker({ ...env.deps, actor: { kind: "system", job: "webhook-delivery" }, requestId: "t" });
  try {
    const partner = await createPartner(env, { partnerId: "busy" });
    await register(env, "busy", endpoint.url);
    for (let i = 0; i < 40; i++) await newClient(partner, `user-${i}`);
    // A timed pass only once a minute: everything past the first pass's four goes out on slots freed meanwhile.
    worker.start(60_000);
    await worker.pass();
    const started = Date.now();
    while (endpoint.received.length < 40 && Date.now() - started < 20_000) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(endpoint.received.length, 40);
  } finally {
    await worker.stop();
    await endpoint.close();
    await env.close();
  }
});

Deno.test("webhooks: a sender that dies holding a delivery leaves it to the next once the lease runs out, recorded once", async () => {
  const env = await startTestEnv(LOOPBACK_RECEIVER);
  const endpoint = receiver(() => 200);
  const ctx: Ctx = { ...env.deps, actor: { kind: "system", job: "webhook-delivery" }, requestId: "t" };
  try {
    const partner = await createPartner(env, { partnerId: "resumed" });
    await register(env, "resumed", endpoint.url);
    await newClient(partner, "ana");
    await enqueueNewEvents(ctx);
    // The first sender leases the delivery and dies before sending (a short lease stands for its 30 s).
    const [leased] = await claimDue(ctx, 10, 4, new Map(), 300);
    assert.ok(leased);
    assert.equal((await runJob(env)).attempted, 0, "leased: nobody else sends it meanwhile");
    await new Promise((resolve) => setTimeout(resolve, 350));
    assert.equal((await runJob(env)).delivered, 1);
    assert.equal(endpoint.received.length, 1);
    const [delivery] = (await expectJson(
      await operator(env, "GET", "/operator/v1/partners/resumed/webhook-deliveries"),
      200,
    )).deliveries;
    assert.deepEqual([delivery.status, delivery.history.length], ["DELIVERED", 1]);
  } finally {
    await endpoint.close();
    await env.close();
  }
});
