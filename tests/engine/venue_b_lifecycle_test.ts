/**
 * The engine on the VENUE_B simulator: a wallet-connected client with the
 * builder fee approved trades a signal; the entry carries the builder fee, is
 * protected by trigger orders, moves to break-even after the first target and
 * closes on the second, and the fills become results with the builder fee
 * kept apart.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { intents, resultFacts } from "../../db/schema.ts";
import { cmp } from "../../venues/decimal.ts";
import { expectJson, operator } from "../_helpers/http.ts";
import { signalB } from "../execution/execution_fixture.ts";
import { anaTradingAtVenueB } from "./venue_b_fixture.ts";

Deno.test("VENUE_B: signal, builder fee, protection, break-even, close, results", async (t) => {
  const { env, client, market, reconcile, position } = await anaTradingAtVenueB();
  try {
    await t.step("the entry fills with the builder fee and is protected", async () => {
      const summary = await expectJson(
        await operator(env, "POST", "/operator/v1/signals", signalB("sig-b-1")),
        200,
      );
      assert.equal(summary.dispatched, 1, JSON.stringify(summary));
      const [entry] = (await env.deps.db.read.select().from(intents).where(eq(intents.clientId, client.id)))
        .filter((intent) => intent.type === "ENTRY");
      assert.equal(entry.status, "FILLED", `${entry.errorCode} ${entry.errorMessage}`);
      const opened = await position();
      assert.equal(opened.protectionStatus, "PROTECTED", opened.protectionReason ?? "");
    });

    await t.step("the first target fills; the stop moves to break-even", async () => {
      await market("67200");
      await reconcile();
      const moved = await position();
      assert.equal(moved.breakEvenDone, true);
      assert.equal(moved.stopLossPrice, moved.entryPrice);
      assert.equal(moved.protectionStatus, "PROTECTED", moved.protectionReason ?? "");
    });

    await t.step("the second target closes it; the fills are results, the builder fee apart", async () => {
      await market("69200");
      await reconcile();
      assert.equal((await position()).status, "CLOSED");
      await reconcile();
      const facts = await env.deps.db.read.select().from(resultFacts).where(eq(resultFacts.clientId, client.id));
      const fills = facts.filter((fact) => fact.kind === "FILL");
      assert.ok(fills.length >= 3, "entry and two targets");
      const entryFill = fills.find((fact) => fact.side === "BUY")!;
      assert.equal(cmp(entryFill.builderFee, "0"), 1, "the opening paid the builder fee");
      // Every fill is attributed to the position (the targets by their trigger orders' ids).
      const { positionId } = await position();
      assert.deepEqual(new Set(fills.map((fact) => fact.positionId)), new Set([positionId]));
      assert.deepEqual(fills.map((fact) => fact.role).sort(), ["ENTRY", "EXIT", "EXIT"]);
    });
  } finally {
    await env.close();
  }
});
