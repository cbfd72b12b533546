/**
 * A VENUE_B stop that fired is followed to its fill: while the venue holds it
 * at `triggered` (awaiting execution) the position stays protected by it, no
 * second stop is placed and nothing cancels it; once it executes the
 * reconciliation closes the position with the stop FILLED.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { intents } from "../../db/schema.ts";
import { expectJson, operator } from "../_helpers/http.ts";
import { anaTradingAtVenueB } from "../engine/venue_b_fixture.ts";
import { signalB } from "./execution_fixture.ts";

Deno.test("VENUE_B: a triggered stop is followed to its fill, never placed again nor cancelled", async () => {
  const { env, client, market, reconcile, position } = await anaTradingAtVenueB();
  const hold = (on: boolean) =>
    fetch(`${env.venueUrls.venueB}/_control/trigger-hold`, { method: "PUT", body: JSON.stringify({ hold: on }) })
      .then((response) => response.json());
  const stops = async () =>
    (await env.deps.db.read.select().from(intents).where(eq(intents.clientId, client.id)))
      .filter((intent) => intent.type === "STOP_LOSS");
  try {
    const summary = await expectJson(await operator(env, "POST", "/operator/v1/signals", signalB("sig-b-trig")), 200);
    assert.equal(summary.dispatched, 1, JSON.stringify(summary));
    assert.equal((await position()).protectionStatus, "PROTECTED");
    const [placed] = await stops();

    await hold(true);
    await market("63000");
    await reconcile();
    await reconcile();
    const held = await position();
    assert.equal(held.status, "OPEN");
    assert.equal(held.protectionStatus, "PROTECTED", held.protectionReason ?? "");
    const whileTriggered = await stops();
    assert.equal(whileTriggered.length, 1, "no second stop while the first is on its way to a fill");
    assert.equal(whileTriggered[0].status, placed.status);

    assert.equal((await hold(false)).held, 0);
    await reconcile();
    assert.equal((await position()).status, "CLOSED");
    const [filled] = await stops();
    assert.equal(filled.status, "FILLED");
    assert.equal(filled.clientOrderId, placed.clientOrderId);
  } finally {
    await env.close();
  }
});
