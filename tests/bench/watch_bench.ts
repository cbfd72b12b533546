/**
 * Watching connected accounts within the venues' published request budgets
 * (issue 29), run standalone with `deno run -A tests/bench/watch_bench.ts`
 * and last by `deno task bench`.
 *
 * WATCH_ACCOUNTS (default 10,000) connected accounts, half per venue, each its
 * own simulator account (a VENUE_A API key and so its own listen key; a
 * VENUE_B wallet with its own agent), one egress id, both simulators in a
 * process of their own with the venues' published limits on (VENUE_A 2,400
 * weight a minute, charged by its simulator; VENUE_B 1,200, charged beside
 * its simulator by watch_venues.ts) and the service's egress budgets at the
 * same published figures. A tenth of each venue's accounts hold a position
 * protected at the venue (entry filled, one stop, one target), opened
 * through the service's own verbs. Then, on the service's side:
 *
 * 1. The push keeper (`AccountPushKeeper`) starts: how long until every
 *    account's pushes are recorded live, and the weight its listen keys and
 *    first reads cost. The events start once every VENUE_A account has its
 *    listen key (and KEYS_SETTLE_SECONDS more) or all are live, at most
 *    WATCH_LIVE_SECONDS after the start: the listen keys alone take 2.5
 *    minutes of the budget, and before its key an account's pushes cannot flow.
 * 2. Over WATCH_EVENTS_SECONDS the market moves one account's target through
 *    (a fill) and another's stop (a fired stop) at a time, WATCH_EVENTS of
 *    each per venue, and once pays funding to every open position; each is
 *    timed from the simulator's control call until the service's database
 *    shows it (the position closed, the funding fact recorded), polled every
 *    100 ms, with WATCH_TAIL_SECONDS after the last for it to be known.
 * 3. With every account's last read made two hours old (as an hour after the
 *    keeper's start), the reconcile job runs for WATCH_SWEEP_SECONDS with
 *    the push states the keeper wrote: what its plan asks of each account
 *    (a full read, or the cheap hourly check of a pushed one) at the costs
 *    measured gives the time one sweep of every account takes at the
 *    budget's minute; the accounts it completes per weight spent check it.
 * Through 1 and 2 the reconcile job also runs every minute, as its cron
 * runs it in production (WATCH_JOB=0: the keeper alone).
 * Throughout, the weight each venue served per second (the simulators' side)
 * and the weight the service spent (its egress budgets), the venues' 429 and
 * 418 answers, and which reads cost the most weight.
 */
import process from "node:process";
import { and, count, eq, gte, inArray, sql } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { accountPushes, accountStates, egressBudgets, positions, resultFacts } from "../../db/schema.ts";
import type { AccountRow } from "../../domain/accounts/load_account.ts";
import type { Ctx } from "../../domain/context.ts";
import { AccountPushKeeper } from "../../domain/execution/account_pushes.ts";
import { newLeaseOwner } from "../../domain/execution/entry_leases.ts";
import { reconcileAccountOnce, reconcileAccounts } from "../../domain/execution/reconcile_accounts.ts";
import { type ReadPlan, readPlans } from "../../domain/execution/push_states.ts";
import { callWithAccount } from "../../domain/accounts/account_call.ts";
import type { LogFields, Logger } from "../../domain/logger.ts";
import { EgressBudget, type EgressBudgets } from "../../domain/venues/egress_budget.ts";
import { databaseSignerNonces } from "../../domain/venues/signer_nonces.ts";
import { createVenueRegistry } from "../../venues/registry.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectJson, operator } from "../_helpers/http.ts";
import { BTC_POLICY, TREND_FOLLOW } from "../setup/setup_fixture.ts";
import { percentile } from "./percentile.ts";
import { SIM_MARKET, SYMBOL } from "./seed_accounts.ts";
import { simControl, startSimulatorProcess } from "./simulator_process.ts";
import { inParallel, type Levels, openProtectedPosition, seedWatchedAccounts } from "./watch_seed.ts";
import type { VenueWeights } from "./watch_venues.ts";

const number = (name: string, fallback: number) => Number(Deno.env.get(name) ?? fallback);
const ACCOUNTS = number("WATCH_ACCOUNTS", 10_000);
const LIVE_SECONDS = number("WATCH_LIVE_SECONDS", 300);
/** After VENUE_A's last listen key, time for its stream to connect before the events. */
const KEYS_SETTLE_SECONDS = 20;
const EVENTS_SECONDS = number("WATCH_EVENTS_SECONDS", 60);
const EVENTS = number("WATCH_EVENTS", 8);
const TAIL_SECONDS = number("WATCH_TAIL_SECONDS", 20);
const SWEEP_SECONDS = number("WATCH_SWEEP_SECONDS", 45);
/** 1: the reconcile job runs every minute beside the keeper from its start, as in production; 0: the keeper alone. */
const JOB_BESIDE = number("WATCH_JOB", 1) === 1;
const PROTECTED_SHARE = 0.1;
const PARTNER_ID = "watch";

