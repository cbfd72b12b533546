/**
 * Fills and funding of a real simulator account become facts exactly once,
 * and their net result feeds the daily loss halt.
 */
import assert from "node:assert/strict";
import { withTransaction } from "../../db/client.ts";
import { resultFacts } from "../../db/schema.ts";
import { credentialsOf, findAccount } from "../../domain/accounts/load_account.ts";
import { findClient } from "../../domain/clients/load_client.ts";
import { recordFill, recordFunding } from "../../domain/execution/result_facts.ts";
import { realizedToday } from "../../domain/setups/daily_loss.ts";
import { add, cmp, sub } from "../../venues/decimal.ts";
import { readyClient } from "../setup/setup_fixture.ts";

Deno.test("result facts: fills and funding are recorded once and feed the day's result", async () => {
  const { env, partner } = await readyClient();
  try {
    const client = (await findClient(env.deps.db.read, partner.partnerId, "ana"))!;
    const account = (await findAccount(env.deps.db.read, client.id, "VENUE_A"))!;
    const venue = env.deps.venues.VENUE_A;
    const credentials = credentialsOf(account);
    const order = { symbol: "BTCUSDT", type: "MARKET" as const, quantity: "0.002" };
    await venue.placeOrder(credentials, { ...order, side: "BUY", reduceOnly: false, clientOrderId: "facts-open" });
    await fetch(`${env.venueUrls.venueA}/_control/funding`, {
      method: "POST",
      body: JSON.stringify({ symbol: "BTCUSDT", rate: "0.0001" }),
    }).then((response) => response.body?.cancel());
    await venue.placeOrder(credentials, { ...order, side: "SELL", reduceOnly: true, clientOrderId: "facts-close" });

    const fills = await venue.getFills(credentials, { symbol: "BTCUSDT", since: 0 });
    const funding = await venue.getFunding(credentials, { since: 0 });
    assert.equal(fills.length >= 2, true);
    assert.equal(funding.length, 1);
    const key = { clientId: client.id, providerId: "VENUE_A" as const };
    const recordAll = () =>
      withTransaction(env.deps.db, async (tx) => {
        const added = [];
        for (const fill of fills) added.push(await recordFill(tx, key, fill, env.clock.now()));
        for (const payment of funding) added.push(await recordFunding(tx, key, payment, env.clock.now()));
        return added;
      });
    assert.deepEqual(await recordAll(), [...fills, ...funding].map(() => true));
    assert.deepEqual(await recordAll(), [...fills, ...funding].map(() => false), "a second report adds nothing");

    const expected = [
      ...fills.map((fill) => sub(fill.realizedPnl, fill.fee)),
      ...funding.map((payment) => payment.amount),
    ].reduce((sum, net) => add(sum, net), "0");
    const facts = await env.deps.db.read.select().from(resultFacts);
    assert.equal(facts.length, fills.length + funding.length);
    assert.equal(cmp(await realizedToday(env.deps.db.read, client.id, "VENUE_A", env.clock.now()), expected), 0);
    assert.notEqual(expected, "0", "the round trip paid fees at least");
  } finally {
    await env.close();
  }
});
