/** `GET /v1/health`: the API is up, and for each provider whether real execution is validated. */
import { routeGroup } from "./route_group.ts";
import { json, shaped } from "./respond.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { getHealth } from "../domain/catalog/get_health.ts";
import { partnerCtx } from "./env.ts";
import { jsonContent, partnerErrors, ProviderIdSchema, RequestId } from "./schemas/common.ts";

export const HealthResponse = z.object({
  api: z.literal("UP"),
  providers: z.array(z.object({
    providerId: ProviderIdSchema,
    status: z.enum(["AVAILABLE", "UNAVAILABLE"]).openapi({ description: "Reachability as last observed." }),
    realExecution: z.enum(["ENABLED", "NOT_VALIDATED"]).openapi({
      description: "NOT_VALIDATED: real execution not yet validated for this provider.",
    }),
  })),
  requestId: RequestId,
}).openapi("Health");

export const health = routeGroup().openapi(
  createRoute({
    method: "get",
    path: "/v1/health",
    operationId: "getHealth",
    description: "Whether the API is up and, per provider of the contract, whether it answered when last " +
      "called (AVAILABLE or UNAVAILABLE) and whether the operator validated real execution there (until then " +
      "entries are refused there). Cheap; no provider is called. Changes nothing.",
    tags: ["Health, usage, contract"],
    summary: "Service and provider health",
    responses: {
      200: jsonContent(HealthResponse, "Health.", {
        api: "UP",
        providers: [
          { providerId: "VENUE_A", status: "AVAILABLE", realExecution: "NOT_VALIDATED" },
          { providerId: "VENUE_B", status: "AVAILABLE", realExecution: "NOT_VALIDATED" },
        ],
        requestId: "req_f741e2b86079450eb3326995",
      }),
      ...partnerErrors,
    },
  }),
  async (c) => {
    const out = await getHealth({ ctx: partnerCtx(c) });
    return json(c, shaped(HealthResponse, { ...out, requestId: c.get("requestId") }), 200);
  },
);