const PROVIDERS = ["VENUE_A", "VENUE_B"] as const;
type ProviderId = typeof PROVIDERS[number];
const PER_VENUE: Record<ProviderId, number> = { VENUE_A: Math.ceil(ACCOUNTS / 2), VENUE_B: Math.floor(ACCOUNTS / 2) };
/** The venues' published request weight per minute and IP. */
const PUBLISHED: Record<ProviderId, number> = { VENUE_A: 2400, VENUE_B: 1200 };
const MARK = 65_000;
/** A target event's level and a stop event's, k-th of each: the market crosses one new level per move. */
const targetLevel = (k: number) => MARK + 100 + 10 * k;
const stopLevel = (k: number) => MARK - 100 - 10 * k;
const FAR: Levels = { stopLossPrice: "60000", takeProfitPrice: "70000" };

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
const thousands = (n: number) => Math.round(n).toLocaleString("en");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------- what the service spends, what it logs

/** Weight the service's egress budgets granted per venue and wall-clock second, and what they refused. */
class SpendLog {
  readonly perSecond: Record<ProviderId, Map<number, number>> = { VENUE_A: new Map(), VENUE_B: new Map() };
  readonly refused: Record<ProviderId, number> = { VENUE_A: 0, VENUE_B: 0 };

  /** Counts every spend of `budgets` (the very objects the adapters spend from). */
  instrument(budgets: EgressBudgets): void {
    for (const providerId of PROVIDERS) {
      const budget = budgets[providerId];
      const spend = budget.spend.bind(budget);
      budget.spend = async (weight: number) => {
        try {
          await spend(weight);
        } catch (error) {
          this.refused[providerId]++;
          throw error;
        }
        const second = Math.floor(Date.now() / 1000);
        this.perSecond[providerId].set(second, (this.perSecond[providerId].get(second) ?? 0) + weight);
      };
    }
  }

  total(providerId: ProviderId, from: number, to: number): number {
    let sum = 0;
    for (const [second, weight] of this.perSecond[providerId]) {
      if (second * 1000 >= from && second * 1000 < to) sum += weight;
    }
    return sum;
  }
}

/** The highest weight of any 60 consecutive seconds of `perSecond` (epoch second -> weight). */
function rollingMinuteMax(perSecond: Map<number, number>): number {
  const seconds = [...perSecond.keys()].sort((a, b) => a - b);
  let best = 0;
  for (const end of seconds) {
    let sum = 0;
    for (let s = end - 59; s <= end; s++) sum += perSecond.get(s) ?? 0;
    best = Math.max(best, sum);
  }
  return best;
}

