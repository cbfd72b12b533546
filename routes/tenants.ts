/** The partner's contract as a tenant, and the partner's restrictions of it. */
import { routeGroup } from "./route_group.ts";
import { json, shaped } from "./respond.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { getTenant, listTenants } from "../domain/tenants/get_tenants.ts";
import { setRestrictions } from "../domain/tenants/set_restrictions.ts";
import { partnerCtx } from "./env.ts";
import { jsonBody, jsonContent, partnerErrors, ProviderIdSchema, RequestId, ShortId } from "./schemas/common.ts";
import { EnvelopeSchema, TenantSchema } from "./schemas/resources.ts";
import * as examples from "./schemas/examples.ts";

const tags = ["Health, usage, contract"];
const TenantResponse = z.object({ tenant: TenantSchema, requestId: RequestId });
const TenantParams = z.object({ tenantId: ShortId });

const RestrictionsBody = z.object({
  providers: z.array(ProviderIdSchema).nullable().optional().openapi({
    description: "Subset of the grant; null removes.",
  }),
  strategies: z.array(ShortId).nullable().optional(),
  envelope: EnvelopeSchema.nullable().optional().openapi({
    description: "Values at most the received ones; null removes.",
  }),
  reason: z.string().min(3).max(500),
}).openapi("TenantRestrictions");

export const tenants = routeGroup()
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/tenants",
      operationId: "listTenants",
      description: "The partner's contract seen as its tenant (one per partner): grants, the partner's own " +
        "restrictions, return-URL origins, the contract's commercial terms and how many clients it has. Changes " +
        "nothing.",
      tags,
      summary: "The partner's contract (exactly one tenant)",
      responses: {
        200: jsonContent(
          z.object({ tenants: z.array(TenantSchema), requestId: RequestId }),
          "Tenants.",
          examples.tenantList,
        ),
        ...partnerErrors,
      },
    }),
    async (c) => {
      const list = await listTenants({ ctx: partnerCtx(c) });
      return json(c, { tenants: shaped(z.array(TenantSchema), list), requestId: c.get("requestId") }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/tenants/{tenantId}",
      operationId: "getTenant",
      description: "The tenant by id, as in GET tenants. Changes nothing.\n\nErrors: 404 NOT_FOUND (not the " +
        "partner's tenant).",
      tags,
      summary: "Read the tenant",
      request: { params: TenantParams },
      responses: {
        200: jsonContent(TenantResponse, "Tenant.", examples.tenant),
        ...partnerErrors,
      },
    }),
    async (c) => {
      const tenant = await getTenant({ ctx: partnerCtx(c), input: c.req.valid("param") });
      return json(c, shaped(TenantResponse, { tenant, requestId: c.get("requestId") }), 200);
    },
  )
  .openapi(
    createRoute({
      method: "put",
      path: "/v1/tenants/{tenantId}/restrictions",
      operationId: "setTenantRestrictions",
      description: "Restricts the providers, strategies and risk envelope the partner's clients may use, within the " +
        "contract; `null` removes a restriction. Never widens the grant.\n\nErrors: 403 GRANT_ESCALATION, 403 " +
        "RISK_ENVELOPE_EXCEEDED, 403 SCOPE_FIELD_REJECTED, 404 unknown tenant.",
      tags,
      summary: "Restrict providers, strategies and envelope (never widen)",
      request: {
        params: TenantParams,
        body: jsonBody(RestrictionsBody, { providers: ["VENUE_A"], reason: "Piloto só na VENUE_A" }),
      },
      responses: {
        200: jsonContent(TenantResponse, "Tenant with the new restrictions.", examples.tenantRestricted),
        ...partnerErrors,
      },
    }),
    async (c) => {
      const tenant = await setRestrictions({
        ctx: partnerCtx(c),
        input: { ...c.req.valid("json"), tenantId: c.req.valid("param").tenantId },
      });
      return json(c, shaped(TenantResponse, { tenant, requestId: c.get("requestId") }), 200);
    },
  );
