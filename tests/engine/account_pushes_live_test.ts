/**
 * The keeper of the venues' account pushes against the VENUE_B simulator's
 * WebSocket: with the keeper running and the reconcile job never run after
 * the set-up, a target that fills and a stop that fires are known to the
 * service (break-even, then the position closed) from the venue's pushes
 * alone; the account is recorded as pushed, and stops being pushed when the
 * keeper stops.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { accountPushes } from "../../db/schema.ts";
import { AccountPushKeeper } from "../../domain/execution/account_pushes.ts";
import { expectJson, operator } from "../_helpers/http.ts";
import { signalB } from "../execution/execution_fixture.ts";
import { anaTradingAtVenueB } from "./venue_b_fixture.ts";

/** Waits for `check` to hold: a liveness wait (pushes are asynchronous), never a measure of speed. */
async function eventually<T>(what: string, check: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`Never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

Deno.test("account pushes: fills and a fired stop at VENUE_B are known from the venue's pushes, no reconcile run", async () => {
  const { env, client, market, position } = await anaTradingAtVenueB();
  const keeper = new AccountPushKeeper({
    ...env.deps,
    actor: { kind: "system", job: "account-pushes" },
    requestId: "t",
  });
  try {
    keeper.start();
    const pushState = async () =>
      (await env.deps.db.read.select().from(accountPushes).where(eq(accountPushes.clientId, client.id)))[0];
    const live = await eventually("the account's pushes recorded as live", async () => {
      await keeper.tick();
      const state = await pushState();
      return state?.live && state;
    });
    assert.deepEqual([live.providerId, live.coversOrders, live.coversFunding], ["VENUE_B", true, true]);

    const summary = await expectJson(await operator(env, "POST", "/operator/v1/signals", signalB("sig-push-1")), 200);
    assert.equal(summary.dispatched, 1, JSON.stringify(summary));
    const opened = await position();
    assert.equal(opened.protectionStatus, "PROTECTED", opened.protectionReason ?? "");

    await market("67200"); // the first target fills at the venue
    const moved = await eventually("the first target's fill read from a push", async () => {
      const current = await position();
      return current.breakEvenDone && current;
    });
    assert.equal(moved.stopLossPrice, moved.entryPrice, "the stop moved to break-even");

    await market(moved.entryPrice); // back to the entry: the break-even stop fires
    const closed = await eventually("the fired stop read from a push", async () => {
      const current = await position();
      return current.status === "CLOSED" && current;
    });
    assert.equal(closed.status, "CLOSED");

    await keeper.stop();
    assert.equal((await pushState()).live, false, "a stopped keeper leaves the account to the reconcile job");
  } finally {
    await keeper.stop();
    await env.close();
  }
});
