/** Publishing, drafting or retiring a strategy (operator). */
import { withTransaction } from "../../db/client.ts";
import { type ConfigurableParameter, strategies } from "../../db/schema.ts";
import type { Ctx } from "../context.ts";

export interface StrategyInput {
  strategyId: string;
  version: string;
  status: "PUBLISHED" | "DRAFT" | "RETIRED";
  displayName: string;
  summary: string;
  supportedProviders: string[];
  supportedMarkets: string[];
  configurableParameters: ConfigurableParameter[];
  riskRequirements: Record<string, unknown>;
}

export async function putStrategy({ ctx, input }: { ctx: Ctx; input: StrategyInput }): Promise<StrategyInput> {
  const now = ctx.clock.now();
  await withTransaction(ctx.db, async (tx) => {
    await tx.insert(strategies).values({ ...input, updatedAt: now })
      .onConflictDoUpdate({ target: strategies.strategyId, set: { ...input, updatedAt: now } });
  });
  // Published strategies are part of every partner's cached snapshot.
  ctx.caches.partners.clear();
  return input;
}
