/** Positions and orders (`/v1/orders/...`, `/v1/users/:id/intents`): the service's intents and their reconciliation. */
import { routeGroup } from "./route_group.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { getIntent, listIntents, reconcileIntentOfPartner } from "../domain/execution/intent_reads.ts";
import { executeOrder, type ManualOrder, prepareOrder } from "../domain/execution/manual_orders.ts";
import { getExecutionStatus } from "../domain/execution/execution_status.ts";
import { formatDec, parseDec } from "../venues/decimal.ts";
import { partnerCtx } from "./env.ts";
import { idempotentRoute } from "./middleware/idempotency.ts";
import { idempotentJson, json, shaped } from "./respond.ts";
import {
  errorContent,
  FreeObject,
  idempotencyErrors,
  identifier,
  IK_BEHAVIOUR,
  jsonBody,
  jsonContent,
  partnerErrors,
  ProviderIdSchema,
  RequestId,
} from "./schemas/common.ts";
import { ExternalUserId } from "./users.ts";
import * as examples from "./schemas/examples.ts";

const tags = ["Positions and orders"];
const IntentId = identifier(64).refine((value) => [...value].length >= 8, { message: "deve ter de 8 a 64 caracteres" });

const IntentSchema = z.object({
  intentId: z.string(),
  providerId: ProviderIdSchema,
  status: z.string(),
  orderId: z.string().nullable(),
  clientOrderId: z.string(),
  executedQuantity: z.number(),
  executedPrice: z.number().nullable(),
  errorCode: z.string().nullable(),
  errorMessage: z.string().nullable(),
  reconciledAt: z.string().nullable(),
}).openapi("Intent");

const IntentListItem = z.object({
  intentId: z.string(),
  type: z.string(),
  providerId: ProviderIdSchema,
  symbol: z.string(),
  side: z.enum(["BUY", "SELL"]),
  quantity: z.number(),
  status: z.string(),
  executedQuantity: z.number(),
  executedPrice: z.number().nullable(),
  errorCode: z.string().nullable(),
  createdAt: z.string(),
  finalizedAt: z.string().nullable(),
}).openapi("IntentListItem");

const ReconcileResponse = z.object({
  reconciliation: z.object({
    scanned: z.number().int(),
    resolved: z.number().int(),
    stillUncertain: z.number().int(),
    orphanPositions: z.number().int(),
    orphanOrders: z.number().int(),
    details: z.array(z.object({
      kind: z.enum(["ORPHAN_POSITION", "ORPHAN_ORDER"]),
      symbol: z.string(),
      side: z.string(),
      quantity: z.number(),
      orderId: z.string().optional(),
    })),
  }),
  intent: IntentSchema,
  requestId: RequestId,
});

const IntentsResponse = z.object({
  externalUserId: z.string(),
  tenantId: z.string(),
  intents: z.array(IntentListItem),
  requestId: RequestId,
});
const IntentResponse = IntentSchema.extend({ requestId: RequestId });

const Positive = z.number().positive();
/** A JSON number as the exact decimal of its shortest form. */
const decimal = (value: number) => formatDec(parseDec(value));

const OrderBody = z.object({
  externalUserId: ExternalUserId,
  type: z.enum([
    "OPEN_POSITION",
    "PLACE_ORDER",
    "CLOSE_POSITION",
    "CANCEL_ORDER",
    "CANCEL_ALL_ORDERS",
    "UPDATE_ORDER",
    "SET_LEVERAGE",
    "SET_MARGIN_MODE",
    "SET_STOP_LOSS",
    "SET_TAKE_PROFIT",
  ]),
  providerId: ProviderIdSchema,
  intentId: IntentId.optional().openapi({ description: "8-64; makes the order idempotent at the provider." }),
  symbol: z.string().regex(/^[A-Z0-9]{2,20}$/).optional(),
  side: z.enum(["BUY", "SELL"]).optional(),
  orderType: z.enum(["LIMIT", "MARKET", "STOP_MARKET", "TAKE_PROFIT_MARKET"]).optional(),
  quantity: Positive.optional(),
  notionalUsd: Positive.optional(),
  price: Positive.optional(),
  triggerPrice: Positive.optional(),
  timeInForce: z.enum(["GTC", "IOC", "FOK", "POST_ONLY"]).optional(),
  leverage: z.number().int().min(1).max(125).optional(),
  marginMode: z.enum(["ISOLATED", "CROSS"]).optional(),
  reduceOnly: z.boolean().optional(),
  stopLossPrice: Positive.nullable().optional(),
  takeProfits: z.array(z.object({ price: Positive, share: z.number().gt(0).max(1) })).max(5).optional(),
  portion: z.number().gt(0).max(1).optional(),
  orderId: z.string().min(1).max(64).optional(),
  positionSide: z.enum(["BUY", "SELL"]).optional(),
}).openapi("OrderInput");

type OrderBodyInput = z.infer<typeof OrderBody>;

