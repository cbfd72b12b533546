/** Clients (`/v1/users`): onboarding, reads, suspension and strategy selection. */
import { routeGroup } from "./route_group.ts";
import { idempotentJson, json, shaped } from "./respond.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { getClient, getClientCommercial, getClientStatus } from "../domain/clients/client_reads.ts";
import { getClientStrategies, setClientStrategies } from "../domain/clients/client_strategies.ts";
import { createClient } from "../domain/clients/create_client.ts";
import { listClients } from "../domain/clients/list_clients.ts";
import { setClientStatus } from "../domain/clients/set_client_status.ts";
import { partnerCtx } from "./env.ts";
import { idempotentRoute } from "./middleware/idempotency.ts";
import {
  idempotencyErrors,
  identifier,
  IK_BEHAVIOUR,
  jsonBody,
  jsonContent,
  partnerErrors,
  ProviderIdSchema,
  RequestId,
  ShortId,
} from "./schemas/common.ts";
import { AutomationSchema, ClientSchema, CommercialSchema, StrategySelectionSchema } from "./schemas/resources.ts";
import * as examples from "./schemas/examples.ts";

const tags = ["Clients"];
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

/**
 * The partner's own id for an end user: 1-120 printable characters, never an
 * e-mail address, and not `.` or `..` (URL clients resolve those as path
 * steps, so such a client could never be addressed). Anything else is
 * accepted and travels percent-encoded in paths.
 */
export const ExternalUserId = identifier(120)
  .refine((value) => value !== "." && value !== "..", 'não pode ser "." nem ".."')
  .refine((value) => !EMAIL.test(value), "não pode ser um endereço de e-mail")
  .openapi({
    description: "Chosen by the partner; 1-120 characters; never an e-mail address; percent-encoded in paths.",
    example: "user-4821",
  });

const UserParams = z.object({ id: ExternalUserId });
const ReasonBody = z.object({ reason: z.string().min(3).max(500) });
const ClientResponse = ClientSchema.extend({ requestId: RequestId });
const CreatedResponse = ClientSchema.extend({ created: z.boolean(), requestId: RequestId });

const AutomationSummary = z.object({ providerId: z.string(), strategyId: z.string(), enabled: z.boolean() });

const StatusResponse = z.object({
  externalUserId: z.string(),
  tenantId: z.string().nullable(),
  status: z.enum(["ACTIVE", "SUSPENDED"]),
  access: z.object({ active: z.boolean() }),
  strategies: z.array(z.string()),
  providers: z.array(z.object({
    providerId: ProviderIdSchema,
    connection: z.enum(["NOT_CONNECTED", "CONNECT_PENDING", "CONNECTED", "ACCESS_LOST", "RECOVERING", "REVOKED"]),
    setup: z.object({ mode: z.string(), enabled: z.boolean(), outsideEnvelope: z.boolean() }).nullable(),
    commercial: CommercialSchema,
  })),
  automations: z.array(AutomationSummary),
  openPositions: z.number().int(),
  requestId: RequestId,
}).openapi("ClientStatus");

const app = routeGroup();

app.openapi(
  createRoute(idempotentRoute({
    method: "post",
    path: "/v1/users",
    operationId: "createClient",
    description:
      "Creates the client (ACTIVE) for the partner's own `externalUserId`, or answers the existing one with " +
      "`created: false` (no change). Emits `client.updated` when created. " + IK_BEHAVIOUR +
      "\n\nErrors: 400 TENANT_REQUIRED (legacy multi-tenant partners), 404 unknown tenant, 409 TENANT_MISMATCH " +
      "(the pair exists under another tenant).",
    tags,
    summary: "Create a client (IK); an existing pair answers created: false",
    request: {
      body: jsonBody(z.object({ externalUserId: ExternalUserId, tenantId: ShortId.optional() }), {
        externalUserId: "user-4821",
      }),
    },
    responses: {
      201: jsonContent(CreatedResponse, "The client.", {
        externalUserId: "user-4821",
        tenantId: "ptn_qgvc6v4dwn676crg",
        status: "ACTIVE",
        createdAt: "2026-11-02T10:00:00.000Z",
        updatedAt: "2026-11-02T10:00:00.000Z",
        created: true,
        requestId: "req_0f2a2def974644f29cee30f2",
      }),
      ...partnerErrors,
      ...idempotencyErrors,
    },
  })),
  (c) =>
    idempotentJson(
      c,
      201,
      (ctx) => createClient({ ctx, input: c.req.valid("json") }),
      (client) => shaped(CreatedResponse, { ...client, requestId: c.get("requestId") }),
    ),
);

