/** `GET /v1/usage`: the partner's counted calls and limits. */
import { routeGroup } from "./route_group.ts";
import { json, shaped } from "./respond.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { getUsage } from "../domain/usage/get_usage.ts";
import { partnerCtx } from "./env.ts";
import { jsonContent, partnerErrors, RequestId } from "./schemas/common.ts";
import * as examples from "./schemas/examples.ts";

const UsageQuery = z.object({
  minutes: z.coerce.number().int().min(1).max(1440).default(60).openapi({
    description: "Window length in minutes, 1-1440 (default 60).",
  }),
});

export const UsageResponse = z.object({
  window: z.object({
    from: z.string().openapi({ description: "Start of the first minute of the window (ISO-8601 UTC)." }),
    minutes: z.number().int(),
  }),
  totals: z.object({ requests: z.number().int(), orders: z.number().int() }),
  limits: z.object({ requestsPerMinute: z.number().int(), ordersPerMinute: z.number().int() }),
  buckets: z.array(z.object({
    window: z.string().openapi({ description: "Start of the minute (ISO-8601 UTC)." }),
    kind: z.enum(["REQUEST", "ORDER"]),
    count: z.number().int(),
  })),
  requestId: RequestId,
}).openapi("Usage");

export const usage = routeGroup().openapi(
  createRoute({
    method: "get",
    path: "/v1/usage",
    operationId: "getUsage",
    description: "What the rate limits counted for the partner over the last `minutes`, minute by minute (REQUEST: " +
      "every authenticated call; ORDER: every order sent to a provider), with the limits they count against. A " +
      "call over a limit answers 429 RATE_LIMITED with Retry-After. Changes nothing.",
    tags: ["Health, usage, contract"],
    summary: "Counted requests and orders per minute",
    request: { query: UsageQuery },
    responses: { 200: jsonContent(UsageResponse, "Usage.", examples.usage), ...partnerErrors },
  }),
  async (c) => {
    const out = await getUsage({ ctx: partnerCtx(c), input: c.req.valid("query") });
    return json(c, shaped(UsageResponse, { ...out, requestId: c.get("requestId") }), 200);
  },
);
