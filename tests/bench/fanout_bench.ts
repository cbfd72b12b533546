/**
 * Signal fan-out benchmark, run standalone with `deno run -A tests/bench/fanout_bench.ts`
 * (FANOUT_ACCOUNTS, default 10,000): one signal to every eligible account on
 * the VENUE_A simulator (its rate limit lifted; 100 simulator accounts shared
 * by the clients, each client its own sealed credential row), in one process
 * with the service, as a single instance runs it. Prints the time to judge
 * every account (gates, sizing, admission), the time until every entry is
 * sent and protected, the signal-to-order latency, the memory peak, the p99
 * of GET /v1/users/:id/status measured while the fan-out runs, and the time
 * the same fan-out needs under the real venues' published limits.
 */
import { withTransaction } from "../../db/client.ts";
import { accountStates, automations, clients, clientSetups, intents, providerAccounts } from "../../db/schema.ts";
import { accountSecretBinding } from "../../domain/accounts/load_account.ts";
import type { Ctx } from "../../domain/context.ts";
import { dispatchAdmitted } from "../../domain/engine/dispatch_entries.ts";
import { evaluateSignal, type SignalInput } from "../../domain/engine/evaluate_signal.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectJson, operator } from "../_helpers/http.ts";
import { BTC_POLICY, TREND_FOLLOW } from "../setup/setup_fixture.ts";
import { percentile } from "./percentile.ts";
import { startSimulatorProcess } from "./simulator_process.ts";
import { EgressBudget } from "../../domain/venues/egress_budget.ts";

const ACCOUNTS = Number(Deno.env.get("FANOUT_ACCOUNTS") ?? "10000");
const SIM_ACCOUNTS = 100;
const BATCH = 500;

// The venues in a process of their own, as real venues are: the figures are the service's work, not theirs.
const venues = await startSimulatorProcess();
// The service-side egress budgets lifted like the simulator's own limit: this measures the engine.
const env = await startTestEnv({
  env: { VENUE_A_IP_WEIGHT_PER_MINUTE: "100000000", VENUE_B_IP_WEIGHT_PER_MINUTE: "100000000" },
  venues: venues.urls,
});
const ctx: Ctx = { ...env.deps, actor: { kind: "system", job: "bench" }, requestId: "bench" };
const now = env.clock.now();
const control = (method: string, path: string, body: unknown) =>
  fetch(`${env.venueUrls.venueA}/_control${path}`, { method, body: JSON.stringify(body) }).then((r) => r.json());

const partner = await createPartner(env, {
  partnerId: "fanout",
  riskEnvelope: { maxLeverage: 10, maxMarginPerTradeUsd: 500, maxConcurrentTrades: 3, maxDailyLossUsd: 200 },
  limits: { requestsPerMinute: 1_000_000, ordersPerMinute: 1_000_000 },
});
await expectJson(await operator(env, "PUT", "/operator/v1/strategies/trend-follow", TREND_FOLLOW), 200);
await expectJson(
  await operator(env, "PUT", "/operator/v1/asset-policies/VENUE_A/BTCUSDT", { ...BTC_POLICY, maxBookFraction: 1 }),
  200,
);
await expectJson(await operator(env, "PUT", "/operator/v1/providers/VENUE_A", { realExecution: true }), 200);
await control("PUT", "/limits", { requestWeightPerMinute: 100_000_000 });
// A deep book, so admission does not refuse 10,000 small entries for liquidity.
await control("PUT", "/markets/BTCUSDT", { markPrice: "65000", depth: "1000" });

const keys: { apiKey: string; apiSecret: string }[] = [];
for (let i = 0; i < SIM_ACCOUNTS; i++) {
  keys.push(await control("POST", "/accounts", { balances: { USDT: "100000000" } }));
}

const setupStarted = performance.now();
for (let first = 0; first < ACCOUNTS; first += BATCH) {
  const count = Math.min(BATCH, ACCOUNTS - first);
  const sealed = await Promise.all(Array.from({ length: count }, async (_, i) => {
    const accountId = `acc_fanout_${first + i}`;
    const key = keys[(first + i) % SIM_ACCOUNTS];
    return {
      accountId,
      apiKey: key.apiKey,
      secret: await env.deps.secrets.seal(key.apiSecret, accountSecretBinding(accountId)),
    };
  }));
  await withTransaction(env.deps.db, async (tx) => {
    const rows = await tx.insert(clients).values(Array.from({ length: count }, (_, i) => ({
      partnerId: "fanout",
      tenantId: "fanout",
      externalUserId: `user-${first + i}`,
      status: "ACTIVE",
      strategySelection: null,
      createdAt: now,
      updatedAt: now,
    }))).returning({ id: clients.id });
    await tx.insert(clientSetups).values(rows.map(({ id }) => ({
      clientId: id,
      providerId: "VENUE_A",
      enabled: true,
      leverage: 5,
      maxMarginPerTradeMicros: 50e6,
      maxConcurrentTrades: 1,
      maxDailyLossMicros: 100e6,
      orderSizeMicros: 150e6,
      capitalBaseMicros: 1000e6,
      maxLossPerTradeMicros: 20e6,
      entryTimeoutMinutes: 30,
      updatedAt: now,
    })));
    await tx.insert(automations).values(rows.map(({ id }) => ({
      clientId: id,
      providerId: "VENUE_A",
      strategyId: "trend-follow",
      strategyVersion: TREND_FOLLOW.version,
      enabled: true,
      risk: { leverage: 5, maxMarginPerTradeMicros: 50e6, maxConcurrentTrades: 1, maxDailyLossMicros: 100e6 },
      conditions: {},
      updatedAt: now,
    })));
    await tx.insert(providerAccounts).values(rows.map(({ id }, i) => ({
      accountId: sealed[i].accountId,
      clientId: id,
      providerId: "VENUE_A",
      scheme: "API_KEY",
      connection: "CONNECTED",
      apiKey: sealed[i].apiKey,
      sealedSecret: sealed[i].secret.sealed,
      permissions: { canRead: true, canFutures: true, canWithdraw: false },
      connectedAt: now,
      updatedAt: now,
    })));
    await tx.insert(accountStates).values(rows.map(({ id }) => ({
      clientId: id,
      providerId: "VENUE_A",
      positions: [],
      restingEntries: 0,
      factsCursor: now,
      reconciledAt: now,
      // As after a first entry: the leverage and margin mode are already set.
      symbolSettings: { BTCUSDT: { leverage: 5, marginMode: "ISOLATED" } },
    })));
  });
}
console.log(
  `${ACCOUNTS.toLocaleString("en")} eligible accounts set up in ${
    ((performance.now() - setupStarted) / 1000).toFixed(1)
  } s`,
);

