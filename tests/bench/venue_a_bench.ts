/**
 * VENUE_A benchmarks, run standalone with `deno run -A tests/bench/venue_a_bench.ts`:
 * 1. HMAC-SHA256 signing throughput for a typical order request.
 * 2. Order round trips (place + cancel a resting limit order) through the real
 *    adapter against the simulator on loopback. A placement is two HTTP calls:
 *    the idempotency lookup of the client order id, then the POST.
 */
import { bytesToBase64, createSecretBox } from "../../domain/secrets/secret_box.ts";
import { signRequest } from "../../venues/venue_a/auth.ts";
import { percentile } from "./percentile.ts";
import { createVenueAAdapter } from "../../venues/venue_a/adapter.ts";
import { createVenueASimulator } from "../../venues/sim/venue_a/mod.ts";

const ROUND_TRIPS = Number(Deno.env.get("VENUE_A_ROUND_TRIPS") ?? "500");
const SIGNING_MS = 1000;

function line(label: string, samples: number[]): string {
  return `${label.padEnd(36)} p50 ${percentile(samples, 0.5).toFixed(2)} ms   p99 ${
    percentile(samples, 0.99).toFixed(2)
  } ms   (${samples.length} samples)`;
}

function benchSigning(): void {
  const secret = "2b5eb11e18796d12d88f13dc27dbbd02c2cc51ff7059765ed9821957d82bb4d9";
  const params = {
    symbol: "BTCUSDT",
    side: "BUY",
    type: "LIMIT",
    quantity: "0.010",
    price: "64000.10",
    timeInForce: "GTC",
    newClientOrderId: "c1d2e3f4-entry-000123",
    newOrderRespType: "RESULT",
  };
  let count = 0;
  const started = performance.now();
  while (performance.now() - started < SIGNING_MS) {
    for (let i = 0; i < 100; i++) {
      signRequest({ method: "POST", params, secret, timestamp: 1_767_614_410_000 + count, recvWindow: 5000 });
      count++;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`HMAC signing (order request)            ${(count / seconds).toFixed(0)} signatures/s`);
}

async function benchRoundTrips(): Promise<void> {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, createVenueASimulator().futures.fetch);
  const baseUrl = `http://127.0.0.1:${server.addr.port}`;
  try {
    const secrets = await createSecretBox(bytesToBase64(crypto.getRandomValues(new Uint8Array(32))));
    const created = await fetch(`${baseUrl}/_control/accounts`, { method: "POST", body: "{}" });
    const { apiKey, apiSecret } = await created.json();
    const credentials = {
      scheme: "API_KEY" as const,
      apiKey,
      sealedApiSecret: await secrets.seal(apiSecret, "bench/venue-a/api_secret"),
    };
    // One account places hundreds of orders in seconds: the venue's per-account order limits are lifted (the
    // adapter reads them from exchangeInfo), as real accounts never meet here.
    await fetch(`${baseUrl}/_control/limits`, {
      method: "PUT",
      body: JSON.stringify({ ordersPer10Seconds: 1_000_000, ordersPerMinute: 1_000_000 }),
    }).then((response) => response.body?.cancel());
    const adapter = createVenueAAdapter({ baseUrl, spotBaseUrl: baseUrl, secrets });
    await adapter.listMarkets();
    const place: number[] = [];
    const cancel: number[] = [];
    const total: number[] = [];
    for (let i = -20; i < ROUND_TRIPS; i++) {
      const clientOrderId = `bench-${i + 20}`;
      const t0 = performance.now();
      await adapter.placeOrder(credentials, {
        symbol: "BTCUSDT",
        side: "BUY",
        type: "LIMIT",
        quantity: "0.010",
        price: "60000",
        reduceOnly: false,
        clientOrderId,
      });
      const t1 = performance.now();
      await adapter.cancelOrder(credentials, "BTCUSDT", clientOrderId);
      const t2 = performance.now();
      // The first 20 warm up connections and JIT; they are not recorded.
      if (i < 0) continue;
      place.push(t1 - t0);
      cancel.push(t2 - t1);
      total.push(t2 - t0);
    }
    console.log(line("placeOrder (POST)", place));
    console.log(line("cancelOrder (DELETE)", cancel));
    console.log(line("round trip (place + cancel)", total));
  } finally {
    await server.shutdown();
  }
}

benchSigning();
await benchRoundTrips();
