/** Performance, statements, billing and obligations of a client (reads; the partner never writes them). */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { getBilling, listObligations } from "../domain/billing/billing_reads.ts";
import { getPerformance, listStatements } from "../domain/performance/performance_reads.ts";
import { type AppEnv, partnerCtx } from "./env.ts";
import { json } from "./respond.ts";
import { jsonContent, partnerErrors, ProviderIdSchema, RequestId } from "./schemas/common.ts";
import {
  BillingPolicySchema,
  LiveProviderPerformanceSchema,
  ObligationSchema,
  StatementSchema,
} from "./schemas/resources.ts";
import { ExternalUserId } from "./users.ts";

const UserParams = z.object({ id: ExternalUserId });
const Owner = { externalUserId: z.string(), tenantId: z.string().nullable() };

const PerformanceResponse = z.object({
  ...Owner,
  current: z.object({
    status: z.literal("LIVE_ESTIMATE"),
    contract: z.object({
      contractId: z.string(),
      version: z.number().int(),
      period: z.enum(["WEEKLY", "MONTHLY"]),
      policy: z.enum(["CARRY", "NO_CARRY"]),
      performanceFeePercent: z.number(),
      currency: z.string(),
    }),
    periodStart: z.string(),
    periodEnd: z.string(),
    providers: z.array(LiveProviderPerformanceSchema),
  }),
  closedStatements: z.array(StatementSchema),
  requestId: RequestId,
});
const StatementsResponse = z.object({ ...Owner, statements: z.array(StatementSchema), requestId: RequestId });
const ObligationsResponse = z.object({ ...Owner, obligations: z.array(ObligationSchema), requestId: RequestId });
const BillingResponse = z.object({
  ...Owner,
  status: z.enum(["ACTIVE", "DUE", "GRACE", "SUSPENDED"]),
  policy: BillingPolicySchema,
  builder: z.object({ source: z.string(), version: z.number().int(), feeTenthsBps: z.number().int() }),
  providerCurrencies: z.record(ProviderIdSchema, z.enum(["USDT", "USDC"])),
  payment: z.object({ networks: z.array(z.string()), tokens: z.array(z.string()) }),
  openObligations: z.array(ObligationSchema),
  newEntriesBlockedBy: z.array(z.string()),
  requestId: RequestId,
});

export const performanceRoutes = new OpenAPIHono<AppEnv>();

const route = (path: string, operationId: string, tag: string, summary: string, schema: z.ZodTypeAny) =>
  createRoute({
    method: "get",
    path: `/v1/users/{id}/${path}`,
    operationId,
    tags: [tag],
    summary,
    request: { params: UserParams },
    responses: { 200: jsonContent(schema, summary), ...partnerErrors },
  });

performanceRoutes.openapi(
  route(
    "performance",
    "getPerformance",
    "Performance",
    "Live period estimate and the last 12 closed statements",
    PerformanceResponse,
  ),
  async (c) => {
    const out = await getPerformance(partnerCtx(c), { externalUserId: c.req.valid("param").id });
    return json(c, PerformanceResponse.parse({ ...out, requestId: c.get("requestId") }), 200);
  },
);

performanceRoutes.openapi(
  route(
    "statements",
    "listStatements",
    "Performance",
    "Every closed statement, originals and adjustments",
    StatementsResponse,
  ),
  async (c) => {
    const out = await listStatements(partnerCtx(c), { externalUserId: c.req.valid("param").id });
    return json(c, StatementsResponse.parse({ ...out, requestId: c.get("requestId") }), 200);
  },
);

performanceRoutes.openapi(
  route(
    "billing",
    "getBilling",
    "Billing",
    "Billing policy, open obligations and what blocks new entries",
    BillingResponse,
  ),
  async (c) => {
    const out = await getBilling(partnerCtx(c), { externalUserId: c.req.valid("param").id });
    return json(c, BillingResponse.parse({ ...out, requestId: c.get("requestId") }), 200);
  },
);

performanceRoutes.openapi(
  route("obligations", "listObligations", "Billing", "Obligations, open and settled", ObligationsResponse),
  async (c) => {
    const out = await listObligations(partnerCtx(c), { externalUserId: c.req.valid("param").id });
    return json(c, ObligationsResponse.parse({ ...out, requestId: c.get("requestId") }), 200);
  },
);
