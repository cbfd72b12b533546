/** Catalogs: providers, strategies and markets the partner may use. */
import { routeGroup } from "./route_group.ts";
import { json, shaped } from "./respond.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { listMarkets, listProviders, listStrategies } from "../domain/catalog/catalog_reads.ts";
import type { Market } from "../venues/types.ts";
import { partnerCtx } from "./env.ts";
import { errorContent, jsonContent, partnerErrors, RequestId } from "./schemas/common.ts";
import { MarketSchema, ProviderItemSchema, StrategySchema } from "./schemas/resources.ts";
import * as examples from "./schemas/examples.ts";

const tags = ["Catalogs"];
const ProvidersResponse = z.object({ providers: z.array(ProviderItemSchema), requestId: RequestId });
const StrategiesResponse = z.object({ strategies: z.array(StrategySchema), requestId: RequestId });
const MarketsResponse = z.union([
  z.object({ market: MarketSchema, requestId: RequestId }),
  z.object({ markets: z.array(MarketSchema), requestId: RequestId }),
]);

/** Venue decimals are strings inside; the spec's Market carries numbers. */
function marketWire(market: Market) {
  return {
    ...market,
    tickSize: Number(market.tickSize),
    stepSize: Number(market.stepSize),
    minQty: Number(market.minQty),
    minNotionalUsd: Number(market.minNotionalUsd),
  };
}

export const catalogs = routeGroup()
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/providers",
      operationId: "listProviders",
      description: "The providers the partner may use now (the contract's, less any the partner's own restriction " +
        "removed), with each one's capabilities within the partner's grant. Changes nothing.",
      tags,
      summary: "Providers authorized for the caller",
      responses: { 200: jsonContent(ProvidersResponse, "Providers.", examples.providerCatalog), ...partnerErrors },
    }),
    async (c) => {
      const providers = await listProviders({ ctx: partnerCtx(c) });
      return json(c, shaped(ProvidersResponse, { providers, requestId: c.get("requestId") }), 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/strategies",
      operationId: "listStrategies",
      description:
        "The strategies in the partner's effective grant, with their versions, providers, markets and risk " +
        "requirements. A client runs one of them through PUT automation. Changes nothing.",
      tags,
      summary: "Published and granted strategies",
      responses: { 200: jsonContent(StrategiesResponse, "Strategies.", examples.strategyCatalog), ...partnerErrors },
    }),
    async (c) => {
      const strategies = await listStrategies({ ctx: partnerCtx(c) });
      return json(c, shaped(StrategiesResponse, { strategies, requestId: c.get("requestId") }), 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/markets",
      operationId: "listMarkets",
      description: "The provider's markets as the provider reports them (ticks, steps, minimums, maximum leverage), " +
        "in our symbols: every active market, or one market by `symbol` (ours or the provider's). Changes " +
        "nothing.\n\nErrors: 400 VALIDATION_ERROR (providerId missing or unknown), 403 PROVIDER_NOT_ALLOWED " +
        "(outside the contract) / PROVIDER_NOT_GRANTED (removed by the partner's restriction), 404 NOT_FOUND (no " +
        "such market), 503 PROVIDER_DOWN (the provider did not answer).",
      tags,
      summary: "Markets of a provider, read from the provider",
      request: {
        query: z.object({
          providerId: z.string().min(2).max(32).openapi({ description: "VENUE_A or VENUE_B (required)." }),
          symbol: z.string().min(3).max(32).optional().openapi({ description: "Our symbol or the provider's." }),
        }),
      },
      responses: {
        200: jsonContent(
          MarketsResponse,
          "`{market}` with symbol, `{markets}` (active only) without.",
          examples.marketCatalog,
        ),
        ...partnerErrors,
        503: errorContent("PROVIDER_DOWN"),
      },
    }),
    async (c) => {
      const out = await listMarkets({ ctx: partnerCtx(c), input: c.req.valid("query") });
      const body = "market" in out ? { market: marketWire(out.market) } : { markets: out.markets.map(marketWire) };
      return json(c, shaped(MarketsResponse, { ...body, requestId: c.get("requestId") }), 200);
    },
  );
