/** The operator's strategy catalog: publishing, drafting, retiring, listing and removing strategies. */
import { asc, eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { automations, type ConfigurableParameter, strategies } from "../../db/schema.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { bumpCacheGenerations } from "../cache_generations.ts";

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
    await bumpCacheGenerations(tx, "partners");
  });
  // Published strategies are part of every partner's cached snapshot.
  ctx.caches.partners.clear();
  return input;
}

/** Every strategy, whatever its status. */
export async function listStrategies(ctx: Ctx): Promise<StrategyInput[]> {
  const rows = await ctx.db.read.select().from(strategies).orderBy(asc(strategies.strategyId));
  return rows.map(({ updatedAt: _updatedAt, ...strategy }) => strategy as StrategyInput);
}

/**
 * Remove a strategy no automation uses; one in use is retired instead
 * (PUT with status RETIRED), so the automations that name it keep their history.
 */
export async function deleteStrategy(ctx: Ctx, input: { strategyId: string }): Promise<void> {
  await withTransaction(ctx.db, async (tx) => {
    const [inUse] = await tx.select({ clientId: automations.clientId }).from(automations)
      .where(eq(automations.strategyId, input.strategyId)).limit(1);
    if (inUse) {
      throw new ApiError("STATE_CONFLICT", {
        message: "Há automações usando esta estratégia: aposente-a (status RETIRED) em vez de removê-la.",
      });
    }
    const deleted = await tx.delete(strategies).where(eq(strategies.strategyId, input.strategyId))
      .returning({ strategyId: strategies.strategyId });
    if (!deleted.length) throw new ApiError("NOT_FOUND");
    await bumpCacheGenerations(tx, "partners");
  });
  ctx.caches.partners.clear();
}
