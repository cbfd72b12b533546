/** Operator: a partner's webhook endpoint (secret shown once), its deliveries, and resending a dead one. */
import { routeGroup } from "../route_group.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { listDeliveries, resendDelivery } from "../../domain/webhooks/deliveries.ts";
import { registerWebhook } from "../../domain/webhooks/endpoints.ts";
import { operatorCtx } from "../env.ts";
import { json } from "../respond.ts";
import { FreeObject, jsonBody, jsonContent, operatorErrors, RequestId } from "../schemas/common.ts";
import * as examples from "../schemas/examples.ts";

const tags = ["Operator: webhooks"];
const app = routeGroup();
const PartnerParams = z.object({ partnerId: z.string().min(1).max(64) });

app.openapi(
  createRoute({
    method: "put",
    path: "/operator/v1/partners/{partnerId}/webhook",
    operationId: "putPartnerWebhook",
    description: "Registers the partner's webhook endpoint, or replaces it, and answers a new signing secret (in " +
      "this answer only). The partner's events from then on are delivered there, signed; on a rotation the " +
      "previous secret also signs for `overlapSeconds`.\n\nErrors: 400 VALIDATION_ERROR (not https, credentials " +
      "in the URL, or a host with a non-public address), 404 unknown partner.",
    tags,
    summary: "Register or rotate the partner's endpoint; the new signing secret is shown once",
    request: {
      params: PartnerParams,
      body: jsonBody(
        z.object({
          url: z.string().max(2048).openapi({
            description: "https, without credentials, to a host whose every address is public (checked again before " +
              "each delivery; redirects are not followed). QA with OUTBOUND_ALLOW_LOOPBACK also takes loopback, http too.",
          }),
          overlapSeconds: z.number().int().min(0).max(7 * 24 * 3600).optional().openapi({
            description: "On a rotation, how long the previous secret also signs (default 86,400).",
          }),
        }).strict(),
        { url: examples.webhookRegistered.url },
      ),
    },
    responses: {
      200: jsonContent(
        z.object({ partnerId: z.string(), url: z.string(), signingSecret: z.string(), requestId: RequestId }),
        "Registered.",
        examples.webhookRegistered,
      ),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const out = await registerWebhook(operatorCtx(c), {
      partnerId: c.req.valid("param").partnerId,
      ...c.req.valid("json"),
    });
    return json(c, { ...out, requestId: c.get("requestId") }, 200);
  },
);

app.openapi(
  createRoute({
    method: "get",
    path: "/operator/v1/partners/{partnerId}/webhook-deliveries",
    operationId: "listWebhookDeliveries",
    description: "The partner's deliveries, newest first, optionally by status (PENDING: due or retrying; " +
      "DELIVERED; DEAD: out of attempts), each with its event and every attempt's outcome. Changes nothing.",
    tags,
    summary: "The partner's deliveries, newest first, with every attempt",
    request: {
      params: PartnerParams,
      query: z.object({
        status: z.enum(["PENDING", "DELIVERED", "DEAD"]).optional(),
        limit: z.coerce.number().int().min(1).max(500).default(100),
      }),
    },
    responses: {
      200: jsonContent(
        z.object({ deliveries: z.array(FreeObject), requestId: RequestId }),
        "Deliveries.",
        examples.webhookDeliveries,
      ),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const deliveries = await listDeliveries(operatorCtx(c), {
      partnerId: c.req.valid("param").partnerId,
      ...c.req.valid("query"),
    });
    return json(c, { deliveries, requestId: c.get("requestId") }, 200);
  },
);

app.openapi(
  createRoute({
    method: "post",
    path: "/operator/v1/webhook-deliveries/{deliveryId}/resend",
    operationId: "resendWebhookDelivery",
    description: "Makes a DEAD delivery PENDING and due now, with the same eventId (the partner deduplicates by " +
      "it) and a fresh count of attempts, its history kept; the webhook-delivery job sends it.\n\nErrors: 404 unknown delivery, 409 STATE_CONFLICT (only a DEAD " +
      "delivery can be resent).",
    tags,
    summary: "Make a DEAD delivery due again (same eventId)",
    request: { params: z.object({ deliveryId: z.string().min(1).max(64) }) },
    responses: {
      200: jsonContent(
        z.object({ deliveryId: z.string(), status: z.string(), requestId: RequestId }),
        "Due again.",
        examples.deliveryResent,
      ),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const row = await resendDelivery(operatorCtx(c), c.req.valid("param").deliveryId);
    return json(c, { deliveryId: row.deliveryId, status: row.status, requestId: c.get("requestId") }, 200);
  },
);

export const operatorWebhooks = app;
