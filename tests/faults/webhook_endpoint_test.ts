/**
 * A partner's webhook endpoint that breaks connections: a raw TCP server that
 * accepts and closes at once (the push finds the connection closed before any
 * answer), and one that resets it (RST) once the push has arrived. Each
 * attempt is recorded as a failure with the retry schedule, the other
 * partners' pushes go out in the same passes, and once the endpoint answers
 * again the same event is delivered: nothing is lost. (A hanging endpoint is
 * tests/webhooks/webhook_delivery_test.ts.)
 */
import assert from "node:assert/strict";
import { startTestEnv } from "../_helpers/env.ts";
import { deliver, hooked } from "../webhooks/webhook_fixture.ts";

type Breakage = "CLOSE" | "RESET";

/**
 * A raw TCP endpoint that breaks every connection its way until `heal()`,
 * then answers each push with a bare `HTTP/1.1 200`.
 */
function brokenEndpoint(breakage: Breakage) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let healed = false;
  let connections = 0;
  const handle = async (conn: Deno.Conn) => {
    try {
      if (healed) return await answerOk(conn);
      // Closing with the push unread in the socket makes the kernel answer RST; closing at once, FIN.
      if (breakage === "RESET") await conn.read(new Uint8Array(1));
    } catch {
      // the peer went away first: nothing to break
    } finally {
      try {
        conn.close();
      } catch {
        // already closed
      }
    }
  };
  const serving = (async () => {
    for await (const conn of listener) {
      connections++;
      void handle(conn);
    }
  })();
  return {
    url: `http://127.0.0.1:${listener.addr.port}/hooks`,
    get connections() {
      return connections;
    },
    heal() {
      healed = true;
    },
    async close() {
      listener.close();
      await serving.catch(() => {});
    },
  };
}

/** Reads one request (head and Content-Length body) and answers 200 with no body. */
async function answerOk(conn: Deno.Conn): Promise<void> {
  const buffer = new Uint8Array(64 * 1024);
  let text = "";
  for (;;) {
    const read = await conn.read(buffer);
    if (read === null) return;
    text += new TextDecoder().decode(buffer.subarray(0, read));
    const end = text.indexOf("\r\n\r\n");
    const length = Number(/content-length:\s*(\d+)/i.exec(text)?.[1] ?? 0);
    if (end >= 0 && new TextEncoder().encode(text.slice(end + 4)).length >= length) break;
  }
  await conn.write(new TextEncoder().encode("HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"));
}

/** A healthy endpoint: a real HTTP server answering 200, counting pushes. */
function healthyEndpoint() {
  const received: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    received.push(JSON.parse(await request.text()).externalUserId);
    return new Response("ok");
  });
  return { url: `http://127.0.0.1:${server.addr.port}/hooks`, received, close: () => server.shutdown() };
}

Deno.test("webhook endpoints that close or reset connections: failures on the retry schedule, other partners unaffected, delivered once healed", async () => {
  const env = await startTestEnv({ env: { OUTBOUND_ALLOW_LOOPBACK: "true" } });
  const closing = brokenEndpoint("CLOSE");
  const resetting = brokenEndpoint("RESET");
  const healthy = healthyEndpoint();
  try {
    const closer = await hooked(env, "closer", closing.url);
    const resetter = await hooked(env, "resetter", resetting.url);
    const fine = await hooked(env, "fine", healthy.url);
    await closer.newClient("c1");
    await resetter.newClient("r1");
    await fine.newClient("f1");

    const first = await deliver(env);
    assert.deepEqual(first, { enqueued: 3, attempted: 3, delivered: 1, retrying: 2, dead: 0 });
    assert.deepEqual(healthy.received, ["f1"], "the healthy partner's push went out in the same pass");
    assert.equal(closing.connections, 1);
    assert.equal(resetting.connections, 1);
    for (const partner of [closer, resetter]) {
      const [delivery] = await partner.deliveries();
      assert.equal(delivery.status, "PENDING");
      assert.equal(delivery.history.length, 1);
      assert.equal(delivery.history[0].responseCode, null, "no answer came");
      assert.match(delivery.history[0].excerpt, /^conexão falhou: ECONNRESET/, "what went wrong is recorded");
      assert.equal(Date.parse(delivery.nextAttemptAt), env.clock.now() + 60_000, "retried after 1 minute");
    }

    // Not before the schedule; then retried (2 minutes next), while a new push of another partner still goes out.
    env.clock.freeze(env.clock.now() + 60_000 - 1);
    await fine.newClient("f2");
    assert.deepEqual(await deliver(env), { enqueued: 1, attempted: 1, delivered: 1, retrying: 0, dead: 0 });
    env.clock.freeze(env.clock.now() + 1);
    await fine.newClient("f3");
    assert.deepEqual(await deliver(env), { enqueued: 1, attempted: 3, delivered: 1, retrying: 2, dead: 0 });
    assert.deepEqual(healthy.received, ["f1", "f2", "f3"]);
    for (const partner of [closer, resetter]) {
      const [delivery] = await partner.deliveries();
      assert.equal(delivery.history.length, 2);
      assert.equal(Date.parse(delivery.nextAttemptAt), env.clock.now() + 120_000, "then after 2 minutes");
    }

    // The endpoints answer again: the same events are delivered at the next scheduled attempt, once.
    closing.heal();
    resetting.heal();
    env.clock.freeze(env.clock.now() + 120_000);
    assert.deepEqual(await deliver(env), { enqueued: 0, attempted: 2, delivered: 2, retrying: 0, dead: 0 });
    for (const [partner, externalUserId] of [[closer, "c1"], [resetter, "r1"]] as const) {
      const deliveries = await partner.deliveries();
      assert.equal(deliveries.length, 1, `${externalUserId}: one delivery, never duplicated`);
      assert.equal(deliveries[0].status, "DELIVERED");
      assert.deepEqual(deliveries[0].history.map((h: { responseCode: number | null }) => h.responseCode), [
        null,
        null,
        200,
      ]);
    }
    assert.deepEqual(await deliver(env), { enqueued: 0, attempted: 0, delivered: 0, retrying: 0, dead: 0 });
  } finally {
    await closing.close();
    await resetting.close();
    await healthy.close();
    await env.close();
  }
});