/** A logger that only counts its lines, by level, message and the venue failure's kind: 10,000 accounts log a lot. */
function tallyLogger(): Logger & { counts: Map<string, number> } {
  const counts = new Map<string, number>();
  const tally = (level: string) => (message: string, fields: LogFields = {}) => {
    const kind = fields.kind
      ? ` (${String(fields.providerId)} ${String(fields.kind)})`
      : fields.outcomes
      ? ` (${String(fields.providerId)} ${String(fields.outcomes)}, ${
        Math.round(Number(fields.sincePushMs) / 5000) * 5
      } s)`
      : "";
    const key = `${level}: ${message}${kind}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  return { counts, debug: tally("debug"), info: tally("info"), warn: tally("warn"), error: tally("error") };
}

// ---------------------------------------------------------------- the machine

interface Mark {
  at: number;
  serviceCpu: number;
  simulatorCpu: number;
  load: number[];
}

// ---------------------------------------------------------------- set-up

const venues = await startSimulatorProcess(new URL("./watch_venues.ts", import.meta.url));
const benchRoute = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${venues.base}/_bench${path}`, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return await response.json();
};
const venueWeights = () => benchRoute("GET", "/weights") as Promise<Record<ProviderId, VenueWeights>>;
const listenKeys = (weights: VenueWeights, method: string) =>
  weights.byRoute[`${method} /fapi/v1/listenKey`]?.weight ?? 0;
const mark = async (): Promise<Mark> => {
  const cpu = process.cpuUsage();
  return {
    at: Date.now(),
    serviceCpu: (cpu.user + cpu.system) / 1e6,
    simulatorCpu: await venues.cpuSeconds(),
    load: Deno.loadavg(),
  };
};
const machine = (from: Mark, to: Mark) => {
  const wall = (to.at - from.at) / 1000;
  return `service ${(to.serviceCpu - from.serviceCpu).toFixed(1)} s CPU, simulators ${
    (to.simulatorCpu - from.simulatorCpu).toFixed(1)
  } s, of ${(wall * navigator.hardwareConcurrency).toFixed(0)} s on ${navigator.hardwareConcurrency} cores; load ${
    to.load[0].toFixed(2)
  }`;
};

// The set-up is not measured: VENUE_B's weight is lifted for it and put back before the keeper starts.
await benchRoute("POST", "/reset", { venueBWeightPerMinute: 1_000_000_000 });
const env = await startTestEnv({
  venues: venues.urls,
  env: {
    VENUE_A_IP_WEIGHT_PER_MINUTE: String(PUBLISHED.VENUE_A),
    VENUE_B_IP_WEIGHT_PER_MINUTE: String(PUBLISHED.VENUE_B),
  },
});
// Real time throughout: sweep intervals, push states and venue times all run on the wall clock.
env.clock.freeze(null);
const spent = new SpendLog();
spent.instrument(env.deps.egressBudgets);
const db = env.deps.db;
const setupStarted = await mark();

await createPartner(env, { partnerId: PARTNER_ID });
await expectJson(await operator(env, "PUT", "/operator/v1/strategies/trend-follow", TREND_FOLLOW), 200);
for (const providerId of PROVIDERS) {
  await expectJson(
    await operator(env, "PUT", `/operator/v1/asset-policies/${providerId}/${SYMBOL[providerId]}`, BTC_POLICY),
    200,
  );
  const market = providerId === "VENUE_A" ? venues.urls.venueA : venues.urls.venueB;
  await simControl(market, "PUT", `/markets/${SIM_MARKET[providerId]}`, { markPrice: String(MARK), depth: "1000" });
}
const accounts = await seedWatchedAccounts(env, venues.urls, { partnerId: PARTNER_ID, perVenue: PER_VENUE });
const seeded = await mark();

// The positions are opened with an egress budget of their own (lifted): their weight is the set-up's.
const setupBudgets: EgressBudgets = {
  VENUE_A: new EgressBudget(db, "VENUE_A", "bench-setup", 100_000_000),
  VENUE_B: new EgressBudget(db, "VENUE_B", "bench-setup", 100_000_000),
};
const setupCtx: Ctx = {
  ...env.deps,
  venues: createVenueRegistry(
    { ...venues.urls, venueBMainnet: env.deps.config.venueBMainnet },
    env.deps.secrets,
    setupBudgets,
    databaseSignerNonces(db),
  ),
  egressBudgets: setupBudgets,
  actor: { kind: "system", job: "bench-setup" },
  requestId: "bench-setup",
};

interface Holder {
  providerId: ProviderId;
  account: AccountRow;
  positionId: string;
  role: "TARGET" | "STOP" | "HOLD";
  /** The k-th target or stop event of its venue. */
  step: number;
}
const holders: Holder[] = [];
const protectedPerVenue = (providerId: ProviderId) =>
  Math.max(2 * EVENTS, Math.round(PER_VENUE[providerId] * PROTECTED_SHARE));
await Promise.all(PROVIDERS.map(async (providerId) => {
  const total = protectedPerVenue(providerId);
  const picks = Array.from(
    { length: total },
    (_, k) => ({ k, account: accounts[providerId][Math.floor(k * PER_VENUE[providerId] / total)] }),
  );
  const opened = await inParallel(picks, 8, async ({ k, account }) => {
    const role = k < EVENTS ? "TARGET" : k < 2 * EVENTS ? "STOP" : "HOLD";
    const step = role === "TARGET" ? k : role === "STOP" ? k - EVENTS : -1;
    const levels = role === "TARGET"
      ? { ...FAR, takeProfitPrice: String(targetLevel(step)) }
      : role === "STOP"
      ? { ...FAR, stopLossPrice: String(stopLevel(step)) }
      : FAR;
    const position = await openProtectedPosition(setupCtx, account, {
      partnerId: PARTNER_ID,
      intentId: `watch-entry-${account.accountId}`,
      quantity: "0.002",
      levels,
    });
    return { providerId, account, positionId: position.positionId, role, step } satisfies Holder;
  });
  holders.push(...opened);
}));
const positioned = await mark();

// What one account's full read costs at each venue, with and without a protected position, by route.
const readCost: Record<ProviderId, { flat: number; holding: number; check: number; byRoute: [string, number][] }> =
  {} as never;
for (const providerId of PROVIDERS) {
  const holding = holders.find((holder) => holder.providerId === providerId && holder.role === "HOLD")!.account;
  const flat = accounts[providerId].find((account) => !holders.some((holder) => holder.account === account))!;
  const costs: number[] = [];
  let byRoute: [string, number][] = [];
  for (const account of [flat, holding]) {
    const before = (await venueWeights())[providerId];
    const outcome = await reconcileAccountOnce(setupCtx, account, newLeaseOwner());
    if (typeof outcome === "string") throw new Error(`Reading ${account.accountId} for its cost: ${outcome}`);
    const after = (await venueWeights())[providerId];
    byRoute = Object.entries(after.byRoute).map(([route, { weight }]) => [
      route,
      weight - (before.byRoute[route]?.weight ?? 0),
    ]).filter(([, weight]) => (weight as number) > 0) as [string, number][];
    costs.push(byRoute.reduce((sum, [, weight]) => sum + weight, 0));
  }
  const before = (await venueWeights())[providerId];
  await callWithAccount(setupCtx, flat, (venue, credentials) => venue.getPositionSizes(credentials));
  const after = (await venueWeights())[providerId];
  const check = Object.values(after.byRoute).reduce((sum, r) => sum + r.weight, 0) -
    Object.values(before.byRoute).reduce((sum, r) => sum + r.weight, 0);
  readCost[providerId] = {
    flat: costs[0],
    holding: costs[1],
    check,
    byRoute: byRoute.sort((a, b) => b[1] - a[1]),
  };
}

console.log(
  `${thousands(ACCOUNTS)} connected accounts (each its own simulator account) seeded in ${
    seconds(seeded.at - setupStarted.at)
  }; ${holders.length} protected positions opened in ${seconds(positioned.at - seeded.at)}`,
);

// ---------------------------------------------------------------- 1. the keeper starts

// The venues' published limits from here on (the simulators' counts start afresh).
await benchRoute("POST", "/reset", { venueBWeightPerMinute: PUBLISHED.VENUE_B });
const keeperLog = tallyLogger();
const keeper = new AccountPushKeeper({
  ...env.deps,
  logger: keeperLog,
  actor: { kind: "system", job: "account-pushes" },
  requestId: "bench-keeper",
});
const liveCounts = async () => {
  const rows = await db.read.select({ providerId: accountPushes.providerId, live: count() }).from(accountPushes)
    .where(eq(accountPushes.live, true)).groupBy(accountPushes.providerId);
  return Object.fromEntries(PROVIDERS.map((p) => [p, rows.find((row) => row.providerId === p)?.live ?? 0])) as Record<
    ProviderId,
    number
  >;
};
const jobLog = tallyLogger();
const jobCtx: Ctx = {
  ...env.deps,
  logger: jobLog,
  actor: { kind: "system", job: "reconcile" },
  requestId: "bench-job",
};
type JobRun = Awaited<ReturnType<typeof reconcileAccounts>> & { ms: number };
const jobRuns: JobRun[] = [];
const runJob = async () => {
  const started = Date.now();
  const summary = await reconcileAccounts(jobCtx);
  jobRuns.push({ ...summary, ms: Date.now() - started });
};
const keeperStarted = await mark();
// The job's cron (every minute) beside the keeper: a run starts at each minute's turn unless the last still runs.
let cron = JOB_BESIDE;
const cronLoop = (async () => {
  while (cron) {
    await sleep(60_000 - Date.now() % 60_000);
    if (cron) await runJob();
  }
})();
// What the egress_budgets table holds claimed in the windows a minute ending now overlaps, every second.
const claimedMax: Record<ProviderId, number> = { VENUE_A: 0, VENUE_B: 0 };
let sampling = true;
const claimSampler = (async () => {
  while (sampling) {
    const now = Date.now();
    const rows = await db.read.select({
      providerId: egressBudgets.providerId,
      claimed: sql<number>`sum(${egressBudgets.spent})`,
    }).from(egressBudgets).where(and(
      eq(egressBudgets.egress, env.deps.config.egressId),
      gte(egressBudgets.windowStart, now - now % 10_000 - 60_000),
    )).groupBy(egressBudgets.providerId);
    for (const row of rows) {
      const providerId = row.providerId as ProviderId;
      claimedMax[providerId] = Math.max(claimedMax[providerId], Number(row.claimed));
    }
    await sleep(1000);
  }
})();
keeper.start();
const allLiveAfter: Partial<Record<ProviderId, number>> = {};
const liveTimeline: { at: number; live: Record<ProviderId, number> }[] = [];
let live = await liveCounts();
let keysIssuedAt: number | undefined;
while (Date.now() - keeperStarted.at < LIVE_SECONDS * 1000) {
  await sleep(1000);
  live = await liveCounts();
  liveTimeline.push({ at: Date.now() - keeperStarted.at, live });
  for (const providerId of PROVIDERS) {
    if (live[providerId] >= PER_VENUE[providerId]) allLiveAfter[providerId] ??= Date.now() - keeperStarted.at;
  }
  if (PROVIDERS.every((providerId) => allLiveAfter[providerId] !== undefined)) break;
  keysIssuedAt ??= listenKeys((await venueWeights()).VENUE_A, "POST") >= PER_VENUE.VENUE_A ? Date.now() : undefined;
  if (keysIssuedAt !== undefined && Date.now() - keysIssuedAt >= KEYS_SETTLE_SECONDS * 1000) break;
}
const liveWaited = await mark();
const startWeights = await venueWeights();
const coverage = await db.read.select({
  providerId: accountPushes.providerId,
  coversOrders: accountPushes.coversOrders,
  accounts: count(),
}).from(accountPushes).where(eq(accountPushes.live, true)).groupBy(
  accountPushes.providerId,
  accountPushes.coversOrders,
);

// ---------------------------------------------------------------- 2. fills, fired stops, funding

interface Happening {
  kind: "FILL" | "STOP" | "FUNDING";
  providerId: ProviderId;
  clientId: number;
  positionId: string;
  /** Wall clock just before the simulator's control call that made it happen. */
  at: number;
  /** The account's pushes were recorded live when it happened. */
  live: boolean;
  knownAt?: number;
}
const happenings: Happening[] = [];
const liveAccounts = async () =>
  new Set(
    (await db.read.select({ clientId: accountPushes.clientId, providerId: accountPushes.providerId }).from(
      accountPushes,
    )
      .where(eq(accountPushes.live, true))).map((row) => `${row.clientId}:${row.providerId}`),
  );
const moveMarket = (providerId: ProviderId, price: number) =>
  simControl(
    providerId === "VENUE_A" ? venues.urls.venueA : venues.urls.venueB,
    "PUT",
    `/markets/${SIM_MARKET[providerId]}`,
    { markPrice: String(price) },
  );

/** What the database shows of what happened: a position closed, a funding fact recorded. */
async function checkKnown(): Promise<void> {
  const open = happenings.filter((happening) => happening.knownAt === undefined);
  const moves = open.filter((happening) => happening.kind !== "FUNDING");
  if (moves.length) {
    const rows = await db.read.select({ positionId: positions.positionId, closedAt: positions.closedAt })
      .from(positions).where(inArray(positions.positionId, moves.map((happening) => happening.positionId)));
    for (const row of rows) {
      if (row.closedAt === null) continue;
      const happening = moves.find((candidate) => candidate.positionId === row.positionId)!;
      happening.knownAt = Math.max(row.closedAt, happening.at);
    }
  }
  const funding = open.filter((happening) => happening.kind === "FUNDING");
  if (funding.length) {
    const since = Math.min(...funding.map((happening) => happening.at));
    const rows = await db.read.select({
      clientId: resultFacts.clientId,
      providerId: resultFacts.providerId,
      recordedAt: sql<number>`min(${resultFacts.recordedAt})`,
    }).from(resultFacts).where(sql`${resultFacts.kind} = 'FUNDING' AND ${resultFacts.recordedAt} >= ${since}`)
      .groupBy(resultFacts.clientId, resultFacts.providerId);
    const known = new Map(rows.map((row) => [`${row.clientId}:${row.providerId}`, row.recordedAt]));
    for (const happening of funding) {
      const at = known.get(`${happening.clientId}:${happening.providerId}`);
      if (at !== undefined) happening.knownAt = Math.max(at, happening.at);
    }
  }
}
let watching = true;
const watcher = (async () => {
  while (watching) {
    const started = Date.now();
    await checkKnown();
    await sleep(Math.max(0, 100 - (Date.now() - started)));
  }
})();

const eventsStarted = await mark();
const interval = EVENTS_SECONDS * 1000 / EVENTS;
type Step = { at: number; run: () => Promise<void> };
const steps: Step[] = [];
for (const [offset, providerId] of PROVIDERS.entries()) {
  for (let step = 0; step < EVENTS; step++) {
    for (const [kind, role, part] of [["FILL", "TARGET", 0], ["STOP", "STOP", 0.5]] as const) {
      const holder = holders.find((h) => h.providerId === providerId && h.role === role && h.step === step)!;
      steps.push({
        at: step * interval + (part + offset / 4) * interval,
        run: async () => {
          const covered = await liveAccounts();
          const happening: Happening = {
            kind,
            providerId,
            clientId: holder.account.clientId,
            positionId: holder.positionId,
            at: Date.now(),
            live: covered.has(`${holder.account.clientId}:${providerId}`),
          };
          await moveMarket(providerId, kind === "FILL" ? targetLevel(step) + 5 : stopLevel(step) - 5);
          happenings.push(happening);
        },
      });
    }
  }
}
// Funding is paid at one instant to every open position of a market: to every holder not yet closed.
const fundingPaid: Partial<Record<ProviderId, number>> = {};
steps.push({
  at: EVENTS_SECONDS * 1000 / 3,
  run: async () => {
    const covered = await liveAccounts();
    const closed = new Set(happenings.filter((h) => h.kind !== "FUNDING").map((h) => h.positionId));
    const at = Date.now();
    for (const providerId of PROVIDERS) {
      const answer = providerId === "VENUE_A"
        ? await simControl(venues.urls.venueA, "POST", "/funding", { symbol: SIM_MARKET.VENUE_A, rate: "0.0001" })
        : await simControl(venues.urls.venueB, "POST", "/funding", { coin: SIM_MARKET.VENUE_B, rate: "0.0001" });
      fundingPaid[providerId] = answer.payments;
    }
    for (const holder of holders) {
      if (closed.has(holder.positionId)) continue;
      happenings.push({
        kind: "FUNDING",
        providerId: holder.providerId,
        clientId: holder.account.clientId,
        positionId: holder.positionId,
        at,
        live: covered.has(`${holder.account.clientId}:${holder.providerId}`),
      });
    }
  },
});
steps.sort((a, b) => a.at - b.at);
for (const step of steps) {
  await sleep(Math.max(0, eventsStarted.at + step.at - Date.now()));
  await step.run();
}
await sleep(TAIL_SECONDS * 1000);
watching = false;
await watcher;
const eventsEnded = await mark();
const liveAfterEvents = await liveCounts();
cron = false;
await cronLoop;
const runsBeside = jobRuns.length;

// ---------------------------------------------------------------- 3. the sweep

// An hour after the keeper's start every account's last read is older than its sweep interval: the job checks
// the pushed ones cheaply (their positions' sizes) and reads the others whole.
await withTransaction(db, (tx) => tx.update(accountStates).set({ reconciledAt: Date.now() - 2 * 60 * 60_000 }));
const { planOf } = await readPlans(jobCtx);
const plans: Record<ProviderId, Record<ReadPlan | "readHolding", number>> = {
  VENUE_A: { LEAVE: 0, FUNDING: 0, SWEEP: 0, READ: 0, SETTLE: 0, readHolding: 0 },
  VENUE_B: { LEAVE: 0, FUNDING: 0, SWEEP: 0, READ: 0, SETTLE: 0, readHolding: 0 },
};
const holding = new Set(holders.map((holder) => holder.account.accountId));
for (const providerId of PROVIDERS) {
  for (const account of accounts[providerId]) {
    // Settling reads whole too, at once: counted with the whole reads.
    const plan = planOf(account) === "SETTLE" ? "READ" : planOf(account);
    plans[providerId][plan]++;
    if (plan === "READ" && holding.has(account.accountId)) plans[providerId].readHolding++;
  }
}
const sweepStarted = await mark();
while (Date.now() - sweepStarted.at < SWEEP_SECONDS * 1000) {
  await runJob();
  // A run that found the budget down to the share left to news did nothing: the next waits for a window to turn.
  if (jobRuns.at(-1)!.accounts === 0) await sleep(1000);
}
const sweepEnded = await mark();
const liveAfterSweep = await liveCounts();
const sweptRows = await db.read.select({ providerId: accountStates.providerId, swept: count() }).from(accountStates)
  .where(gte(accountStates.reconciledAt, sweepStarted.at)).groupBy(accountStates.providerId);
const swept = Object.fromEntries(PROVIDERS.map((p) => [p, sweptRows.find((row) => row.providerId === p)?.swept ?? 0]));
const finalWeights = await venueWeights();

sampling = false;
await claimSampler;
await checkKnown();
const unknownAtEnd = happenings.filter((happening) => happening.knownAt === undefined);
const stopping = Date.now();
await keeper.stop();
const keeperStopMs = Date.now() - stopping;

// ---------------------------------------------------------------- report

const rows: [string, string, string, string][] = [];
const row = (figure: string, measured: string, target: string, met: boolean | null) =>
  rows.push([figure, measured, target, met === null ? "" : met ? "yes" : "NO"]);

for (const providerId of PROVIDERS) {
  const after = allLiveAfter[providerId];
  const full = coverage.find((c) => c.providerId === providerId && c.coversOrders)?.accounts ?? 0;
  const fillsOnly = coverage.find((c) => c.providerId === providerId && !c.coversOrders)?.accounts ?? 0;
  row(
    `${providerId} watches recorded live`,
    `${
      after !== undefined
        ? `all ${thousands(PER_VENUE[providerId])} after ${seconds(after)}`
        : `${thousands(live[providerId])} of ${thousands(PER_VENUE[providerId])} after ${
          seconds(liveWaited.at - keeperStarted.at)
        }`
    } (${thousands(full)} everything pushed, ${thousands(fillsOnly)} fills only)`,
    "every account",
    after !== undefined,
  );
}
for (const providerId of PROVIDERS) {
  if (allLiveAfter[providerId] !== undefined) continue;
  // The rate of the wait's second half, carried to the accounts left: an extrapolation, labelled as one.
  const half = liveTimeline.filter((sample) => sample.at >= (liveWaited.at - keeperStarted.at) / 2);
  const gained = half.length > 1 ? half.at(-1)!.live[providerId] - half[0].live[providerId] : 0;
  const perMinute = half.length > 1 ? gained / ((half.at(-1)!.at - half[0].at) / 60_000) : 0;
  row(
    `${providerId} all watches live, extrapolated`,
    perMinute > 0
      ? `${((PER_VENUE[providerId] - live[providerId]) / perMinute).toFixed(0)} min more at the wait's last ${
        perMinute.toFixed(0)
      }/min`
      : `never at the wait's last rate (${gained} more in its second half)`,
    `(floor: ${
      seconds(PER_VENUE[providerId] / env.deps.egressBudgets[providerId].perMinute * 60_000)
    }, 1 weight a key)`,
    null,
  );
}
row(
  "VENUE_A listen keys: weight while starting",
  `${thousands(listenKeys(startWeights.VENUE_A, "POST"))} (POST) of ${
    thousands(Object.values(startWeights.VENUE_A.byRoute).reduce((sum, r) => sum + r.weight, 0))
  } served; keepalive ${thousands(PER_VENUE.VENUE_A / 30)}/min once all live`,
  `1 per key (${thousands(PER_VENUE.VENUE_A)})`,
  null,
);

const latency = (list: Happening[]) => {
  const tail = eventsEnded.at - Math.max(...list.map((h) => h.at));
  const delay = (h: Happening) => h.knownAt === undefined ? Infinity : h.knownAt - h.at;
  const shown = (samples: number[], q: number) => {
    const value = percentile(samples, q);
    return Number.isFinite(value) ? seconds(value) : `> ${seconds(tail)}`;
  };
  const samples = list.map(delay);
  const never = samples.filter((s) => !Number.isFinite(s)).length;
  const live = list.filter((h) => h.live).map(delay);
  const liveText = live.length < list.length
    ? `; ${list.length - live.length} not live when it happened${
      live.length ? `, the ${live.length} live: p50 ${shown(live, 0.5)}, p99 ${shown(live, 0.99)}` : ""
    }`
    : "";
  return {
    p99: percentile(samples, 0.99),
    text: `p50 ${shown(samples, 0.5)}, p99 ${shown(samples, 0.99)} (n=${list.length}, ${never} not known within ${
      seconds(tail)
    }${liveText})`,
  };
};
for (const providerId of PROVIDERS) {
  for (const [kind, label, limitMs] of [["FILL", "fill", 5000], ["STOP", "fired stop", 5000]] as const) {
    const list = happenings.filter((h) => h.providerId === providerId && h.kind === kind);
    const { p99, text } = latency(list);
    row(`${providerId} ${label} known`, text, "p99 <= 5 s", p99 <= limitMs);
  }
}
/**
 * The weight of reading one account's funding (VENUE_A's income history, VENUE_B's userFunding): a payment to
 * every holder at once is known no sooner than their reads fit the budget, whatever the service does.
 */
const FUNDING_READ_WEIGHT: Record<ProviderId, number> = { VENUE_A: 30, VENUE_B: 20 };
for (const providerId of PROVIDERS) {
  const list = happenings.filter((h) => h.providerId === providerId && h.kind === "FUNDING");
  const { p99, text } = latency(list);
  const paid = fundingPaid[providerId] ?? 0;
  const floorMinutes = paid * FUNDING_READ_WEIGHT[providerId] / env.deps.egressBudgets[providerId].perMinute;
  row(
    `${providerId} funding payment known`,
    `${text}; ${paid} paid at once`,
    `p99 <= 60 s (issue: seconds to a minute; floor ${floorMinutes.toFixed(1)} min: ${paid} reads of ${
      FUNDING_READ_WEIGHT[providerId]
    } at the whole budget)`,
    p99 <= 60_000,
  );
}

const measuredFrom = keeperStarted.at;
const measuredTo = sweepEnded.at;
let refusals = 0;
for (const providerId of PROVIDERS) {
  const share = env.deps.egressBudgets[providerId].perMinute;
  const service = rollingMinuteMax(spent.perSecond[providerId]);
  row(
    `${providerId} weight, service's busiest minute`,
    `${thousands(service)} (${thousands(spent.total(providerId, measuredFrom, measuredTo))} spent in ${
      seconds(measuredTo - measuredFrom)
    }; egress_budgets claimed at most ${thousands(claimedMax[providerId])}; ${
      thousands(spent.refused[providerId])
    } requests held back)`,
    `<= ${thousands(share)} (85 % of ${thousands(PUBLISHED[providerId])})`,
    Math.max(service, claimedMax[providerId]) <= share,
  );
  const venue = finalWeights[providerId];
  const venueRolling = rollingMinuteMax(new Map(Object.entries(venue.perSecond).map(([s, w]) => [Number(s), w])));
  const venueFixed = Math.max(0, ...Object.values(venue.headerPerMinute));
  row(
    `${providerId} weight, venue's busiest minute`,
    providerId === "VENUE_A"
      ? `${thousands(venueFixed)} by its own count (X-MBX-USED-WEIGHT-1M), ${thousands(venueRolling)} in any 60 s`
      : `${thousands(venueRolling)} in any 60 s`,
    `<= ${thousands(PUBLISHED[providerId])}`,
    Math.max(venueFixed, venueRolling) <= PUBLISHED[providerId],
  );
  refusals += venue.refused[429] + venue.refused[418];
}
row(
  "429 / 418 answered by the venues",
  PROVIDERS.map((p) => `${p} ${finalWeights[p].refused[429]} / ${finalWeights[p].refused[418]}`).join(", "),
  "0",
  refusals === 0,
);
for (const providerId of PROVIDERS) {
  const cost = readCost[providerId];
  row(
    `${providerId} weight of one account's full read`,
    `${cost.flat} flat, ${cost.holding} holding a protected position; the hourly check of a pushed account ${cost.check}`,
    providerId === "VENUE_A" ? "(issue: ~120)" : "(issue: ~85)",
    null,
  );
}
// What the job's plan asks of the budget a minute: accounts it reads whole are read at every run (every minute),
// the pushed ones it checks cheaply once an hour.
for (const providerId of PROVIDERS) {
  const plan = plans[providerId];
  const cost = readCost[providerId];
  const budget = env.deps.egressBudgets[providerId].perMinute;
  const demand = plan.readHolding * cost.holding + (plan.READ - plan.readHolding) * cost.flat +
    plan.SWEEP * cost.check / 60;
  row(
    `${providerId} reconcile job's demand a minute`,
    `${thousands(demand)} weight (${(demand / budget).toFixed(1)}× the budget): ${
      thousands(plan.READ)
    } accounts read whole at every run, ${thousands(plan.SWEEP)} checked hourly`,
    `<= ${thousands(budget)}`,
    demand <= budget,
  );
}

// A sweep is what the job's plan asks of every account: a full read (not live, an order at work, a read owed) or
// the cheap check of a pushed one. Its time at the budget's minute, from the costs measured above; and, as a check,
// the accounts the job completed in the window per weight the service spent, carried to the budget's minute (a short
// window starts with whatever room the last minute left).
for (const providerId of PROVIDERS) {
  const plan = plans[providerId];
  const cost = readCost[providerId];
  const budget = env.deps.egressBudgets[providerId].perMinute;
  const sweepWeight = plan.readHolding * cost.holding + (plan.READ - plan.readHolding) * cost.flat +
    plan.SWEEP * cost.check;
  const hours = sweepWeight / budget / 60;
  const weight = spent.total(providerId, sweepStarted.at, sweepEnded.at);
  const measured = weight > 0
    ? `; measured: ${thousands(swept[providerId])} accounts done for ${thousands(weight)} weight in ${
      seconds(sweepEnded.at - sweepStarted.at)
    } -> ${(budget * swept[providerId] / weight).toFixed(1)}/min`
    : "; measured: no weight was free in the window";
  row(
    `${providerId} full sweep of ${thousands(PER_VENUE[providerId])} accounts`,
    `${hours.toFixed(1)} h with the budget to it alone: ${thousands(plan.READ)} full reads (${
      thousands(plan.readHolding)
    } holding a position; not live, or an order at work) + ${thousands(plan.SWEEP)} cheap checks = ${
      thousands(sweepWeight)
    } weight at ${thousands(budget)}/min${measured}`,
    "<= 1 h",
    hours <= 1,
  );
}

const widths = [0, 1, 2, 3].map((i) =>
  Math.max(...rows.map((r) => r[i].length), ["figure", "measured", "target", "met?"][i].length)
);
const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i])).join(" | ");
console.log(
  `\nAt the venues' published limits, one egress id, ${
    thousands(ACCOUNTS)
  } accounts (${holders.length} holding a protected position); ${EVENTS} fills and ${EVENTS} fired stops per venue over ${EVENTS_SECONDS} s, funding paid once at ${
    Math.round(EVENTS_SECONDS / 3)
  } s, ${TAIL_SECONDS} s more to know the last:\n`,
);
console.log(line(["figure", "measured", "target", "met?"]));
console.log(widths.map((w) => "-".repeat(w)).join("-|-"));
for (const r of rows) console.log(line(r));

