/**
 * `GET /v1/users/:id/account` lists the conditional orders that protect a
 * position (stops and targets), which both venues keep apart from the regular
 * open orders: VENUE_A on its algo endpoints, VENUE_B as trigger orders. Real
 * simulators over HTTP, through the partner API.
 */
import assert from "node:assert/strict";
import { providerAccounts } from "../../db/schema.ts";
import { credentialsOf } from "../../domain/accounts/load_account.ts";
import { expectJson } from "../_helpers/http.ts";
import { connectedVenueA, connectWallet, openPage, setUp, walletSetUp } from "../connect/connect_fixture.ts";

interface ViewOrder {
  clientOrderId: string | null;
  type: string;
  status: string;
  quantity: number;
  triggerPrice: number | null;
  reduceOnly: boolean;
  providerId: string;
}

Deno.test("balance view: a VENUE_A position's stop and target are listed with triggerPrice and reduceOnly", async () => {
  const { env, partner } = await setUp();
  try {
    await connectedVenueA(env, partner);
    const [account] = await env.deps.db.read.select().from(providerAccounts);
    const venue = env.deps.venues.VENUE_A;
    const credentials = credentialsOf(account);
    await venue.placeOrder(credentials, {
      symbol: "BTCUSDT",
      side: "BUY",
      type: "MARKET",
      quantity: "0.002",
      reduceOnly: false,
      clientOrderId: "entry",
    });
    await venue.placeOrder(credentials, {
      symbol: "BTCUSDT",
      side: "BUY",
      type: "LIMIT",
      quantity: "0.002",
      price: "50000",
      reduceOnly: false,
      clientOrderId: "resting",
    });
    const protect = (kind: "STOP_LOSS" | "TAKE_PROFIT", triggerPrice: string, clientOrderId: string) =>
      venue.placeProtection(credentials, {
        symbol: "BTCUSDT",
        kind,
        side: "SELL",
        triggerPrice,
        quantity: "0.002",
        clientOrderId,
      });
    await protect("STOP_LOSS", "60000", "sl-1");
    await protect("TAKE_PROFIT", "70000", "tp-1");

    const view = await expectJson(await partner.call("GET", "/v1/users/ana/account?providerId=VENUE_A"), 200);
    assert.equal(view.positions.length, 1);
    const orders = view.orders as ViewOrder[];
    assert.deepEqual(
      orders.map((o) => [o.clientOrderId, o.type, o.status, o.quantity, o.triggerPrice, o.reduceOnly, o.providerId]),
      [
        ["resting", "LIMIT", "NEW", 0.002, null, false, "VENUE_A"],
        ["sl-1", "STOP_MARKET", "TRIGGER_PENDING", 0.002, 60000, true, "VENUE_A"],
        ["tp-1", "TAKE_PROFIT_MARKET", "TRIGGER_PENDING", 0.002, 70000, true, "VENUE_A"],
      ],
    );
    // Positions alone do not read the conditional orders.
    const positions = await expectJson(await partner.call("GET", "/v1/users/ana/positions?providerId=VENUE_A"), 200);
    assert.equal(positions.positions.length, 1);
  } finally {
    await env.close();
  }
});

Deno.test("balance view: a VENUE_B position's trigger orders are listed with triggerPrice and reduceOnly", async () => {
  const { env, partner, wallet } = await walletSetUp();
  try {
    await connectWallet((await openPage(env, partner)).request, wallet);
    const [account] = await env.deps.db.read.select().from(providerAccounts);
    const venue = env.deps.venues.VENUE_B;
    const credentials = credentialsOf(account);
    await venue.placeOrder(credentials, {
      symbol: "SOLUSDC",
      side: "BUY",
      type: "MARKET",
      quantity: "10",
      reduceOnly: false,
      clientOrderId: "entry",
    });
    await venue.placeProtection(credentials, {
      symbol: "SOLUSDC",
      kind: "STOP_LOSS",
      side: "SELL",
      triggerPrice: "140",
      quantity: "10",
      clientOrderId: "sl-1",
    });

    const view = await expectJson(await partner.call("GET", "/v1/users/ana/account?providerId=VENUE_B"), 200);
    assert.equal(view.positions.length, 1);
    const orders = view.orders as ViewOrder[];
    assert.deepEqual(
      orders.map((o) => [o.type, o.status, o.quantity, o.triggerPrice, o.reduceOnly, o.providerId]),
      [["STOP_MARKET", "TRIGGER_PENDING", 10, 140, true, "VENUE_B"]],
    );
  } finally {
    await env.close();
  }
});
