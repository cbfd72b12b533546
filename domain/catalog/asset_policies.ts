/**
 * The operator's entry policies per asset and provider (operator API,
 * `/operator/v1/asset-policies`). An asset without one never receives a new
 * entry (ASSET_POLICY_REQUIRED); the limits are what the entry-moment checks
 * (notional, spread, slippage, share of the book) hold an order to.
 */
import { and, asc, eq } from "drizzle-orm";
import { type Executor, withTransaction } from "../../db/client.ts";
import { assetPolicies } from "../../db/schema.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { microsOrNull, microsToUsd, usdOrNull, usdToMicros } from "../money.ts";
import { iso } from "../clock.ts";
import { formatDec, parseDec } from "../../venues/decimal.ts";
import type { ProviderId } from "../../venues/types.ts";

export interface AssetPolicyInput {
  minNotionalUsd: number;
  maxNotionalUsd: number;
  maxSpreadBps: number;
  maxSlippageBps: number;
  /** Largest share of the visible book one entry may take, 0-1. */
  maxBookFraction: number;
  memecoin?: boolean;
  maxSignalNotionalUsd?: number | null;
  maxAssetNotionalUsd?: number | null;
  maxDirectionNotionalUsd?: number | null;
}

type AssetPolicyRow = typeof assetPolicies.$inferSelect;

function assetPolicyView(row: AssetPolicyRow) {
  return {
    providerId: row.providerId as ProviderId,
    symbol: row.symbol,
    minNotionalUsd: microsToUsd(row.minNotionalMicros),
    maxNotionalUsd: microsToUsd(row.maxNotionalMicros),
    maxSpreadBps: row.maxSpreadBps,
    maxSlippageBps: row.maxSlippageBps,
    maxBookFraction: Number(row.maxBookFraction),
    memecoin: row.memecoin,
    maxSignalNotionalUsd: usdOrNull(row.maxSignalNotionalMicros),
    maxAssetNotionalUsd: usdOrNull(row.maxAssetNotionalMicros),
    maxDirectionNotionalUsd: usdOrNull(row.maxDirectionNotionalMicros),
    updatedAt: iso(row.updatedAt),
  };
}

/** Create or replace a policy (in the caller's transaction when one is given). */
export async function writeAssetPolicy(
  tx: Executor,
  key: { providerId: ProviderId; symbol: string },
  input: AssetPolicyInput,
  now: number,
): Promise<AssetPolicyRow> {
  if (input.minNotionalUsd > input.maxNotionalUsd) {
    throw new ApiError("VALIDATION_ERROR", { message: "minNotionalUsd não pode ser maior que maxNotionalUsd." });
  }
  const row: AssetPolicyRow = {
    ...key,
    minNotionalMicros: usdToMicros(input.minNotionalUsd),
    maxNotionalMicros: usdToMicros(input.maxNotionalUsd),
    maxSpreadBps: input.maxSpreadBps,
    maxSlippageBps: input.maxSlippageBps,
    maxBookFraction: formatDec(parseDec(input.maxBookFraction)),
    memecoin: input.memecoin ?? false,
    maxSignalNotionalMicros: microsOrNull(input.maxSignalNotionalUsd),
    maxAssetNotionalMicros: microsOrNull(input.maxAssetNotionalUsd),
    maxDirectionNotionalMicros: microsOrNull(input.maxDirectionNotionalUsd),
    updatedAt: now,
  };
  await tx.insert(assetPolicies).values(row)
    .onConflictDoUpdate({ target: [assetPolicies.providerId, assetPolicies.symbol], set: row });
  return row;
}

export async function putAssetPolicy(
  ctx: Ctx,
  input: { providerId: ProviderId; symbol: string; policy: AssetPolicyInput },
) {
  const now = ctx.clock.now();
  const row = await withTransaction(ctx.db, (tx) => writeAssetPolicy(tx, input, input.policy, now));
  return assetPolicyView(row);
}

/** The entry policy of one asset, in the form the admission checks read, or null without one. */
export async function assetPolicyOf(db: Executor, providerId: ProviderId, symbol: string) {
  const [row] = await db.select().from(assetPolicies)
    .where(and(eq(assetPolicies.providerId, providerId), eq(assetPolicies.symbol, symbol)));
  return row ?? null;
}

export async function listAssetPolicies(ctx: Ctx, input: { providerId?: ProviderId }) {
  const rows = await ctx.db.read.select().from(assetPolicies)
    .where(input.providerId ? eq(assetPolicies.providerId, input.providerId) : undefined)
    .orderBy(asc(assetPolicies.providerId), asc(assetPolicies.symbol));
  return rows.map(assetPolicyView);
}

export async function deleteAssetPolicy(ctx: Ctx, input: { providerId: ProviderId; symbol: string }) {
  const deleted = await withTransaction(ctx.db, (tx) =>
    tx.delete(assetPolicies)
      .where(and(eq(assetPolicies.providerId, input.providerId), eq(assetPolicies.symbol, input.symbol)))
      .returning());
  if (!deleted.length) throw new ApiError("NOT_FOUND");
  return assetPolicyView(deleted[0]);
}