/** The body with its amounts as exact decimals, as the domain takes them. */
function manualOrder(body: OrderBodyInput): ManualOrder {
  const optional = (value: number | undefined) => value === undefined ? undefined : decimal(value);
  return {
    ...body,
    quantity: optional(body.quantity),
    notionalUsd: optional(body.notionalUsd),
    price: optional(body.price),
    triggerPrice: optional(body.triggerPrice),
    portion: optional(body.portion),
    stopLossPrice: body.stopLossPrice == null ? body.stopLossPrice : decimal(body.stopLossPrice),
    takeProfits: body.takeProfits?.map((target) => ({ price: decimal(target.price), share: decimal(target.share) })),
  };
}

const orderRefusals = {
  403: errorContent(
    "PROVIDER_NOT_ALLOWED, PROVIDER_NOT_GRANTED, B2B_ACCESS_SUSPENDED (opening denied, closing allowed)",
  ),
  422: errorContent("RISK_ENVELOPE_EXCEEDED, CREDENTIALS_MISSING, DAILY_LOSS_HALT and the admission refusals"),
};

const ExecutionStatusResponse = z.object({
  externalUserId: z.string(),
  tenantId: z.string(),
  providers: z.array(z.object({
    providerId: ProviderIdSchema,
    access: z.object({
      connection: z.string(),
      reconciledAt: z.string().nullable().openapi({ description: "Last reconciliation with the provider." }),
      uncertainIntents: z.number().int().openapi({ description: "Intents whose outcome only a query can tell." }),
    }),
  })),
  positions: z.array(z.object({
    positionId: z.string(),
    providerId: ProviderIdSchema,
    symbol: z.string(),
    side: z.enum(["LONG", "SHORT"]),
    quantity: z.number(),
    entryPrice: z.number(),
    leverage: z.number().int().nullable(),
    protection: z.object({
      status: z.enum(["PROTECTED", "PROTECTION_DEGRADED", "PROVIDER_ACCESS_LOST", "UNKNOWN"]),
      stopLossPrice: z.number().nullable(),
      takeProfitPrice: z.number().nullable(),
      reason: z.string().nullable(),
    }),
    openedAt: z.string(),
    origin: z.enum(["SERVICE", "EXTERNAL"]).openapi({
      description: "SERVICE: opened and protected by the service. EXTERNAL: held at the provider but opened " +
        "elsewhere; the service does not protect it (protection UNKNOWN, with the reason) and opens no new entry " +
        "on the account while it exists; openedAt is when the service first saw it.",
    }),
  })),
  requestId: RequestId,
}).openapi("ExecutionStatus");

/** A manual opening the service accepts (a real opening is LIMIT only), as prepared and executed on QA. */
const MANUAL_OPENING = {
  externalUserId: "user-4821",
  type: "OPEN_POSITION",
  providerId: "VENUE_A",
  intentId: "manual-btc-0001",
  symbol: "BTCUSDT",
  side: "BUY",
  orderType: "LIMIT",
  price: 69100,
  timeInForce: "GTC",
  quantity: 0.002,
  leverage: 5,
  stopLossPrice: 67000,
  takeProfits: [{ price: 71000, share: 1 }],
} as const;

const IntentLocator = z.object({ externalUserId: ExternalUserId, providerId: ProviderIdSchema });

