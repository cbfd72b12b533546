/** A filled entry opens a position whose stop and targets are placed reduce-only at the VENUE_A simulator. */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { events, intents, positions } from "../../db/schema.ts";
import { credentialsOf } from "../../domain/accounts/load_account.ts";
import { openPositionFromFill, protectPosition, takeProfitQuantities } from "../../domain/execution/protection.ts";
import { sendIntent } from "../../domain/execution/send_intent.ts";
import { expectJson, operator } from "../_helpers/http.ts";
import { readyClient } from "../setup/setup_fixture.ts";
import { anaAtVenueA, engineCtx } from "./execution_fixture.ts";

Deno.test("protection: targets split the position on the step grid and close exactly all of it", () => {
  const thirds = [{ price: "1", share: "0.33" }, { price: "2", share: "0.33" }, { price: "3", share: "0.34" }];
  assert.deepEqual(takeProfitQuantities("0.005", thirds, "0.001").map((t) => t.quantity), ["0.001", "0.001", "0.003"]);
  assert.deepEqual(
    takeProfitQuantities("0.002", thirds, "0.001").map((t) => t.quantity),
    ["0.002"],
    "targets that round to nothing leave their share to the last",
  );
});

Deno.test("protection: stop and targets are placed reduce-only and the position is PROTECTED", async () => {
  const { env, partner } = await readyClient();
  try {
    const { account, draft, record } = await anaAtVenueA(env, partner.partnerId);
    const entry = await sendIntent(engineCtx(env), await record(draft("entry-prot-1", { quantity: "0.004" })), account);
    assert.equal(entry.status, "FILLED");
    const plan = {
      stopLossPrice: "60000",
      takeProfits: [{ price: "67000", share: "0.5" }, { price: "69000", share: "0.5" }],
      autoBreakEven: true,
      signalId: null,
    };
    const opened = await openPositionFromFill(engineCtx(env), entry, plan);
    assert.equal(opened.protectionStatus, "UNKNOWN");
    const protectedPosition = await protectPosition(engineCtx(env), opened, account);
    assert.equal(protectedPosition.protectionStatus, "PROTECTED", protectedPosition.protectionReason ?? "");

    const atVenue = await env.deps.venues.VENUE_A.listProtections(credentialsOf(account), "BTCUSDT");
    assert.deepEqual(
      atVenue.map((order) => [order.type, order.side, order.triggerPrice, order.quantity, order.reduceOnly]).sort(),
      [
        ["STOP_MARKET", "SELL", "60000.00", "0.004", true],
        ["TAKE_PROFIT_MARKET", "SELL", "67000.00", "0.002", true],
        ["TAKE_PROFIT_MARKET", "SELL", "69000.00", "0.002", true],
      ].sort(),
    );
    const feed = await env.deps.db.read.select().from(events).where(eq(events.eventType, "position.opened"));
    assert.equal(feed.length, 1);
  } finally {
    await env.close();
  }
});

Deno.test("protection: a stop the venue refuses leaves the position PROTECTION_DEGRADED, with its event", async () => {
  const { env, partner } = await readyClient();
  try {
    const { account, draft, record } = await anaAtVenueA(env, partner.partnerId);
    const entry = await sendIntent(engineCtx(env), await record(draft("entry-prot-2")), account);
    // Below the market's lowest price (556.80): the venue refuses it.
    const plan = { stopLossPrice: "500", takeProfits: [], autoBreakEven: false, signalId: null };
    const position = await protectPosition(
      engineCtx(env),
      await openPositionFromFill(engineCtx(env), entry, plan),
      account,
    );
    assert.equal(position.protectionStatus, "PROTECTION_DEGRADED");
    assert.match(position.protectionReason!, /stop loss 500 \(recusada, INVALID_ORDER\)/);
    const degraded = await env.deps.db.read.select().from(events).where(eq(events.eventType, "protection.degraded"));
    assert.equal(degraded.length, 1);
  } finally {
    await env.close();
  }
});

Deno.test("protection: a stop the market has already crossed is executed at once, never left missing", async () => {
  const { env, partner } = await readyClient();
  try {
    const { account, draft, record } = await anaAtVenueA(env, partner.partnerId);
    const entry = await sendIntent(engineCtx(env), await record(draft("entry-prot-3")), account);
    // A long's stop above the market would fire at once: the venue refuses to place it, so the service sells now.
    const plan = { stopLossPrice: "70000", takeProfits: [], autoBreakEven: false, signalId: null };
    const position = await protectPosition(
      engineCtx(env),
      await openPositionFromFill(engineCtx(env), entry, plan),
      account,
    );
    const legs = await env.deps.db.read.select().from(intents).where(eq(intents.positionId, position.positionId));
    assert.deepEqual(
      legs.map((leg) => [leg.intentId.split(":").slice(1).join(":"), leg.orderType, leg.status, leg.errorCode]),
      [
        ["STOP_LOSS:1", "STOP_MARKET", "REJECTED", "TRIGGER_CROSSED"],
        ["STOP_LOSS:1:NOW", "MARKET", "FILLED", null],
      ],
    );
    assert.deepEqual((await env.deps.venues.VENUE_A.getAccount(credentialsOf(account))).positions, []);
    // The reconciliation finds the position gone at the venue and closes it, once.
    await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200);
    const [closed] = await env.deps.db.read.select().from(positions)
      .where(eq(positions.positionId, position.positionId));
    assert.equal(closed.status, "CLOSED");
    const announced = await env.deps.db.read.select().from(events).where(eq(events.eventType, "position.closed"));
    assert.equal(announced.length, 1);
  } finally {
    await env.close();
  }
});