console.log("\nWhere the weight went (served by the venues, from the keeper's start to the sweep's end):");
for (const providerId of PROVIDERS) {
  const routes = Object.entries(finalWeights[providerId].byRoute).sort((a, b) => b[1].weight - a[1].weight);
  const total = routes.reduce((sum, [, r]) => sum + r.weight, 0);
  console.log(
    `  ${providerId} (${thousands(total)}): ${
      routes.slice(0, 7).map(([route, r]) => `${route} ${thousands(r.weight)} (${thousands(r.requests)}×)`).join(", ")
    }`,
  );
  console.log(
    `    one full read: ${readCost[providerId].byRoute.map(([route, weight]) => `${route} ${weight}`).join(", ")}`,
  );
}
console.log("\nPhases (machine load is the 1-minute load average at the end of each):");
console.log(`  set-up: ${machine(setupStarted, positioned)}`);
console.log(`  keeper start, ${seconds(liveWaited.at - keeperStarted.at)}: ${machine(keeperStarted, liveWaited)}`);
for (const sample of liveTimeline.filter((_, i, all) => i % 15 === 14 || i === all.length - 1)) {
  console.log(
    `    live after ${seconds(sample.at)}: VENUE_A ${thousands(sample.live.VENUE_A)}, VENUE_B ${
      thousands(sample.live.VENUE_B)
    }`,
  );
}
const liveText = (counts: Record<ProviderId, number>) =>
  PROVIDERS.map((p) => `${p} ${thousands(counts[p])}`).join(", ");
