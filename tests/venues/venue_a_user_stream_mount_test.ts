/**
 * The VENUE_A simulator's user data stream as the QA service serves it:
 * mounted under /sim/venue-a behind the service's own middleware (request
 * ids, caches), where a WebSocket upgrade must pass through untouched.
 */
import { startTestEnv } from "../_helpers/env.ts";
import { createVenueASimulator } from "../../venues/sim/venue_a/mod.ts";
import { openStream } from "./venue_a_stream_client.ts";

Deno.test("the stream works with the simulator mounted under /sim/venue-a behind the service's middleware", async () => {
  const simulator = createVenueASimulator();
  const env = await startTestEnv({ extend: (app) => app.route("/sim/venue-a", simulator.futures) });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, env.app.fetch);
  const base = `127.0.0.1:${server.addr.port}/sim/venue-a`;
  try {
    const created = await fetch(`http://${base}/_control/accounts`, { method: "POST", body: "{}" });
    const { apiKey } = await created.json();
    const key = await fetch(`http://${base}/fapi/v1/listenKey`, {
      method: "POST",
      headers: { "X-MBX-APIKEY": apiKey },
    });
    const { listenKey } = await key.json();
    const stream = await openStream(`ws://${base}/private/ws?listenKey=${listenKey}`);
    await fetch(`http://${base}/_control/accounts/${apiKey}/transfers`, {
      method: "POST",
      body: JSON.stringify({ asset: "USDT", amount: "1" }),
    }).then((r) => r.body?.cancel());
    await stream.next((frame) => frame.e === "ACCOUNT_UPDATE" && (frame.a as { m: string }).m === "DEPOSIT");
    await stream.close();
  } finally {
    await simulator.close();
    await server.shutdown();
    await env.close();
  }
});