// The API's answer time on a polled read while the fan-out runs (same process, same event loop).
const statusLatencies: number[] = [];
let fanningOut = true;
const poll = (async () => {
  let user = 0;
  while (fanningOut) {
    const started = performance.now();
    const response = await env.app.request(`/v1/users/user-${user++ % ACCOUNTS}/status`, { headers: partner.headers });
    await response.arrayBuffer();
    statusLatencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
})();
let peakRss = Deno.memoryUsage().rss;
const sampler = setInterval(() => peakRss = Math.max(peakRss, Deno.memoryUsage().rss), 50);

const signal: SignalInput = {
  signalId: "fanout-1",
  strategyId: "trend-follow",
  providerId: "VENUE_A",
  symbol: "BTCUSDT",
  side: "BUY",
  entryPrice: "65010",
  stopLossPrice: "63010",
  takeProfits: [{ price: "67010", share: "0.5" }, { price: "69010", share: "0.5" }],
  confidence: 80,
};
const signalWall = Date.now();
const evaluateStarted = performance.now();
await evaluateSignal(ctx, signal);
const evaluateMs = performance.now() - evaluateStarted;
const dispatchStarted = performance.now();
const dispatch = await dispatchAdmitted(ctx, signal.signalId);
const dispatchMs = performance.now() - dispatchStarted;
fanningOut = false;
await poll;
clearInterval(sampler);

const sent =
  (await env.deps.db.read.select({ type: intents.type, sentWallAt: intents.sentWallAt, status: intents.status })
    .from(intents)).filter((intent) => intent.type === "ENTRY");
const toOrder = sent.map((intent) => intent.sentWallAt! - signalWall);
const protectionOrders = (await env.deps.db.read.select({ type: intents.type }).from(intents))
  .filter((intent) => intent.type !== "ENTRY").length;

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
console.log(
  `gates, sizing and admission for ${ACCOUNTS.toLocaleString("en")} accounts: ${
    evaluateMs.toFixed(0)
  } ms   (target < 200 ms)`,
);
console.log(
  `every entry sent and protected: ${
    seconds(dispatchMs)
  }   (${dispatch.dispatched} entries, ${protectionOrders} protective orders, ${dispatch.failed} failed; target: accepted within 10 s)`,
);
console.log(
  `signal to order sent: p50 ${seconds(percentile(toOrder, 0.5))}, p99 ${seconds(percentile(toOrder, 0.99))}`,
);
console.log(`memory peak (RSS): ${(peakRss / 1024 / 1024).toFixed(0)} MiB`);
console.log(
  `GET /v1/users/:id/status during the fan-out: p50 ${percentile(statusLatencies, 0.5).toFixed(1)} ms, p99 ${
    percentile(statusLatencies, 0.99).toFixed(1)
  } ms over ${statusLatencies.length} requests   (target p99 < 50 ms)`,
);
// Under the real venues' published limits (shared/venues): VENUE_A orders and algo orders weigh 0 on the IP and
// count per account (1,200 a minute), so 10,000 accounts are bound by nothing but the leverage and margin writes
// (weight 1 each, skipped when unchanged); VENUE_B weighs every action 1 against 1,200 a minute per IP.
// The service spends at most its share of each published limit (domain/venues/egress_budget.ts).
const perMinute = (providerId: "VENUE_A" | "VENUE_B", published: number) =>
  new EgressBudget(env.deps.db, providerId, "projection", published).perMinute;
const venueBActions = ACCOUNTS * 2; // the entry, and the stop with its targets in one batched action
console.log(
  `projected under real limits, one egress IP: VENUE_A ${seconds(0)} of weight wait (orders weigh 0 on the IP; ` +
    `${(ACCOUNTS * 2 / perMinute("VENUE_A", 2400)).toFixed(1)} min if leverage and margin mode had to be set on ` +
    `every account); VENUE_B ${(venueBActions / perMinute("VENUE_B", 1200)).toFixed(1)} min (${
      venueBActions.toLocaleString("en")
    } actions at ${perMinute("VENUE_B", 1200).toLocaleString("en")} a minute, 85 % of 1,200)`,
);
await env.close();
await venues.stop();
