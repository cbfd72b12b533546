/**
 * VENUE_A's stream hub against bare WebSocket servers that misbehave in ways
 * the simulator does not: a connection that stays open but never answers is
 * declared lost and reopened; unwrapped events reach the keys they can belong to.
 */
import assert from "node:assert/strict";
import { createStreamHub, type KeySink, type StreamHubOptions } from "../../venues/venue_a/stream_hub.ts";

function options(baseUrl: string, overrides: Partial<StreamHubOptions> = {}): StreamHubOptions {
  return {
    baseUrl,
    events: ["ORDER_TRADE_UPDATE"],
    keysPerConnection: 50,
    reconnectDelaysMs: [20],
    probeIntervalMs: 100,
    probeTimeoutMs: 100,
    connectTimeoutMs: 1000,
    refreshAfterMs: 60_000,
    attempts: { max: 100, windowMs: 60_000 },
    ...overrides,
  };
}

function recordingSink(log: string[], name: string): KeySink {
  return {
    event: (event) => log.push(`${name} event ${event.e}`),
    live: () => log.push(`${name} live`),
    lost: (reason) => log.push(`${name} lost ${reason}`),
  };
}

async function until(predicate: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + 4000;
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A server that opens every connection and then says nothing, answering no probe. */
function silentServer(sockets: WebSocket[]) {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const { socket, response } = Deno.upgradeWebSocket(request);
    sockets.push(socket);
    return response;
  });
}

Deno.test("a connection that stops answering the probe is declared lost and reopened", async () => {
  const sockets: WebSocket[] = [];
  const server = silentServer(sockets);
  const hub = createStreamHub(options(`ws://127.0.0.1:${server.addr.port}`));
  const log: string[] = [];
  hub.join("key-a", recordingSink(log, "a"));
  await until(() => log.includes("a live"), "live");
  await until(() => log.some((line) => line.startsWith("a lost")), "lost");
  assert.equal(log.find((line) => line.startsWith("a lost")), "a lost the stream connection stopped answering");
  await until(() => log.filter((line) => line === "a live").length === 2, "reopened");
  assert.ok(sockets.length >= 2);
  await hub.leave("key-a");
  for (const socket of sockets) if (socket.readyState === WebSocket.OPEN) socket.close();
  await server.shutdown();
});

Deno.test("events without a wrapper reach every key of their connection; probe answers are not events", async () => {
  const sockets: WebSocket[] = [];
  const server = silentServer(sockets);
  const hub = createStreamHub(options(`ws://127.0.0.1:${server.addr.port}`, { probeIntervalMs: 60_000 }));
  const log: string[] = [];
  hub.join("key-a", recordingSink(log, "a"));
  hub.join("key-b", recordingSink(log, "b"));
  await until(() => log.includes("a live") && log.includes("b live"), "live");
  const socket = sockets.at(-1)!;
  socket.send(JSON.stringify({ result: null, id: 1 }));
  socket.send(JSON.stringify({ e: "ORDER_TRADE_UPDATE", E: 1, o: {} }));
  socket.send(JSON.stringify({ stream: "key-b", data: { e: "ALGO_UPDATE", E: 2 } }));
  await until(() => log.filter((line) => line.includes("event")).length === 3, "events");
  assert.deepEqual(log.filter((line) => line.includes("event")), [
    "a event ORDER_TRADE_UPDATE",
    "b event ORDER_TRADE_UPDATE",
    "b event ALGO_UPDATE",
  ]);
  assert.equal(hub.connections(), 1);
  await Promise.all([hub.leave("key-a"), hub.leave("key-b")]);
  assert.equal(hub.connections(), 0);
  await server.shutdown();
});