const ListResponse = z.object({
  users: z.array(ClientSchema),
  nextCursor: z.string().nullable().openapi({ description: "Pass as `cursor` for the next page; null on the last." }),
  requestId: RequestId,
});

app.openapi(
  createRoute({
    method: "get",
    path: "/v1/users",
    operationId: "listClients",
    description: "The partner's clients, newest first, filtered by status; page on with `cursor` = `nextCursor` " +
      "until it is null. Changes nothing.\n\nErrors: 400 VALIDATION_ERROR (a cursor this list did not give).",
    tags,
    summary: "List clients, newest first",
    request: {
      query: z.object({
        tenantId: ShortId.optional(),
        status: z.enum(["ACTIVE", "SUSPENDED"]).optional(),
        limit: z.coerce.number().int().min(1).max(500).default(100),
        cursor: z.string().min(1).max(200).optional().openapi({ description: "nextCursor of the previous page." }),
      }),
    },
    responses: { 200: jsonContent(ListResponse, "A page of clients.", examples.clientList), ...partnerErrors },
  }),
  async (c) => {
    const out = await listClients({ ctx: partnerCtx(c), input: c.req.valid("query") });
    return json(c, shaped(ListResponse, { ...out, requestId: c.get("requestId") }), 200);
  },
);

const SingleResponse = ClientSchema.extend({ automations: z.array(AutomationSchema), requestId: RequestId });

app.openapi(
  createRoute({
    method: "get",
    path: "/v1/users/{id}",
    operationId: "getClient",
    description: "The client and its automations at every provider. Changes nothing.\n\nErrors: 404 unknown client.",
    tags,
    summary: "Read a client with its automations",
    request: { params: UserParams },
    responses: {
      200: jsonContent(SingleResponse, "The client.", examples.clientWithAutomation),
      ...partnerErrors,
    },
  }),
  async (c) => {
    const client = await getClient({ ctx: partnerCtx(c), input: { externalUserId: c.req.valid("param").id } });
    return json(c, shaped(SingleResponse, { ...client, requestId: c.get("requestId") }), 200);
  },
);

app.openapi(
  createRoute({
    method: "get",
    path: "/v1/users/{id}/status",
    operationId: "getClientStatus",
    description: "One read for a client's screen: whether it is active, its selected strategies, and per " +
      "provider the connection, the setup (mode, enabled, outside the partner's envelope), the commercial " +
      "status; its automations and how many positions are open. Changes nothing.\n\nErrors: 404 unknown client.",
    tags,
    summary: "Overview: access, strategies, providers, automations, open positions",
    request: { params: UserParams },
    responses: { 200: jsonContent(StatusResponse, "Status.", examples.clientStatus), ...partnerErrors },
  }),
  async (c) => {
    const out = await getClientStatus({ ctx: partnerCtx(c), input: { externalUserId: c.req.valid("param").id } });
    return json(c, shaped(StatusResponse, { ...out, requestId: c.get("requestId") }), 200);
  },
);

const CommercialResponse = z.object({
  clientStatus: z.enum(["ACTIVE", "SUSPENDED"]),
  providers: z.array(CommercialSchema),
  requestId: RequestId,
});

