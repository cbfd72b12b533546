/** The partner's intent routes: list, read from records, and reconcile (never resends; reports orphans). */
import assert from "node:assert/strict";
import { sendIntent } from "../../domain/execution/send_intent.ts";
import { createPartner, expectError, expectJson } from "../_helpers/http.ts";
import { credentialsOf } from "../../domain/accounts/load_account.ts";
import { ik, readyClient } from "../setup/setup_fixture.ts";
import { anaAtVenueA, engineCtx, simulatorFault } from "./execution_fixture.ts";

Deno.test("intent routes: an uncertain entry is listed, read from records and settled by reconcile", async () => {
  const { env, partner } = await readyClient();
  try {
    const { account, draft, record } = await anaAtVenueA(env, partner.partnerId);
    await simulatorFault(env, "LOSE_RESPONSE");
    await sendIntent(engineCtx(env), await record(draft("entry-0001")), account);
    await simulatorFault(env, "NONE");
    // An order placed at the venue by someone else: the reconciliation reports it.
    await env.deps.venues.VENUE_A.placeOrder(credentialsOf(account), {
      symbol: "ETHUSDT",
      side: "BUY",
      type: "LIMIT",
      quantity: "0.1",
      price: "3000",
      timeInForce: "GTC",
      reduceOnly: false,
      clientOrderId: "placed-by-hand",
    });

    const open = await expectJson(await partner.call("GET", "/v1/users/ana/intents"), 200);
    assert.deepEqual(open.intents.map((i: { intentId: string; status: string }) => [i.intentId, i.status]), [[
      "entry-0001",
      "UNCERTAIN",
    ]]);
    const read = await expectJson(
      await partner.call("GET", "/v1/orders/entry-0001?externalUserId=ana&providerId=VENUE_A"),
      200,
    );
    assert.equal(read.status, "UNCERTAIN");
    assert.equal(read.orderId, null, "read from records: the venue is not asked");

    const body = { externalUserId: "ana", providerId: "VENUE_A" };
    const reconciled = await expectJson(
      await partner.call("POST", "/v1/orders/entry-0001/reconcile", { body, headers: ik() }),
      200,
    );
    assert.equal(reconciled.intent.status, "FILLED");
    assert.ok(reconciled.intent.reconciledAt);
    assert.deepEqual(
      { ...reconciled.reconciliation, details: reconciled.reconciliation.details.map((d: { kind: string }) => d.kind) },
      { scanned: 1, resolved: 1, stillUncertain: 0, orphanPositions: 0, orphanOrders: 1, details: ["ORPHAN_ORDER"] },
    );
    const snapshot = await env.deps.venues.VENUE_A.getAccount(credentialsOf(account));
    assert.equal(snapshot.positions[0].quantity, "0.002", "never resent");
    assert.deepEqual((await expectJson(await partner.call("GET", "/v1/users/ana/intents"), 200)).intents, []);
    const all = await expectJson(await partner.call("GET", "/v1/users/ana/intents?status=ALL&limit=1"), 200);
    assert.equal(all.intents[0].status, "FILLED");

    await expectError(
      await partner.call("GET", "/v1/orders/entry-0001?externalUserId=ana&providerId=VENUE_B"),
      404,
      "NOT_FOUND",
    );
    await expectError(
      await partner.call("GET", "/v1/orders/short?externalUserId=ana&providerId=VENUE_A"),
      404,
      "NOT_FOUND",
    );
    await expectError(
      await partner.call("POST", "/v1/orders/entry-0001/reconcile", { body }),
      400,
      "IDEMPOTENCY_KEY_REQUIRED",
    );
    const other = await createPartner(env, { partnerId: "globex" });
    await expectJson(
      await other.call("POST", "/v1/users", { body: { externalUserId: "ana" }, headers: ik() }),
      201,
    );
    await expectError(
      await other.call("GET", "/v1/orders/entry-0001?externalUserId=ana&providerId=VENUE_A"),
      404,
      "NOT_FOUND",
    );
  } finally {
    await env.close();
  }
});