console.log(
  `  events, ${seconds(eventsEnded.at - eventsStarted.at)}: ${machine(eventsStarted, eventsEnded)}; live at the end: ${
    liveText(liveAfterEvents)
  }`,
);
const runText = (run: JobRun) =>
  `${thousands(run.accounts)} done (${thousands(run.swept)} checked cheaply, ${
    thousands(run.sweptAndRead)
  } of them then read), ${thousands(run.failed)} failed, ${thousands(run.leftToPushes)} left to pushes, in ${
    seconds(run.ms)
  }`;
/** The sweep's runs, one line: most find the budget at the share left to news and do nothing. */
const sweepRunsText = (runs: JobRun[]) => {
  const total = (field: "accounts" | "swept" | "sweptAndRead" | "failed" | "fundingRead") =>
    thousands(runs.reduce((sum, run) => sum + run[field], 0));
  return `${runs.length} (${runs.filter((run) => run.accounts === 0).length} with no room), ${
    total("accounts")
  } done (${total("swept")} checked cheaply, ${total("sweptAndRead")} of them then read, ${
    total("fundingRead")
  } funding reads), ${total("failed")} failed`;
};
console.log(
  `  job runs beside the keeper, every minute until the events' end: ${
    JOB_BESIDE ? jobRuns.slice(0, runsBeside).map(runText).join("; ") || "none" : "off (WATCH_JOB=0)"
  }`,
);
console.log(
  `  sweep, ${seconds(sweepEnded.at - sweepStarted.at)}: ${machine(sweepStarted, sweepEnded)}; plans: ${
    PROVIDERS.map((p) => `${p} ${plans[p].READ} read, ${plans[p].SWEEP} check, ${plans[p].LEAVE} leave`).join("; ")
  }; job run(s): ${
    sweepRunsText(jobRuns.slice(runsBeside))
  }; accounts done: VENUE_A ${swept.VENUE_A}, VENUE_B ${swept.VENUE_B}; live at the end: ${liveText(liveAfterSweep)}`,
);
console.log(
  `  still not known at the sweep's end: ${
    PROVIDERS.flatMap((p) =>
      (["FILL", "STOP", "FUNDING"] as const).map((kind) =>
        `${p} ${kind.toLowerCase()} ${unknownAtEnd.filter((h) => h.providerId === p && h.kind === kind).length}`
      )
    ).join(", ")
  }`,
);
console.log(`  keeper stopped in ${seconds(keeperStopMs)}`);
console.log("\nThe keeper's log, counted:");
for (const [key, n] of [...keeperLog.counts].sort((a, b) => b[1] - a[1]).slice(0, 10)) {
  console.log(`  ${thousands(n)}× ${key}`);
}
console.log("The reconcile job's log, counted:");
for (const [key, n] of [...jobLog.counts].sort((a, b) => b[1] - a[1]).slice(0, 6)) {
  console.log(`  ${thousands(n)}× ${key}`);
}

await env.close();
await venues.stop();
