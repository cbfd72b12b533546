/**
 * Gate 9 and the platform builder's mode at VENUE_B: builder fees accrue only
 * to a builder in standard mode (venue docs, account abstraction modes; the
 * simulator credits none otherwise). A builder moved out of standard mode
 * makes paid openings invalid (BUILDER_CONFIG_INVALID) on every channel, the
 * operator's provider view says so, and a warning is logged at start.
 */
import assert from "node:assert/strict";
import { expectJson, operator } from "../_helpers/http.ts";
import { signalB } from "../execution/execution_fixture.ts";
import { anaTradingAtVenueB } from "./venue_b_fixture.ts";
import { warnOnBuilderStanding } from "../../domain/gates/builder_standing.ts";
import type { Logger } from "../../domain/logger.ts";

Deno.test("VENUE_B: a builder outside standard mode closes paid openings at gate 9 until it is back", async (t) => {
  const { env, partner } = await anaTradingAtVenueB();
  const builder = env.deps.config.venueBBuilderAddress;
  const setMode = async (abstraction: string) => {
    const response = await fetch(`${env.venueUrls.venueB}/_control/wallets/${builder}/abstraction`, {
      method: "PUT",
      body: JSON.stringify({ abstraction }),
    });
    assert.equal(response.status, 200, await response.text());
  };
  const operatorView = async () =>
    (await expectJson(await operator(env, "GET", "/operator/v1/providers"), 200)).providers as {
      providerId: string;
      builder: { address: string; mode: string | null; accruesFees: boolean | null; status: string } | null;
    }[];
  const automationOfB = async () =>
    (await expectJson(await partner.call("GET", "/v1/users/ana/automation"), 200)).providers
      .find((p: { providerId: string }) => p.providerId === "VENUE_B");
  try {
    await t.step("a builder in standard mode accrues: the operator sees it, entries may open", async () => {
      const [venueA, venueB] = await operatorView();
      assert.equal(venueA.builder, null, "VENUE_A has no builder");
      assert.deepEqual(venueB.builder, { address: builder, mode: "default", accruesFees: true, status: "ACCRUING" });
    });

    await t.step("moved to unified account, the builder would earn nothing: paid openings are refused", async () => {
      await setMode("unifiedAccount");
      const venueB = (await operatorView()).find((p) => p.providerId === "VENUE_B")!;
      assert.deepEqual(venueB.builder, {
        address: builder,
        mode: "unifiedAccount",
        accruesFees: false,
        status: "NOT_ACCRUING",
      });
      const automation = await automationOfB();
      assert.equal(automation.newEntries, "BLOCKED");
      assert.equal(automation.blockReason, "BUILDER_CONFIG_INVALID");
      const summary = await expectJson(await operator(env, "POST", "/operator/v1/signals", signalB("sig-b-1")), 200);
      assert.equal(summary.dispatched, 0, JSON.stringify(summary));
      assert.deepEqual(summary.refused, { BUILDER_CONFIG_INVALID: 1 });
    });

    await t.step("the start-up check warns the operator", async () => {
      const warnings: { message: string; fields?: Record<string, unknown> }[] = [];
      const logger = {
        ...env.deps.logger,
        warn: (message: string, fields?: Record<string, unknown>) => warnings.push({ message, fields }),
      } as Logger;
      await warnOnBuilderStanding({ ...env.deps, logger });
      assert.equal(warnings.length, 1, JSON.stringify(warnings));
      assert.match(warnings[0].message, /not in standard mode/);
      assert.deepEqual(warnings[0].fields, { providerId: "VENUE_B", builder, mode: "unifiedAccount" });
    });

    await t.step("set back to standard, the operator's fresh read opens entries again", async () => {
      await setMode("disabled");
      const venueB = (await operatorView()).find((p) => p.providerId === "VENUE_B")!;
      assert.equal(venueB.builder?.status, "ACCRUING");
      assert.equal((await automationOfB()).newEntries, "ALLOWED");
      const summary = await expectJson(await operator(env, "POST", "/operator/v1/signals", signalB("sig-b-2")), 200);
      assert.equal(summary.dispatched, 1, JSON.stringify(summary));
    });
  } finally {
    await env.close();
  }
});
