/**
 * One entry at a time per account across three instances: openings of one
 * client sent to every instance at once meet the account's entry lease in the
 * database. One trades; each other is told the account is busy, or (once the
 * first holds its position) that the account's one position is taken; none
 * mistakes the first one's fill for a position opened outside the platform.
 * Checked at the simulator: one entry order.
 */
import assert from "node:assert/strict";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner } from "../_helpers/http.ts";
import { openTrading, seedTraders, venueACredentials } from "../bench/seed_accounts.ts";
import { type Credential, Fleet, MASTER_KEY } from "./fleet.ts";
import { opening } from "../execution/execution_fixture.ts";

Deno.test("three instances: nine openings of one account at once trade once; the rest are ACCOUNT_BUSY or find the slot taken", async () => {
  const fleet = await Fleet.start({ instances: 3 });
  const seeder = await startTestEnv({
    databaseUrl: fleet.databaseUrl,
    venues: fleet.simulators.urls,
    env: { MASTER_KEY },
  });
  try {
    const partner = await createPartner(seeder, { partnerId: "leases" });
    const credential: Credential = { clientId: partner.clientId, clientSecret: partner.clientSecret };
    await openTrading(seeder, fleet.simulators.urls);
    const credentials = await venueACredentials(fleet.simulators.urls, seeder, 1);
    const { apiKey } = await credentials[0]("probe");
    await seedTraders(seeder, { partnerId: "leases", providerId: "VENUE_A", count: 1, credentials, now: Date.now() });
    const answers = await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        fleet.partner(credential, "POST", "/v1/orders/execute", {
          idempotencyKey: `lease-open-${i}`,
          body: opening({ externalUserId: "user-VENUE_A-0", intentId: `lease-open-${i}`, quantity: 0.002 }),
        })),
    );
    const outcomes = answers.map((answer) =>
      answer.status === 200 ? answer.body.execution.status : `${answer.status} ${answer.body?.error?.code}`
    );
    assert.equal(outcomes.filter((outcome) => outcome === "FILLED").length, 1, outcomes.join(", "));
    for (const outcome of outcomes.filter((outcome) => outcome !== "FILLED")) {
      assert.ok(["409 ACCOUNT_BUSY", "422 POSITION_COUNT_CAP"].includes(outcome), outcomes.join(", "));
    }
    const { orders } = await fleet.simulator("venueA", "GET", `/accounts/${apiKey}`);
    const entries = (orders as { reduceOnly: boolean }[]).filter((order) => !order.reduceOnly);
    assert.equal(entries.length, 1, JSON.stringify(orders));
  } finally {
    await seeder.close();
    await fleet.stop();
  }
});
