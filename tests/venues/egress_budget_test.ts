/**
 * Request weight per venue and egress, shared in the database: instances
 * together stay within a window's share, a spent budget refuses before the
 * venue is asked, a fan-out waits instead, and the adapters spend what the
 * venue counts.
 */
import assert from "node:assert/strict";
import { EgressBudget, waitingForBudget } from "../../domain/venues/egress_budget.ts";
import { type RequestBudget, VenueError } from "../../venues/types.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { connectClient, startSim } from "./venue_b_fixture.ts";

const rateLimited = (error: unknown) => error instanceof VenueError && error.kind === "RATE_LIMITED";

Deno.test("egress budget: two instances over one database spend one share a minute, then both are refused", async () => {
  const env = await startTestEnv();
  try {
    let now = 1_800_000_000_000;
    const options = { now: () => now };
    // 1,200 a minute: 1,020 at 85 %.
    const first = new EgressBudget(env.deps.db, "VENUE_B", "nat-1", 1200, options);
    const second = new EgressBudget(env.deps.db, "VENUE_B", "nat-1", 1200, options);
    const elsewhere = new EgressBudget(env.deps.db, "VENUE_B", "nat-2", 1200, options);
    assert.equal(first.perMinute, 1020);
    let spent = 0;
    for (;;) {
      const budget = spent % 2 ? first : second;
      try {
        await budget.spend(1);
        spent++;
      } catch (error) {
        assert.ok(rateLimited(error), String(error));
        assert.ok((error as VenueError).detail.retryAfterMs! <= 10_000);
        break;
      }
    }
    assert.ok(spent <= 1020, `${spent} spent in one minute`);
    assert.ok(spent >= 1000, `${spent}: a claim left idle in one instance wastes little`);
    await assert.rejects(first.spend(17), rateLimited);
    await elsewhere.spend(100);

    now += 60_000;
    await assert.rejects(second.spend(1), rateLimited, "a minute later the burst's window still counts");
    now += 10_000;
    await first.spend(1);
    await second.spend(1000);
  } finally {
    await env.close();
  }
});

Deno.test("egress budget: background work stops at the two thirds of the minute left to news, which news may still spend", async () => {
  const env = await startTestEnv();
  try {
    let now = 1_800_000_000_000;
    // 1,200 a minute: 1,020 at 85 %, of which 680 are left to news.
    const job = new EgressBudget(env.deps.db, "VENUE_B", "nat-1", 1200, { now: () => now });
    const keeper = new EgressBudget(env.deps.db, "VENUE_B", "nat-1", 1200, { now: () => now });
    let spentInBackground = 0;
    while (await job.backgroundMayGoOn()) {
      await job.spend(10);
      spentInBackground += 10;
    }
    assert.ok(spentInBackground >= 330 && spentInBackground <= 350, `${spentInBackground} spent by background work`);
    assert.equal(await keeper.backgroundMayGoOn(), false, "the other instance's background work stops too");
    await keeper.spend(670); // news
    now += 70_000; // the burst's windows are out of any minute that ends now
    assert.equal(await job.backgroundMayGoOn(), true, "a new minute: background work goes on");
  } finally {
    await env.close();
  }
});

Deno.test("egress budget: within waitingForBudget a spend waits for a window to turn instead of being refused", async () => {
  const env = await startTestEnv();
  try {
    let now = 1_800_000_000_000;
    // 1,200 a minute: 1,020 at 85 %; windows of 100 ms, so a refused spend looks again a tenth of a second later.
    const budget = new EgressBudget(env.deps.db, "VENUE_B", "nat-1", 1200, { now: () => now, windowMs: 100 });
    await budget.spend(1020);
    await assert.rejects(budget.spend(10), rateLimited, "refused outside");
    let granted = false;
    const waiting = waitingForBudget(new AbortController().signal, () => budget.spend(10)).then(() => granted = true);
    await new Promise((resolve) => setTimeout(resolve, 250));
    assert.equal(granted, false, "still waiting while the minute is spent");
    now += 60_100; // the spent window leaves the minute
    await waiting;

    await budget.spend(1000);
    const stop = new AbortController();
    const stopped = waitingForBudget(stop.signal, () => budget.spend(20));
    stop.abort();
    await assert.rejects(stopped, rateLimited, "a stop ends the wait: refused");
  } finally {
    await env.close();
  }
});

