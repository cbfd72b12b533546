/**
 * Webhook delivery benchmark, run standalone with
 * `deno run -A tests/bench/webhook_bench.ts` (WEBHOOK_EVENTS, default
 * 10,000): 50 partners, each with a local receiver, share the events. The
 * same load runs twice in one process: every receiver healthy, then 10 that
 * always answer 500 and 5 that never answer (each attempt waits out its
 * 10 s). Prints the deliveries per second to the healthy receivers and the
 * p99 of GET /v1/users/:id/status measured while the sender runs.
 */
import { sql } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { webhookDeliveries } from "../../db/schema.ts";
import type { Ctx } from "../../domain/context.ts";
import { emitEvent } from "../../domain/events/emit_event.ts";
import { WebhookWorker } from "../../domain/webhooks/worker.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectJson, operator } from "../_helpers/http.ts";
import { percentile } from "./percentile.ts";
import { pollLatencies } from "./poll.ts";

const EVENTS = Number(Deno.env.get("WEBHOOK_EVENTS") ?? "10000");
const PARTNERS = 50;

type Behaviour = "healthy" | "failing" | "hanging";

async function run(label: string, behaviourOf: (index: number) => Behaviour) {
  // The partners' receivers run on this machine.
  const env = await startTestEnv({ env: { OUTBOUND_ALLOW_LOOPBACK: "true" } });
  let release: () => void = () => {};
  const hanging = new Promise<void>((resolve) => release = resolve);
  const servers = Array.from(
    { length: PARTNERS },
    (_, index) =>
      Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
        await request.arrayBuffer();
        const behaviour = behaviourOf(index);
        if (behaviour === "hanging") await hanging;
        return new Response("ok", { status: behaviour === "failing" ? 500 : 200 });
      }),
  );
  const ctx: Ctx = { ...env.deps, actor: { kind: "system", job: "webhook-delivery" }, requestId: "bench" };
  const worker = new WebhookWorker(ctx);
  try {
    const first = await createPartner(env, {
      partnerId: "partner-0",
      limits: { requestsPerMinute: 1_000_000, ordersPerMinute: 100 },
    });
    await expectJson(
      await first.call("POST", "/v1/users", {
        body: { externalUserId: "poller" },
        headers: { "idempotency-key": "bench-poller-1" },
      }),
      201,
    );
    for (let index = 0; index < PARTNERS; index++) {
      if (index > 0) await createPartner(env, { partnerId: `partner-${index}` });
      const url = `http://127.0.0.1:${servers[index].addr.port}/hooks`;
      await expectJson(await operator(env, "PUT", `/operator/v1/partners/partner-${index}/webhook`, { url }), 200);
    }
    const now = env.clock.now();
    for (let done = 0; done < EVENTS; done += 1_000) {
      await withTransaction(env.deps.db, async (tx) => {
        for (let i = done; i < Math.min(EVENTS, done + 1_000); i++) {
          await emitEvent(tx, {
            type: "client.updated",
            partnerId: `partner-${i % PARTNERS}`,
            tenantId: `partner-${i % PARTNERS}`,
            externalUserId: `user-${i}`,
            occurredAt: now,
            data: { externalUserId: `user-${i}`, status: "ACTIVE" },
          });
        }
      });
    }
    const healthyPartners = Array.from({ length: PARTNERS }, (_, i) => i).filter((i) => behaviourOf(i) === "healthy");
    const healthyEvents = healthyPartners.reduce((sum, i) => sum + Math.ceil((EVENTS - i) / PARTNERS), 0);
    const polling = pollLatencies(async () => {
      const response = await env.app.request("/v1/users/poller/status", { headers: first.headers });
      await response.arrayBuffer();
    });
    const started = performance.now();
    worker.start(100);
    let delivered = 0;
    while (delivered < healthyEvents && performance.now() - started < 300_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const [{ n }] = await env.deps.db.read.select({ n: sql<number>`count(*)` }).from(webhookDeliveries)
        .where(sql`${webhookDeliveries.status} = 'DELIVERED'`);
      delivered = n;
    }
    const seconds = (performance.now() - started) / 1000;
    const latencies = await polling.stop();
    console.log(
      `${label}: ${delivered.toLocaleString("en")} deliveries to ${healthyPartners.length} healthy receivers in ${
        seconds.toFixed(2)
      } s = ${(delivered / seconds).toFixed(0)}/s; status p50 ${percentile(latencies, 0.5).toFixed(1)} ms, p99 ${
        percentile(latencies, 0.99).toFixed(1)
      } ms over ${latencies.length} requests`,
    );
  } finally {
    release();
    await worker.stop();
    await Promise.all(servers.map((server) => server.shutdown()));
    await env.close();
  }
}

await run("all 50 receivers healthy", () => "healthy");
await run("10 failing and 5 hanging of 50", (index) => index < 10 ? "failing" : index < 15 ? "hanging" : "healthy");
