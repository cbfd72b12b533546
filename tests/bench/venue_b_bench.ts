/**
 * VENUE_B benchmark (`deno run -A tests/bench/venue_b_bench.ts`): L1 order
 * signing throughput, and place + cancel round trips through the adapter
 * against the simulator on loopback.
 */
import { percentile } from "./percentile.ts";
import { bytesToBase64, createSecretBox } from "../../domain/secrets/secret_box.ts";
import { createVenueBSimulator } from "../../venues/sim/venue_b/mod.ts";
import { createVenueBAdapter } from "../../venues/venue_b/adapter.ts";
import { cloidFromClientOrderId } from "../../venues/venue_b/mappers.ts";
import {
  approveAgentAction,
  generateAgentKey,
  signL1Action,
  signUserSignedAction,
} from "../../venues/venue_b/signing.ts";

const SIGNING_SECONDS = 2;
const ROUND_TRIPS = 300;
const WARMUP = 20;

function signingThroughput(): number {
  const { privateKey } = generateAgentKey();
  const action = {
    type: "order",
    orders: [{
      a: 0,
      b: true,
      p: "65000",
      s: "0.001",
      r: false,
      t: { limit: { tif: "Gtc" } },
      c: cloidFromClientOrderId("bench"),
    }],
    grouping: "na",
    builder: { b: "0x1111111111111111111111111111111111111111", f: 10 },
  };
  let nonce = 1_700_000_000_000;
  for (let i = 0; i < 200; i++) signL1Action(privateKey, { action, nonce: nonce++, isMainnet: true });
  let count = 0;
  const started = performance.now();
  while (performance.now() - started < SIGNING_SECONDS * 1000) {
    signL1Action(privateKey, { action, nonce: nonce++, isMainnet: true });
    count++;
  }
  return count / ((performance.now() - started) / 1000);
}

async function roundTrips(): Promise<number[]> {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, createVenueBSimulator().fetch);
  try {
    const baseUrl = `http://127.0.0.1:${server.addr.port}`;
    // Latency, not limits: the round trips outrun the venue's 1,200 weight a minute per IP, which the simulator enforces.
    await fetch(`${baseUrl}/_control/limits`, { method: "PUT", body: JSON.stringify({ enabled: false }) })
      .then((r) => r.body?.cancel());
    const principal = generateAgentKey();
    const agent = generateAgentKey();
    await fetch(`${baseUrl}/_control/wallets`, {
      method: "POST",
      body: JSON.stringify({ address: principal.address, usdc: "1000000" }),
    }).then((r) => r.body?.cancel());
    const box = await createSecretBox(bytesToBase64(crypto.getRandomValues(new Uint8Array(32))));
    const adapter = createVenueBAdapter({ baseUrl, secrets: box });
    const approval = approveAgentAction({ isMainnet: true, agentAddress: agent.address, nonce: Date.now() });
    await adapter.submitUserSignedAction!(signUserSignedAction(principal.privateKey, approval));
    const credentials = {
      scheme: "AGENT_WALLET" as const,
      accountAddress: principal.address,
      agentAddress: agent.address,
      sealedAgentPrivateKey: await box.seal(agent.privateKey, "bench/venue-b/agent_private_key"),
    };
    const timings: number[] = [];
    for (let i = 0; i < WARMUP + ROUND_TRIPS; i++) {
      const clientOrderId = `bench-${i}`;
      const started = performance.now();
      await adapter.placeOrder(credentials, {
        symbol: "BTCUSDC",
        side: "BUY",
        type: "LIMIT",
        quantity: "0.001",
        price: "60000",
        reduceOnly: false,
        clientOrderId,
      });
      await adapter.cancelOrder(credentials, "BTCUSDC", clientOrderId);
      if (i >= WARMUP) timings.push(performance.now() - started);
    }
    return timings;
  } finally {
    await server.shutdown();
  }
}

const rate = signingThroughput();
console.log(`venue_b l1 order signing: ${Math.round(rate)} signatures/s`);
const timings = await roundTrips();
console.log(
  `venue_b place+cancel round trip (${timings.length} on loopback): p50 ${
    percentile(timings, 0.5).toFixed(2)
  } ms, p99 ${percentile(timings, 0.99).toFixed(2)} ms`,
);
