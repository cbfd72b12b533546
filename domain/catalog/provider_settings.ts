/**
 * The operator's switch that says real execution has been validated for a
 * provider. A grant alone never implies it.
 */
import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import type { Executor } from "../../db/client.ts";
import { providerSettings } from "../../db/schema.ts";
import type { Ctx } from "../context.ts";
import { PROVIDER_IDS, type ProviderId } from "../../venues/types.ts";
import { bumpCacheGenerations } from "../cache_generations.ts";

export type RealExecution = "ENABLED" | "NOT_VALIDATED";

export async function realExecutionByProvider(ctx: Ctx): Promise<Record<ProviderId, RealExecution>> {
  return (await ctx.caches.providerSettings.get("all", () => loadRealExecution(ctx.db.read)))!;
}

async function loadRealExecution(db: Executor): Promise<Record<ProviderId, RealExecution>> {
  const rows = await db.select().from(providerSettings);
  const enabled = new Set(rows.filter((r) => r.realExecution).map((r) => r.providerId));
  return Object.fromEntries(
    PROVIDER_IDS.map((id) => [id, enabled.has(id) ? "ENABLED" : "NOT_VALIDATED"]),
  ) as Record<ProviderId, RealExecution>;
}

/** The most entries one signal opens at the provider, or null for no limit. */
export async function maxEntriesPerSignal(db: Executor, providerId: ProviderId): Promise<number | null> {
  const [row] = await db.select({ limit: providerSettings.maxEntriesPerSignal }).from(providerSettings)
    .where(eq(providerSettings.providerId, providerId));
  return row?.limit ?? null;
}

export async function setProviderSettings(
  { ctx, input }: {
    ctx: Ctx;
    input: { providerId: ProviderId; realExecution: boolean; maxEntriesPerSignal: number | null };
  },
) {
  const now = ctx.clock.now();
  await withTransaction(ctx.db, async (tx) => {
    await tx.insert(providerSettings).values({ ...input, updatedAt: now })
      .onConflictDoUpdate({
        target: providerSettings.providerId,
        set: { realExecution: input.realExecution, maxEntriesPerSignal: input.maxEntriesPerSignal, updatedAt: now },
      });
    await bumpCacheGenerations(tx, "providerSettings");
  });
  ctx.caches.providerSettings.clear();
  return {
    providerId: input.providerId,
    realExecution: input.realExecution ? "ENABLED" : "NOT_VALIDATED",
    maxEntriesPerSignal: input.maxEntriesPerSignal,
  };
}