export const orders = routeGroup()
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/users/{id}/execution-status",
      operationId: "getExecutionStatus",
      description: "From the service's own records (no provider call): per provider the connection, the last " +
        "reconciliation and how many intents only a query can settle; the open positions with their protection " +
        "(stop and next target, PROTECTED or why not). Changes nothing.\n\nErrors: 404 unknown client.",
      tags,
      summary: "Access per provider and open positions with their protection, from the service's records",
      request: { params: z.object({ id: ExternalUserId }) },
      responses: {
        200: jsonContent(ExecutionStatusResponse, "Execution status.", examples.executionStatus),
        ...partnerErrors,
      },
    }),
    async (c) => {
      const status = await getExecutionStatus(partnerCtx(c), { externalUserId: c.req.valid("param").id });
      return json(c, shaped(ExecutionStatusResponse, { ...status, requestId: c.get("requestId") }), 200);
    },
  )
  .openapi(
    createRoute(idempotentRoute({
      method: "post",
      path: "/v1/orders/prepare",
      operationId: "prepareOrder",
      description:
        "Runs every check of an order (contract, risk, billing, readiness) and records the intent as PREPARED; " +
        "sends nothing to the provider. " + IK_BEHAVIOUR +
        "\n\nErrors: 403/422 admission refusals (the spec's list, e.g. ASSET_POLICY_REQUIRED), 404 unknown client.",
      tags,
      summary: "Validate an order against contract, risk, billing and readiness; sends nothing",
      request: { body: jsonBody(OrderBody, MANUAL_OPENING) },
      responses: {
        200: jsonContent(z.object({ intent: FreeObject, requestId: RequestId }), "Prepared.", examples.orderPrepared),
        ...partnerErrors,
        ...idempotencyErrors,
        ...orderRefusals,
      },
    })),
    (c) =>
      idempotentJson(
        c,
        200,
        (ctx) => prepareOrder(ctx, manualOrder(c.req.valid("json"))),
        (result) => ({ ...result, requestId: c.get("requestId") }),
      ),
  )
  .openapi(
    createRoute(idempotentRoute({
      method: "post",
      path: "/v1/orders/execute",
      operationId: "executeOrder",
      description: "Runs the same checks as prepare and sends a real order to the provider; an `intentId` makes it " +
        "idempotent at the provider too. Position events follow (`position.opened`, `position.updated`, " +
        "`position.closed`; `protection.degraded` when a stop or target is not confirmed). When the execution is " +
        "UNCERTAIN, do not resend: read the intent and reconcile it. " + IK_BEHAVIOUR +
        "\n\nErrors: 403/422 admission refusals, 404 unknown client, 503 PROVIDER_DOWN (the order was not " +
        "taken; retry with the same key).",
      tags,
      summary: "Send an order with the same checks; UNCERTAIN means query and reconcile, never resend",
      request: { body: jsonBody(OrderBody, MANUAL_OPENING) },
      responses: {
        200: jsonContent(
          z.object({ execution: FreeObject, requestId: RequestId }),
          "The execution.",
          examples.orderExecuted,
        ),
        ...partnerErrors,
        ...idempotencyErrors,
        ...orderRefusals,
        503: errorContent("PROVIDER_DOWN: the provider did not take the order; retry with the same key."),
      },
    })),
    (c) =>
      idempotentJson(
        c,
        200,
        (ctx) => executeOrder(ctx, manualOrder(c.req.valid("json"))),
        (result) => ({ ...result, requestId: c.get("requestId") }),
      ),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/users/{id}/intents",
      operationId: "listIntents",
      description: "The client's intents (entries, stops, targets, closes and manual orders), newest first: OPEN " +
        "lists those not yet final, ALL every one. From the service's records; changes nothing.\n\nErrors: 404 " +
        "unknown client.",
      tags,
      summary: "The client's intents, newest first (OPEN: not yet final)",
      request: {
        params: z.object({ id: ExternalUserId }),
        query: z.object({
          status: z.enum(["OPEN", "ALL"]).default("OPEN"),
          limit: z.coerce.number().int().min(1).max(200).default(50),
        }),
      },
      responses: {
        200: jsonContent(IntentsResponse, "Intents.", examples.intents),
        ...partnerErrors,
      },
    }),
    async (c) => {
      const view = await listIntents(partnerCtx(c), {
        externalUserId: c.req.valid("param").id,
        ...c.req.valid("query"),
      });
      return json(c, shaped(IntentsResponse, { ...view, requestId: c.get("requestId") }), 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/orders/{intentId}",
      operationId: "getIntent",
      description: "One intent of the client at a provider, as the service recorded it (no provider call): its " +
        "status, the provider's order id, what executed and any error. An UNCERTAIN intent is settled by POST " +
        "reconcile, never by sending the order again.\n\nErrors: 404 unknown client or intent.",
      tags,
      summary: "One intent from the service's records (no provider call)",
      request: { params: z.object({ intentId: IntentId }), query: IntentLocator },
      responses: { 200: jsonContent(IntentResponse, "The intent.", examples.intent), ...partnerErrors },
    }),
    async (c) => {
      const intent = await getIntent(partnerCtx(c), { ...c.req.valid("param"), ...c.req.valid("query") });
      return json(c, shaped(IntentResponse, { ...intent, requestId: c.get("requestId") }), 200);
    },
  )
  .openapi(
    createRoute(idempotentRoute({
      method: "post",
      path: "/v1/orders/{intentId}/reconcile",
      operationId: "reconcileIntent",
      description:
        "Asks the provider what became of an intent and records it; never resends an order. Reports orphan " +
        "positions and orders found at the provider. " + IK_BEHAVIOUR +
        "\n\nErrors: 404 unknown intent or client, 503 PROVIDER_DOWN.",
      tags,
      summary: "Ask the provider what became of an intent (never resends); report orphan positions and orders",
      request: {
        params: z.object({ intentId: IntentId }),
        body: jsonBody(IntentLocator, { externalUserId: "user-4821", providerId: "VENUE_A" }),
      },
      responses: {
        200: jsonContent(ReconcileResponse, "The reconciliation.", examples.intentReconciled),
        ...partnerErrors,
        ...idempotencyErrors,
        422: errorContent("CREDENTIALS_MISSING, PROVIDER_CREDENTIAL_REJECTED"),
        503: errorContent("PROVIDER_DOWN"),
      },
    })),
    (c) =>
      idempotentJson(
        c,
        200,
        (ctx) => reconcileIntentOfPartner(ctx, { ...c.req.valid("param"), ...c.req.valid("json") }),
        (result) => shaped(ReconcileResponse, { ...result, requestId: c.get("requestId") }),
      ),
  );
