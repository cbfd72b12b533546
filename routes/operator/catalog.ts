/** Operator: provider real-execution flag and strategy publication. */
import { json } from "../respond.ts";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { setRealExecution } from "../../domain/catalog/provider_settings.ts";
import { putStrategy } from "../../domain/catalog/put_strategy.ts";
import { type AppEnv, operatorCtx } from "../env.ts";
import { jsonBody, jsonContent, operatorErrors, ProviderIdSchema, RequestId } from "../schemas/common.ts";
import { throwOnInvalid } from "../validation.ts";
import { StrategyBody } from "./schemas.ts";

const ProviderSettingResponse = z.object({
  providerId: ProviderIdSchema,
  realExecution: z.enum(["ENABLED", "NOT_VALIDATED"]),
  requestId: RequestId,
});
const StrategyResponse = z.object({ strategy: StrategyBody.extend({ strategyId: z.string() }), requestId: RequestId });
const tags = ["Operator: catalog"];
const app = new OpenAPIHono<AppEnv>({ defaultHook: throwOnInvalid });

app.openapi(
  createRoute({
    method: "put",
    path: "/operator/v1/providers/{providerId}",
    tags,
    summary: "Mark real execution validated (or not) for a provider",
    request: {
      params: z.object({ providerId: ProviderIdSchema }),
      body: jsonBody(z.object({ realExecution: z.boolean() }).strict()),
    },
    responses: {
      200: jsonContent(ProviderSettingResponse, "Saved."),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const out = await setRealExecution({
      ctx: operatorCtx(c),
      input: { providerId: c.req.valid("param").providerId, realExecution: c.req.valid("json").realExecution },
    });
    return json(c, ProviderSettingResponse.parse({ ...out, requestId: c.get("requestId") }), 200);
  },
);

app.openapi(
  createRoute({
    method: "put",
    path: "/operator/v1/strategies/{strategyId}",
    tags,
    summary: "Create or replace a strategy (PUBLISHED, DRAFT or RETIRED)",
    request: {
      params: z.object({ strategyId: z.string().regex(/^[A-Za-z0-9_.:-]{2,64}$/) }),
      body: jsonBody(StrategyBody),
    },
    responses: {
      200: jsonContent(StrategyResponse, "Saved."),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const strategy = await putStrategy({
      ctx: operatorCtx(c),
      input: { strategyId: c.req.valid("param").strategyId, ...c.req.valid("json") },
    });
    return json(c, StrategyResponse.parse({ strategy, requestId: c.get("requestId") }), 200);
  },
);

export const operatorCatalog = app;
