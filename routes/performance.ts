/** Performance, statements, billing and obligations of a client (reads; the partner never writes them). */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { getBilling, listObligations } from "../domain/billing/billing_reads.ts";
import { getPerformance, listStatements } from "../domain/performance/performance_reads.ts";
import { type AppEnv, partnerCtx } from "./env.ts";
import { json, shaped } from "./respond.ts";
import { jsonContent, partnerErrors, ProviderIdSchema, RequestId } from "./schemas/common.ts";
import {
  BillingPolicySchema,
  LiveProviderPerformanceSchema,
  ObligationSchema,
  StatementSchema,
} from "./schemas/resources.ts";
import * as examples from "./schemas/examples.ts";
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
  providerCurrencies: z.partialRecord(ProviderIdSchema, z.enum(["USDT", "USDC"])),
  payment: z.object({ networks: z.array(z.string()), tokens: z.array(z.string()) }),
  openObligations: z.array(ObligationSchema),
  newEntriesBlockedBy: z.array(z.string()),
  requestId: RequestId,
});

export const performanceRoutes = new OpenAPIHono<AppEnv>();

/** Every route here reads one client's figures and changes nothing; an unknown client answers 404. */
const READ_ONLY = "Changes nothing.\n\nErrors: 404 unknown client.";

const route = <T extends z.ZodTypeAny>(
  path: string,
  operationId: string,
  tag: string,
  text: { summary: string; description: string },
  schema: T,
  example: Parameters<typeof jsonContent<T>>[2],
) =>
  createRoute({
    method: "get",
    path: `/v1/users/{id}/${path}`,
    operationId,
    tags: [tag],
    summary: text.summary,
    description: `${text.description} ${READ_ONLY}`,
    request: { params: UserParams },
    responses: { 200: jsonContent(schema, text.summary, example), ...partnerErrors },
  });

performanceRoutes.openapi(
  route(
    "performance",
    "getPerformance",
    "Performance",
    {
      summary: "Live period estimate and the last 12 closed statements",
      description: "Per provider, the current period's live estimate under the contract (net realized PnL, carry, " +
        "chargeable performance and the estimated fee; builder fees apart), how many portions still await " +
        "attribution, and the last 12 closed statements.",
    },
    PerformanceResponse,
    examples.performance,
  ),
  async (c) => {
    const out = await getPerformance(partnerCtx(c), { externalUserId: c.req.valid("param").id });
    return json(c, shaped(PerformanceResponse, { ...out, requestId: c.get("requestId") }), 200);
  },
);

performanceRoutes.openapi(
  route(
    "statements",
    "listStatements",
    "Performance",
    {
      summary: "Every closed statement, originals and adjustments",
      description: "Every statement the period close wrote for the client (event `statement.created`), and the " +
        "adjustments a late fact wrote afterwards (`statement.adjusted`, `adjustsStatementId`), each with the " +
        "obligation it raised, if any.",
    },
    StatementsResponse,
    examples.statements,
  ),
  async (c) => {
    const out = await listStatements(partnerCtx(c), { externalUserId: c.req.valid("param").id });
    return json(c, shaped(StatementsResponse, { ...out, requestId: c.get("requestId") }), 200);
  },
);

performanceRoutes.openapi(
  route(
    "billing",
    "getBilling",
    "Billing",
    {
      summary: "Billing policy, open obligations and what blocks new entries",
      description: "The client's billing status (ACTIVE, DUE, GRACE, SUSPENDED) under the contract's policy, the " +
        "builder fee, each provider's currency, the networks and tokens payments accept, the open obligations " +
        "and which of them block new entries (`newEntriesBlockedBy`).",
    },
    BillingResponse,
    examples.billing,
  ),
  async (c) => {
    const out = await getBilling(partnerCtx(c), { externalUserId: c.req.valid("param").id });
    return json(c, shaped(BillingResponse, { ...out, requestId: c.get("requestId") }), 200);
  },
);

performanceRoutes.openapi(
  route(
    "obligations",
    "listObligations",
    "Billing",
    {
      summary: "Obligations, open and settled",
      description: "Every obligation of the client (subscriptions and performance fees; `obligation.created` when " +
        "raised, `obligation.paid` when settled), with its due date, grace and whether it blocks new entries. " +
        "Pay one with POST payment-instructions.",
    },
    ObligationsResponse,
    examples.obligations,
  ),
  async (c) => {
    const out = await listObligations(partnerCtx(c), { externalUserId: c.req.valid("param").id });
    return json(c, shaped(ObligationsResponse, { ...out, requestId: c.get("requestId") }), 200);
  },
);
