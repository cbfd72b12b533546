/**
 * The partner's catalogs: providers and strategies it may use, and the markets
 * of a provider read through the venue adapter.
 */
import { inArray } from "drizzle-orm";
import { strategies } from "../../db/schema.ts";
import { type Market, PROVIDER_IDS, type ProviderId, type VenueAdapter } from "../../venues/types.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { ApiError } from "../errors.ts";
import { assertProviderUsable, effectiveAccessOf } from "../grants/effective_access.ts";
import { callVenue } from "../venues/call_venue.ts";

/** What a provider can do, as the catalog names it. */
export function providerCapabilities(adapter: VenueAdapter): string[] {
  return [
    "PERP_TRADING",
    "LEVERAGE",
    "STOP_LOSS",
    "TAKE_PROFIT",
    ...(adapter.capabilities.builderFee ? ["BUILDER_FEE"] : []),
    ...(adapter.capabilities.agentWallet ? ["AGENT_WALLET"] : []),
  ];
}

export async function listProviders({ ctx }: { ctx: Ctx }) {
  const access = await effectiveAccessOf(ctx, partnerOf(ctx));
  return access.providers.map((providerId) => {
    const adapter = ctx.venues[providerId];
    return {
      providerId,
      name: adapter.name,
      kind: adapter.kind,
      capabilities: providerCapabilities(adapter).filter((c) => access.partner.grants.capabilities.includes(c)),
    };
  });
}

export async function listStrategies({ ctx }: { ctx: Ctx }) {
  const access = await effectiveAccessOf(ctx, partnerOf(ctx));
  if (!access.strategies.length) return [];
  const rows = await ctx.db.read.select().from(strategies).where(inArray(strategies.strategyId, access.strategies));
  return rows.sort((a, b) => a.strategyId.localeCompare(b.strategyId)).map(({ updatedAt: _, ...strategy }) => strategy);
}

/**
 * Markets of a provider the partner may use. Unknown provider ids are a
 * validation error; known ones outside the contract answer PROVIDER_NOT_ALLOWED,
 * and ones the partner's own restriction removed PROVIDER_NOT_GRANTED.
 */
export async function listMarkets(
  { ctx, input }: { ctx: Ctx; input: { providerId: string; symbol?: string } },
): Promise<{ market: Market } | { markets: Market[] }> {
  if (!(PROVIDER_IDS as readonly string[]).includes(input.providerId)) {
    throw new ApiError("VALIDATION_ERROR", { message: `Provedor desconhecido: "${input.providerId.slice(0, 32)}".` });
  }
  const providerId = input.providerId as ProviderId;
  assertProviderUsable(await effectiveAccessOf(ctx, partnerOf(ctx)), providerId);
  const markets = await callVenue(ctx, providerId, (venue) => venue.listMarkets());
  if (input.symbol === undefined) return { markets: markets.filter((m) => m.active) };
  const wanted = input.symbol.toUpperCase();
  const market = markets.find((m) => m.symbol.toUpperCase() === wanted || m.providerSymbol.toUpperCase() === wanted);
  if (!market) throw new ApiError("NOT_FOUND", { message: "Mercado não encontrado neste provedor." });
  return { market };
}
