/** `GET /v1/events`: the pull feed of the partner's events. */
import { routeGroup } from "./route_group.ts";
import { json, shaped } from "./respond.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { listEvents } from "../domain/events/list_events.ts";
import { partnerCtx } from "./env.ts";
import { FreeObject, jsonContent, partnerErrors, RequestId, ShortId } from "./schemas/common.ts";
import * as examples from "./schemas/examples.ts";

const EventsQuery = z.object({
  after: ShortId.optional().openapi({ description: "eventId to resume after (the last `next`)." }),
  limit: z.coerce.number().int().min(1).max(500).default(100).openapi({ description: "1-500, default 100." }),
  type: ShortId.optional().openapi({ description: "Only events of this eventType." }),
});

export const EventSchema = z.object({
  eventId: z.string().openapi({ description: "Immutable; use it to deduplicate." }),
  eventType: z.string(),
  type: z.string().openapi({ description: "Repeats eventType (feed form)." }),
  occurredAt: z.string(),
  principalId: z.string(),
  tenantId: z.string().nullable(),
  externalUserId: z.string().nullable(),
  data: FreeObject,
}).openapi("Event");

export const EventsResponse = z.object({
  events: z.array(EventSchema),
  next: z.string().openapi({ description: "Keep it and pass it as `after` to resume." }),
  requestId: RequestId,
}).openapi("EventFeed");

export const eventsRoutes = routeGroup().openapi(
  createRoute({
    method: "get",
    path: "/v1/events",
    operationId: "listEvents",
    description: "The partner's events in the order they happened (the same events its webhook receives): clients, " +
      "the tenant and credentials, connections, automations, positions and their protection, obligations, " +
      "payments and statements. Resume with `after` = the last " +
      "`next`; an empty page keeps `next`. Deduplicate by `eventId`. Changes nothing.\n\nErrors: 400 " +
      "VALIDATION_ERROR (`after` names no event of the partner).",
    tags: ["Events"],
    summary: "Event feed, ordered and resumable",
    request: { query: EventsQuery },
    responses: { 200: jsonContent(EventsResponse, "A page of events.", examples.eventFeed), ...partnerErrors },
  }),
  async (c) => {
    const out = await listEvents({ ctx: partnerCtx(c), input: c.req.valid("query") });
    return json(c, shaped(EventsResponse, { ...out, requestId: c.get("requestId") }), 200);
  },
);
