/**
 * QA only: at the first start of a QA database the service publishes a demo
 * strategy and entry policies for the simulators' BTC, ETH and SOL markets,
 * so a newcomer can go from the first calls to `newEntries: ALLOWED` by hand
 * (README and docs/walkthrough.md). They are ordinary catalog rows: the operator sees
 * them (`GET /operator/v1/strategies`, `/asset-policies`) and may change or
 * remove them, and a removed demo is not published again (a settings flag
 * records that it was published once).
 */
import { eq } from "drizzle-orm";
import { type Database, withTransaction } from "../../db/client.ts";
import { settings, strategies } from "../../db/schema.ts";
import { writeAssetPolicy } from "../catalog/asset_policies.ts";
import { QUOTE_CURRENCY } from "../setups/setup_values.ts";
import type { ProviderId } from "../../venues/types.ts";
import { bumpCacheGenerations } from "../cache_generations.ts";

const PUBLISHED_FLAG = "qa.demo_catalog_published";
export const DEMO_STRATEGY_ID = "demo-trend";
const COINS = ["BTC", "ETH", "SOL"];

/** Publishes the demo catalog once per database; answers whether it did now. */
export async function publishQaDemoCatalog(db: Database, now: number): Promise<boolean> {
  return await withTransaction(db, async (tx) => {
    const [done] = await tx.select().from(settings).where(eq(settings.key, PUBLISHED_FLAG));
    if (done) return false;
    const markets = Object.values(QUOTE_CURRENCY).flatMap((quote) => COINS.map((coin) => coin + quote));
    await tx.insert(strategies).values({
      strategyId: DEMO_STRATEGY_ID,
      version: "1.0.0",
      status: "PUBLISHED",
      displayName: "Demo: tendência (QA)",
      summary: "Estratégia de demonstração do ambiente QA: segue a tendência em BTC, ETH e SOL nos simuladores.",
      supportedProviders: Object.keys(QUOTE_CURRENCY),
      supportedMarkets: markets,
      configurableParameters: [],
      riskRequirements: { maxLeverage: 20, requiresStopLoss: true },
      updatedAt: now,
    }).onConflictDoNothing();
    for (const [providerId, quote] of Object.entries(QUOTE_CURRENCY) as [ProviderId, string][]) {
      for (const coin of COINS) {
        await writeAssetPolicy(tx, { providerId, symbol: coin + quote }, {
          minNotionalUsd: 10,
          maxNotionalUsd: 50_000,
          maxSpreadBps: 20,
          maxSlippageBps: 30,
          maxBookFraction: 0.1,
        }, now);
      }
    }
    // Published strategies are part of every partner's cached snapshot, on every instance.
    await bumpCacheGenerations(tx, "partners");
    await tx.insert(settings).values({ key: PUBLISHED_FLAG, value: String(now) });
    return true;
  });
}