Deno.test("egress budget: a burst of concurrent spends gets the minute's whole share", async () => {
  const env = await startTestEnv();
  try {
    const now = 1_800_000_000_000;
    // 2,400 a minute: 2,040 at 85 %.
    const budget = new EgressBudget(env.deps.db, "VENUE_A", "nat-1", 2400, { now: () => now });
    const burst = await Promise.allSettled(Array.from({ length: 2100 }, () => budget.spend(1)));
    const granted = burst.filter((outcome) => outcome.status === "fulfilled").length;
    assert.equal(granted, 2040, "every unit of the share is spent, none twice");
    assert.ok(
      burst.every((outcome) => outcome.status === "fulfilled" || rateLimited(outcome.reason)),
      "the rest are refused as rate limited",
    );
  } finally {
    await env.close();
  }
});

Deno.test("egress budget: a spend whose claim is in flight while the window turns is granted in the new window", async () => {
  const env = await startTestEnv();
  try {
    let now = 1_800_000_000_000;
    const budget = new EgressBudget(env.deps.db, "VENUE_A", "nat-1", 2400, { now: () => now });
    const spending = budget.spend(1);
    now += 10_000; // the window turns before the claim's transaction answers
    await spending;
  } finally {
    await env.close();
  }
});

Deno.test("egress budget: a fan-out's reservation waits for the next window instead of being refused", async () => {
  const env = await startTestEnv();
  try {
    // Two a minute: the third reservation waits for the first window to leave the minute.
    let now = 1_800_000_000_000;
    // Short windows keep the real wait of the retry short; the minute is the venue's.
    const budget = new EgressBudget(env.deps.db, "VENUE_B", "nat-1", 3, { now: () => now, windowMs: 50 });
    assert.equal(budget.perMinute, 2);
    await budget.reserve(1);
    await budget.spend(1);
    now += 30_000;
    await budget.reserve(1);
    await budget.spend(1);
    let granted = false;
    const third = budget.reserve(1).then(() => granted = true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(granted, false, "no room in the minute: it waits");
    now += 31_000;
    await third;
    await budget.spend(1);
  } finally {
    await env.close();
  }
});

Deno.test("VENUE_B adapter spends what the venue counts, and a refused budget sends nothing", async () => {
  await using sim = startSim();
  const spends: number[] = [];
  let open = true;
  const budget: RequestBudget = {
    spend(weight) {
      if (!open) return Promise.reject(new VenueError("RATE_LIMITED", "spent", { providerId: "VENUE_B" }));
      spends.push(weight);
      return Promise.resolve();
    },
  };
  const { adapter, credentials } = await connectClient(sim, { adapter: { budget } });
  spends.length = 0;
  await adapter.getOrderBook("BTCUSDC", 20);
  assert.deepEqual(spends, [20, 2], "the markets once (an info request of 20), then l2Book (2)");
  spends.length = 0;
  const order = { symbol: "BTCUSDC", side: "BUY", type: "LIMIT", quantity: "0.001", price: "50000" } as const;
  await adapter.placeOrder(credentials, { ...order, reduceOnly: false, clientOrderId: "budget-1" });
  assert.ok(spends.includes(1), `an order action weighs 1: ${spends}`);

  open = false;
  await assert.rejects(
    adapter.placeOrder(credentials, { ...order, reduceOnly: false, clientOrderId: "budget-2" }),
    rateLimited,
  );
  open = true;
  assert.equal(await adapter.getOrder(credentials, "BTCUSDC", "budget-2"), null, "the refused order never left");
});

Deno.test("egress budget: weight charged after an answer is counted even past the minute's room, never refused", async () => {
  const env = await startTestEnv();
  try {
    const now = 1_800_000_000_000;
    const first = new EgressBudget(env.deps.db, "VENUE_B", "nat-1", 1200, { now: () => now });
    const second = new EgressBudget(env.deps.db, "VENUE_B", "nat-1", 1200, { now: () => now });
    await first.spend(1000);
    // A history read's items, known once it answered: more than the 20 left.
    await first.charge(100);
    await assert.rejects(second.spend(1), rateLimited, "the other instance finds the minute overdrawn");
    await assert.rejects(first.spend(1), rateLimited);
  } finally {
    await env.close();
  }
});