app.openapi(
  createRoute({
    method: "get",
    path: "/v1/users/{id}/commercial",
    operationId: "getClientCommercial",
    description: "Per provider, whether the client may trade commercially (`allowed`) and why: the B2B contract's " +
      "state, a grace period (`graceUntil`) or an overdue obligation. Changes nothing.\n\nErrors: 404 unknown " +
      "client.",
    tags,
    summary: "Commercial status per provider",
    request: { params: UserParams },
    responses: {
      200: jsonContent(CommercialResponse, "Commercial status.", examples.clientCommercial),
      ...partnerErrors,
    },
  }),
  async (c) => {
    const out = await getClientCommercial({ ctx: partnerCtx(c), input: { externalUserId: c.req.valid("param").id } });
    return json(c, shaped(CommercialResponse, { ...out, requestId: c.get("requestId") }), 200);
  },
);

for (const [action, status] of [["suspend", "SUSPENDED"], ["reactivate", "ACTIVE"]] as const) {
  app.openapi(
    createRoute({
      method: "post",
      path: `/v1/users/{id}/${action}`,
      operationId: `${action}Client`,
      description: status === "SUSPENDED"
        ? "Suspends the client (SUSPENDED): new entries and writes are refused; reads and position maintenance " +
          "continue. Emits `client.updated`.\n\nErrors: 404 unknown client."
        : "Reactivates the client (ACTIVE). Other gates (billing, connection, setup) still apply. Emits " +
          "`client.updated`.\n\nErrors: 404 unknown client.",
      tags,
      summary: status === "SUSPENDED"
        ? "Suspend a client: new entries and writes blocked, maintenance continues"
        : "Reactivate a client (other gates still apply)",
      request: {
        params: UserParams,
        body: jsonBody(ReasonBody, { reason: status === "SUSPENDED" ? "Pedido do cliente" : "Cliente voltou" }),
      },
      responses: {
        200: jsonContent(
          ClientResponse,
          "The client.",
          status === "SUSPENDED" ? examples.clientSuspended : examples.clientReactivated,
        ),
        ...partnerErrors,
      },
    }),
    async (c) => {
      const client = await setClientStatus({
        ctx: partnerCtx(c),
        input: { externalUserId: c.req.valid("param").id, status, reason: c.req.valid("json").reason },
      });
      return json(c, shaped(ClientResponse, { ...client, requestId: c.get("requestId") }), 200);
    },
  );
}

app.openapi(
  createRoute({
    method: "get",
    path: "/v1/users/{id}/strategies",
    operationId: "getClientStrategies",
    description: "The strategies the partner's grant allows (`granted`) and those the client may run " +
      "(`selected`; `selectionMode` ALL_GRANTED follows the grant as it changes). Changes nothing.\n\nErrors: " +
      "404 unknown client.",
    tags,
    summary: "Granted and selected strategies",
    request: { params: UserParams },
    responses: {
      200: jsonContent(StrategySelectionSchema, "Selection.", examples.strategySelection),
      ...partnerErrors,
    },
  }),
  async (c) => {
    const out = await getClientStrategies({ ctx: partnerCtx(c), input: { externalUserId: c.req.valid("param").id } });
    return json(c, shaped(StrategySelectionSchema, { ...out, requestId: c.get("requestId") }), 200);
  },
);

app.openapi(
  createRoute({
    method: "put",
    path: "/v1/users/{id}/strategies",
    operationId: "setClientStrategies",
    description:
      "Selects which granted strategies the client may run: `null` selects all granted (ALL_GRANTED), `[]` none. " +
      "Emits `client.updated`.\n\nErrors: 403 GRANT_ESCALATION (a strategy outside the grant), 403 " +
      "STRATEGY_NOT_AVAILABLE (not published), 404 unknown client.",
    tags,
    summary: "Select strategies: null = all granted, [] = none",
    request: {
      params: UserParams,
      body: jsonBody(z.object({ strategyIds: z.array(ShortId).max(100).nullable() }), { strategyIds: ["demo-trend"] }),
    },
    responses: {
      200: jsonContent(StrategySelectionSchema, "The new selection.", examples.strategiesSelected),
      ...partnerErrors,
    },
  }),
  async (c) => {
    const out = await setClientStrategies({
      ctx: partnerCtx(c),
      input: { externalUserId: c.req.valid("param").id, strategyIds: c.req.valid("json").strategyIds },
    });
    return json(c, shaped(StrategySelectionSchema, { ...out, requestId: c.get("requestId") }), 200);
  },
);

export const users = app;
