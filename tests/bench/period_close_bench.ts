/**
 * Period-close benchmark, run standalone with
 * `deno run -A tests/bench/period_close_bench.ts` (CLOSE_CLIENTS, default
 * 100,000): one partner (CARRY, 20 %) whose clients each closed two trades in
 * the period, ten facts apiece (per trade an entry, two closing fills and two
 * funding payments: two closing portions), half of them at a profit. The
 * period-close job then states them all. Prints the time to close, the
 * statements and obligations written, the memory peak, and the p99 of
 * GET /v1/users/:id/status measured while the close runs (same process, same
 * event loop), and the process CPU the close took (all threads: the WAL
 * checkpointer's too), the figure a shared machine leaves comparable.
 *
 * CLOSE_CLOCK=running lets the close's clock run on from the period's end, as
 * a real one does, instead of the frozen test clock. Frozen, every id the close
 * makes (statements, obligations, events) has the same time part, so they land
 * at random over their whole unique indexes and the commits write far more
 * pages (about 2.5 s more system CPU at 100,000 clients); with a running clock
 * they come in time order, as in production.
 */
import process from "node:process";
import { sql } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { clients, performancePortions } from "../../db/schema.ts";
import type { Ctx } from "../../domain/context.ts";
import { closePeriods } from "../../domain/performance/close_periods.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner } from "../_helpers/http.ts";
import { percentile } from "./percentile.ts";
import { billingContract } from "../performance/trade_fixture.ts";
import { pollLatencies } from "./poll.ts";

const CLIENTS = Number(Deno.env.get("CLOSE_CLIENTS") ?? "100000");
const PORTIONS_PER_CLIENT = 4;
const FACTS_PER_CLIENT = 10;

const env = await startTestEnv();
const ctx: Ctx = { ...env.deps, actor: { kind: "system", job: "bench" }, requestId: "bench" };
const partner = await createPartner(env, {
  partnerId: "closing",
  contract: billingContract(),
  limits: { requestsPerMinute: 1_000_000, ordersPerMinute: 1_000 },
});

const setupStarted = performance.now();
const now = env.clock.now();
await withTransaction(env.deps.db, async (tx) => {
  await tx.run(sql`INSERT INTO ${clients} (partner_id, tenant_id, external_user_id, status, created_at, updated_at)
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${CLIENTS})
    SELECT 'closing', 'closing', 'user-' || i, 'ACTIVE', ${now}, ${now} FROM n`);
});
// Confirmed closing portions inside the first period (Nov 2 10:00 - Dec 1), written in bounded transactions;
// a client's four portions carry its ten facts. Odd clients win 12.345678 a portion, even ones lose 3.2.
for (let first = 0; first < CLIENTS; first += 20_000) {
  await withTransaction(env.deps.db, async (tx) => {
    await tx.run(sql`INSERT INTO ${performancePortions} (client_id, provider_id, venue_ref, position_id, closed_at,
        status, realized_micros, venue_fees_micros, funding_micros, builder_fees_micros, net_micros, facts_count,
        confirmed_at)
      SELECT c.id, 'VENUE_A', 'FILL:BTCUSDT:' || c.id || '-' || k.k, 'pos-' || c.id || '-' || (k.k / 2),
        ${Date.parse("2026-11-10T00:00:00Z")} + c.id * 7 + k.k * 3600000, 'CONFIRMED',
        CASE c.id % 2 WHEN 1 THEN 12500000 ELSE -3000000 END, 150000, CASE c.id % 2 WHEN 1 THEN -4322 ELSE -50000 END,
        0, CASE c.id % 2 WHEN 1 THEN 12345678 ELSE -3200000 END,
        CASE k.k WHEN 0 THEN 4 WHEN 2 THEN 4 ELSE 1 END, ${now}
      FROM ${clients} c, (SELECT 0 AS k UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) k
      WHERE c.partner_id = 'closing' AND c.id IN
        (SELECT id FROM ${clients} WHERE partner_id = 'closing' ORDER BY id LIMIT 20000 OFFSET ${first})`);
  });
}
console.log(
  `${CLIENTS.toLocaleString("en")} clients, ${(CLIENTS * FACTS_PER_CLIENT).toLocaleString("en")} facts in ${
    (CLIENTS * PORTIONS_PER_CLIENT).toLocaleString("en")
  } closing portions, set up in ${((performance.now() - setupStarted) / 1000).toFixed(1)} s`,
);

const polling = pollLatencies(async (index) => {
  const response = await env.app.request(`/v1/users/user-${1 + (index % CLIENTS)}/status`, {
    headers: partner.headers,
  });
  await response.arrayBuffer();
});
let peakRss = Deno.memoryUsage().rss;
const sampler = setInterval(() => peakRss = Math.max(peakRss, Deno.memoryUsage().rss), 50);

env.clock.freeze(Date.parse("2026-12-01T00:05:00Z"));
const started = performance.now();
const cpuBefore = process.cpuUsage();
const closeStart = env.clock.now();
const runningClock = { ...ctx, clock: { now: () => closeStart + Math.floor(performance.now() - started) } };
const clockRuns = Deno.env.get("CLOSE_CLOCK") === "running";
const summary = await closePeriods(clockRuns ? runningClock : ctx);
const closeMs = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
const statusLatencies = await polling.stop();
clearInterval(sampler);

console.log(
  `period closed for ${CLIENTS.toLocaleString("en")} clients in ${(closeMs / 1000).toFixed(2)} s   (target < 10 s): ${
    summary.statements.toLocaleString("en")
  } statements, ${summary.obligations.toLocaleString("en")} obligations, their events (clock ${
    clockRuns ? "running" : "frozen"
  })`,
);
console.log(
  `process CPU during the close: ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s (user ${
    (cpu.user / 1e6).toFixed(2)
  } s, system ${(cpu.system / 1e6).toFixed(2)} s)`,
);
console.log(`memory peak (RSS): ${(peakRss / 1024 / 1024).toFixed(0)} MiB   (target < 1 GiB)`);
console.log(
  `GET /v1/users/:id/status during the close: p50 ${percentile(statusLatencies, 0.5).toFixed(1)} ms, p99 ${
    percentile(statusLatencies, 0.99).toFixed(1)
  } ms over ${statusLatencies.length} requests   (target p99 < 50 ms)`,
);
await env.close();
