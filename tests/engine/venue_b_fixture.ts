/**
 * ana trading trend-follow on the VENUE_B simulator: her wallet connected
 * with the builder fee approved, a setup with automatic break-even, the
 * automation on, and her account read once so entries may open.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { positions } from "../../db/schema.ts";
import { findClient } from "../../domain/clients/load_client.ts";
import { expectJson, operator } from "../_helpers/http.ts";
import { connectWallet, openPage, walletSetUp } from "../connect/connect_fixture.ts";
import {
  automationBody,
  BTC_POLICY,
  completeSetup,
  putAutomation,
  putSetup,
  TREND_FOLLOW,
} from "../setup/setup_fixture.ts";

export async function anaTradingAtVenueB() {
  const { env, partner, wallet } = await walletSetUp(25);
  const market = (markPrice: string) =>
    fetch(`${env.venueUrls.venueB}/_control/markets/BTC`, { method: "PUT", body: JSON.stringify({ markPrice }) })
      .then((response) => response.body?.cancel());
  const reconcile = async () =>
    (await expectJson(await operator(env, "POST", "/operator/v1/jobs/reconcile/run"), 200)).summary;
  try {
    await connectWallet((await openPage(env, partner)).request, wallet);
    await expectJson(await operator(env, "PUT", "/operator/v1/strategies/trend-follow", TREND_FOLLOW), 200);
    await expectJson(await operator(env, "PUT", "/operator/v1/asset-policies/VENUE_B/BTCUSDC", BTC_POLICY), 200);
    await expectJson(await operator(env, "PUT", "/operator/v1/providers/VENUE_B", { realExecution: true }), 200);
    await expectJson(
      await putSetup(
        partner,
        completeSetup({ providerId: "VENUE_B", orderSizeUsd: 240, maxLossPerTrade: 50, autoBreakEven: true }),
      ),
      200,
    );
    await expectJson(await putAutomation(partner, automationBody({ providerId: "VENUE_B" })), 200);
    await reconcile();
    const view = await expectJson(await partner.call("GET", "/v1/users/ana/automation"), 200);
    const venueB = view.providers.find((p: { providerId: string }) => p.providerId === "VENUE_B");
    assert.equal(venueB.newEntries, "ALLOWED", JSON.stringify(venueB));
  } catch (error) {
    await env.close();
    throw error;
  }
  const client = (await findClient(env.deps.db.read, partner.partnerId, "ana"))!;
  const position = async () =>
    (await env.deps.db.read.select().from(positions).where(eq(positions.clientId, client.id)))[0];
  return { env, partner, client, market, reconcile, position };
}
