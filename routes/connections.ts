/** Provider connection (`/v1/users/:id/...`): connect sessions, accounts and provider views. */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { createConnectSession, getConnectSession } from "../domain/connect/connect_sessions.ts";
import { type AppEnv, partnerCtx } from "./env.ts";
import { idempotentRoute } from "./middleware/idempotency.ts";
import { idempotentJson, json } from "./respond.ts";
import {
  errorContent,
  idempotencyErrors,
  jsonBody,
  jsonContent,
  partnerErrors,
  ProviderIdSchema,
  RequestId,
  ShortId,
} from "./schemas/common.ts";
import { ExternalUserId } from "./users.ts";
import { throwOnInvalid } from "./validation.ts";

const tags = ["Provider connection"];

const ConnectSessionSchema = z.object({
  sessionId: z.string(),
  externalUserId: z.string(),
  providerId: ProviderIdSchema,
  scheme: z.enum(["API_KEY", "AGENT_WALLET"]),
  purpose: z.enum(["CONNECT", "BUILDER_APPROVAL"]),
  status: z.enum(["PENDING", "CONNECTED", "FAILED", "EXPIRED", "CANCELLED"]),
  failureCode: z.string().nullable().openapi({
    description: "Why the last attempt failed (also while PENDING with attempts left).",
  }),
  opened: z.boolean().openapi({ description: "The client opened the link." }),
  expiresAt: z.string(),
  completedAt: z.string().nullable(),
}).openapi("ConnectSession");

const CreatedSessionResponse = ConnectSessionSchema.extend({
  connectUrl: z.string().openapi({ description: "`{connect_url}/connect#t=<token>`: hand it to the client only." }),
  requestId: RequestId,
});
const SessionResponse = ConnectSessionSchema.extend({ requestId: RequestId });

const CreateSessionBody = z.object({
  providerId: ProviderIdSchema,
  returnUrl: z.string().max(2048).optional().openapi({
    description: "https URL whose origin the contract registered; shown as a back button.",
  }),
  purpose: z.enum(["CONNECT", "BUILDER_APPROVAL"]).default("CONNECT"),
});

export const connections = new OpenAPIHono<AppEnv>({ defaultHook: throwOnInvalid })
  .openapi(
    createRoute(idempotentRoute({
      method: "post",
      path: "/v1/users/{id}/connect-sessions",
      tags,
      summary: "Open a hosted connect session (Idempotency-Key honoured); a newer one cancels the pending one",
      request: { params: z.object({ id: ExternalUserId }), body: jsonBody(CreateSessionBody) },
      responses: {
        201: jsonContent(CreatedSessionResponse, "The session, with its one-time link."),
        ...partnerErrors,
        ...idempotencyErrors,
        422: errorContent("API_NOT_CONFIGURED: BUILDER_APPROVAL needs a connected account."),
      },
    }, { optional: true })),
    (c) =>
      idempotentJson(
        c,
        201,
        (ctx) =>
          createConnectSession({ ctx, input: { externalUserId: c.req.valid("param").id, ...c.req.valid("json") } }),
        (session) => CreatedSessionResponse.parse({ ...session, requestId: c.get("requestId") }),
      ),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/users/{id}/connect-sessions/{sessionId}",
      tags,
      summary: "Read a connect session (poll every 3-5 s while PENDING, or use events)",
      request: { params: z.object({ id: ExternalUserId, sessionId: ShortId }) },
      responses: { 200: jsonContent(SessionResponse, "The session, without its link."), ...partnerErrors },
    }),
    async (c) => {
      const { id, sessionId } = c.req.valid("param");
      const session = await getConnectSession({ ctx: partnerCtx(c), input: { externalUserId: id, sessionId } });
      return json(c, SessionResponse.parse({ ...session, requestId: c.get("requestId") }), 200);
    },
  );
