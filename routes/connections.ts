/** Provider connection (`/v1/users/:id/...`): connect sessions, accounts and provider views. */
import { routeGroup } from "./route_group.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { createConnectSession, getConnectSession } from "../domain/connect/connect_sessions.ts";
import { getBalanceView, getPositions } from "../domain/accounts/live_reads.ts";
import { listAccounts, revokeAccount, testAccount } from "../domain/accounts/manage_accounts.ts";
import { listProviderViews } from "../domain/accounts/provider_views.ts";
import { ApiError } from "../domain/errors.ts";
import { partnerCtx } from "./env.ts";
import { idempotentRoute } from "./middleware/idempotency.ts";
import { idempotentJson, json, shaped } from "./respond.ts";
import {
  errorContent,
  ErrorResponse,
  idempotencyErrors,
  jsonBody,
  jsonContent,
  partnerErrors,
  ProviderIdSchema,
  RequestId,
  ShortId,
} from "./schemas/common.ts";
import { CommercialSchema } from "./schemas/resources.ts";
import { ExternalUserId } from "./users.ts";
import * as examples from "./schemas/examples.ts";

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

const PermissionsSchema = z.object({ canRead: z.boolean(), canFutures: z.boolean(), canWithdraw: z.boolean() });

const AccountSchema = z.object({
  providerId: ProviderIdSchema,
  scheme: z.enum(["API_KEY", "AGENT_WALLET"]),
  configured: z.boolean(),
  status: z.enum(["CONNECTED", "REVOKED", "NOT_CONNECTED"]),
  capabilities: z.array(z.string()),
  permissions: PermissionsSchema,
  accountHint: z.string().nullable(),
  updatedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  secretRetainedForReconciliation: z.boolean().optional().openapi({
    description: "On a revoked account: true while a position is open, to protect and close it.",
  }),
}).openapi("Account");

const ProviderViewSchema = z.object({
  providerId: ProviderIdSchema,
  name: z.string(),
  rollout: z.string(),
  connectionScheme: z.enum(["API_KEY", "AGENT_WALLET"]),
  connectionFlow: z.literal("HOSTED"),
  connection: z.enum(["NOT_CONNECTED", "CONNECT_PENDING", "CONNECTED", "ACCESS_LOST", "RECOVERING", "REVOKED"]),
  permissions: PermissionsSchema.nullable(),
  accessExpiresAt: z.string().nullable().openapi({
    description: "When the venue ends the connection by itself (VENUE_B: the agent approval's validity). " +
      "Renew before it with a connect session of purpose CONNECT; `provider.access_expiring` announces it " +
      "two weeks ahead. null when the credential has no end, or the account is not connected.",
  }),
  eligibleForNewEntries: z.boolean(),
  commercial: CommercialSchema,
  builder: z.object({
    required: z.boolean(),
    feeTenthsBps: z.number().int(),
    approvalRequiredFromWallet: z.boolean(),
    approvedByUser: z.boolean().nullable().openapi({ description: "null: the check was inconclusive." }),
    approvalStatus: z.enum(["APPROVED", "REQUIRED", "UNKNOWN", "NOT_CONNECTED"]),
    approvedMaxFeeTenthsBps: z.number().int().nullable(),
  }).nullable(),
}).openapi("ClientProviderView");

const BalanceViewSchema = z.object({
  providerId: ProviderIdSchema,
  balances: z.array(z.object({
    asset: z.string(),
    free: z.number(),
    total: z.number(),
    usdValue: z.number().nullable(),
  })),
  positions: z.array(z.object({
    symbol: z.string(),
    side: z.enum(["LONG", "SHORT"]),
    quantity: z.number(),
    entryPrice: z.number(),
    markPrice: z.number(),
    unrealizedPnlUsd: z.number(),
    unrealizedPnlPercent: z.number().openapi({ description: "On the initial margin, 2 decimals." }),
    leverage: z.number(),
    marginMode: z.enum(["ISOLATED", "CROSSED"]),
    liquidationPrice: z.number().nullable(),
    providerId: ProviderIdSchema,
  })),
  orders: z.array(z.object({
    orderId: z.string(),
    clientOrderId: z.string().nullable(),
    symbol: z.string(),
    side: z.enum(["BUY", "SELL"]),
    type: z.string(),
    status: z.string(),
    quantity: z.number(),
    filledQuantity: z.number(),
    price: z.number().nullable(),
    averagePrice: z.number().nullable(),
    triggerPrice: z.number().nullable(),
    reduceOnly: z.boolean(),
    timeInForce: z.string().nullable(),
    createdAt: z.string(),
    providerId: ProviderIdSchema,
  })),
}).openapi("BalanceView");

const ProvidersResponse = z.object({
  externalUserId: z.string(),
  tenantId: z.string(),
  providers: z.array(ProviderViewSchema),
  requestId: RequestId,
});
const AccountsResponse = z.object({
  externalUserId: z.string(),
  accounts: z.array(AccountSchema),
  requestId: RequestId,
});
const RevokedResponse = z.object({ externalUserId: z.string(), account: AccountSchema, requestId: RequestId });
const BalanceResponse = BalanceViewSchema.extend({ requestId: RequestId });
const PositionsResponse = z.object({
  providerId: ProviderIdSchema,
  positions: BalanceViewSchema.shape.positions,
  requestId: RequestId,
});

const UserParams = z.object({ id: ExternalUserId });
const AccountParams = z.object({ id: ExternalUserId, provider: ProviderIdSchema });
const ProviderQuery = z.object({ providerId: ProviderIdSchema });

/** The provider refusals of the routes whose contract names PROVIDER_NOT_GRANTED alone. */
const PROVIDER_NOT_GRANTED = "PROVIDER_NOT_GRANTED: a provider outside the effective grant (outside the contract " +
  "or removed by the partner's restriction)";
/** The live reads name PROVIDER_NOT_ALLOWED: the two meanings stay apart there. */
const liveReadRefusals = errorContent(
  "PRINCIPAL_NOT_ACTIVE; PROVIDER_NOT_ALLOWED: a provider outside the contract; PROVIDER_NOT_GRANTED: one the " +
    "partner's restriction removed.",
);

const TestResponse = z.object({
  externalUserId: z.string(),
  tenantId: z.string(),
  providerId: ProviderIdSchema,
  success: z.boolean(),
  error: z.string().nullable().openapi({
    description: "On failure: why, in Portuguese (this body has no error.code).",
  }),
  latencyMs: z.number().int(),
  permissions: PermissionsSchema.nullable(),
  requestId: RequestId,
}).openapi("ConnectionTest");

export const connections = routeGroup()
  .openapi(
    createRoute(idempotentRoute({
      method: "post",
      path: "/v1/users/{id}/connect-sessions",
      operationId: "createConnectSession",
      description:
        "Opens a hosted connect session (PENDING) and answers its one-time `connectUrl`: hand it to the client " +
        "only. A newer session cancels the pending one. The outcome arrives as `provider.connected` or " +
        "`provider.connect_failed` (or poll the session). An `Idempotency-Key` is optional here: when sent, a retry " +
        "answers the first session instead of opening another.\n\nErrors: 403 RETURN_URL_NOT_ALLOWED / " +
        "PROVIDER_NOT_GRANTED / CLIENT_SUSPENDED, 422 API_NOT_CONFIGURED (BUILDER_APPROVAL without a connected " +
        "account).",
      tags,
      summary: "Open a hosted connect session (Idempotency-Key honoured); a newer one cancels the pending one",
      request: {
        params: z.object({ id: ExternalUserId }),
        body: jsonBody(CreateSessionBody, {
          providerId: "VENUE_A",
          returnUrl: "https://app.acme.example/conta",
        }),
      },
      responses: {
        201: jsonContent(
          CreatedSessionResponse,
          "The session, with its one-time link.",
          examples.connectSessionCreated,
        ),
        ...partnerErrors,
        ...idempotencyErrors,
        403: errorContent(
          `PRINCIPAL_NOT_ACTIVE, SCOPE_FIELD_REJECTED; RETURN_URL_NOT_ALLOWED; ${PROVIDER_NOT_GRANTED}; ` +
            "CLIENT_SUSPENDED (checked after the provider and the returnUrl).",
        ),
        422: errorContent("API_NOT_CONFIGURED: BUILDER_APPROVAL needs a connected account."),
      },
    }, { optional: true })),
    (c) =>
      idempotentJson(
        c,
        201,
        (ctx) =>
          createConnectSession({ ctx, input: { externalUserId: c.req.valid("param").id, ...c.req.valid("json") } }),
        (session) => shaped(CreatedSessionResponse, { ...session, requestId: c.get("requestId") }),
      ),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/users/{id}/connect-sessions/{sessionId}",
      operationId: "getConnectSession",
      description: "The session's state (PENDING, then CONNECTED, FAILED with `failureCode`, EXPIRED or CANCELLED), " +
        "whether the client opened the link, and when it completed; never the link itself. Changes nothing." +
        "\n\nErrors: 404 unknown client or session.",
      tags,
      summary: "Read a connect session (poll every 3-5 s while PENDING, or use events)",
      request: { params: z.object({ id: ExternalUserId, sessionId: ShortId }) },
      responses: {
        200: jsonContent(SessionResponse, "The session, without its link.", examples.connectSessionConnected),
        ...partnerErrors,
      },
    }),
    async (c) => {
      const { id, sessionId } = c.req.valid("param");
      const session = await getConnectSession({ ctx: partnerCtx(c), input: { externalUserId: id, sessionId } });
      return json(c, shaped(SessionResponse, { ...session, requestId: c.get("requestId") }), 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/users/{id}/providers",
      operationId: "listClientProviders",
      description: "Per provider of the partner's grant: the rollout and how the client connects (scheme, hosted " +
        "flow), the connection and its permissions, when agent access expires, whether new entries could open " +
        "there, the commercial status and, for VENUE_B, the builder-fee approval. Changes nothing.\n\nErrors: " +
        "404 unknown client.",
      tags,
      summary: "Per provider: connection, permissions, eligibility, commercial status, builder approval",
      request: { params: UserParams },
      responses: {
        200: jsonContent(ProvidersResponse, "Provider views.", examples.clientProviders),
        ...partnerErrors,
      },
    }),
    async (c) => {
      const view = await listProviderViews(partnerCtx(c), { externalUserId: c.req.valid("param").id });
      return json(c, shaped(ProvidersResponse, { ...view, requestId: c.get("requestId") }), 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/users/{id}/accounts",
      operationId: "listAccounts",
      description: "The client's account at each provider: scheme, whether a credential is stored, the connection " +
        "status, permissions and a hint of the account (never key or secret material). Changes nothing." +
        "\n\nErrors: 404 unknown client.",
      tags,
      summary: "The client's accounts per provider (never credential material)",
      request: { params: UserParams },
      responses: {
        200: jsonContent(AccountsResponse, "Accounts.", examples.accounts),
        ...partnerErrors,
      },
    }),
    async (c) => {
      const view = await listAccounts(partnerCtx(c), { externalUserId: c.req.valid("param").id });
      return json(c, shaped(AccountsResponse, { ...view, requestId: c.get("requestId") }), 200);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/v1/users/{id}/accounts/{provider}/test",
      operationId: "testAccount",
      description: "Calls the provider read-only with the stored credential. 200 `success: true`: the stored " +
        "permissions are refreshed. 400 `success: false`: the provider refused the credential; nothing changes, " +
        "not even the connection.\n\nErrors: 400 API_NOT_CONFIGURED (no credential stored), 403 " +
        "PROVIDER_NOT_GRANTED, 404 unknown client, 503 PROVIDER_DOWN.",
      tags,
      summary: "Test the stored credential read-only; success refreshes permissions, failure changes nothing",
      request: { params: AccountParams },
      responses: {
        200: jsonContent(TestResponse, "The credential works.", examples.accountTest),
        ...partnerErrors,
        403: errorContent(`PRINCIPAL_NOT_ACTIVE; ${PROVIDER_NOT_GRANTED}.`),
        400: jsonContent(
          z.union([TestResponse, ErrorResponse]),
          "`success: false` in this body when the provider refused the credential; API_NOT_CONFIGURED otherwise.",
        ),
        503: errorContent("PROVIDER_DOWN"),
      },
    }),
    async (c) => {
      const { id, provider } = c.req.valid("param");
      const result = await testAccount(partnerCtx(c), { externalUserId: id, providerId: provider });
      return json(c, shaped(TestResponse, { ...result, requestId: c.get("requestId") }), result.success ? 200 : 400);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/v1/users/{id}/accounts/{provider}",
      operationId: "revokeAccount",
      description: "Disconnects the client's account at a provider: REVOKED, new entries blocked, history and trades " +
        "kept; the secret is kept only while a position is open, to protect and close it. Emits " +
        "`provider.disconnected`.\n\nErrors: 404 unknown client, 422 API_NOT_CONFIGURED (nothing ever connected).",
      tags,
      summary: "Disconnect: REVOKED, new entries blocked, history kept",
      request: { params: AccountParams },
      responses: {
        200: jsonContent(RevokedResponse, "The revoked account.", examples.accountRevoked),
        ...partnerErrors,
        422: errorContent("API_NOT_CONFIGURED: nothing was ever connected at this provider."),
      },
    }),
    async (c) => {
      const { id, provider } = c.req.valid("param");
      const result = await revokeAccount(partnerCtx(c), { externalUserId: id, providerId: provider });
      return json(c, shaped(RevokedResponse, { ...result, requestId: c.get("requestId") }), 200);
    },
  )
  .openapi(
    createRoute({
      method: "put",
      path: "/v1/users/{id}/accounts/{provider}",
      operationId: "putAccountCredentials",
      // Kept only to refuse old clients; it has no success answer to document (redocly: operation-2xx-response).
      hide: true,
      tags,
      summary: "Legacy: secrets are never accepted over REST (always 403 HOSTED_CONNECT_REQUIRED)",
      request: { params: AccountParams },
      responses: { ...partnerErrors, 403: errorContent("HOSTED_CONNECT_REQUIRED: always.") },
    }),
    () => {
      throw new ApiError("HOSTED_CONNECT_REQUIRED");
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/users/{id}/account",
      operationId: "getBalanceView",
      description: "Balances, open positions and open orders (the service's stops and targets included). " +
        "Read live from the provider with the client's stored credential. When the provider refuses it, the " +
        "account becomes ACCESS_LOST (event `provider.access_lost`) and the answer is 422 " +
        "PROVIDER_CREDENTIAL_REJECTED: the client reconnects through a connect session. Changes nothing else." +
        "\n\nErrors: 403 PROVIDER_NOT_ALLOWED / PROVIDER_NOT_GRANTED, 404 unknown client, 422 CREDENTIALS_MISSING " +
        "(no account connected) / PROVIDER_CREDENTIAL_REJECTED, 503 PROVIDER_DOWN.",
      tags,
      summary: "Balances, positions and open orders, read live from the provider",
      request: { params: UserParams, query: ProviderQuery },
      responses: {
        200: jsonContent(BalanceResponse, "Balance view.", examples.balanceView),
        ...partnerErrors,
        403: liveReadRefusals,
        422: errorContent("CREDENTIALS_MISSING, PROVIDER_CREDENTIAL_REJECTED"),
        503: errorContent("PROVIDER_DOWN"),
      },
    }),
    async (c) => {
      const input = { externalUserId: c.req.valid("param").id, providerId: c.req.valid("query").providerId };
      const view = await getBalanceView(partnerCtx(c), input);
      return json(c, shaped(BalanceResponse, { ...view, requestId: c.get("requestId") }), 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/users/{id}/positions",
      operationId: "listPositions",
      description: "Open positions with mark price, unrealized PnL and liquidation price. " +
        "Read live from the provider with the client's stored credential. When the provider refuses it, the " +
        "account becomes ACCESS_LOST (event `provider.access_lost`) and the answer is 422 " +
        "PROVIDER_CREDENTIAL_REJECTED: the client reconnects through a connect session. Changes nothing else." +
        "\n\nErrors: 403 PROVIDER_NOT_ALLOWED / PROVIDER_NOT_GRANTED, 404 unknown client, 422 CREDENTIALS_MISSING " +
        "(no account connected) / PROVIDER_CREDENTIAL_REJECTED, 503 PROVIDER_DOWN.",
      tags,
      summary: "Open positions, read live from the provider",
      request: { params: UserParams, query: ProviderQuery },
      responses: {
        200: jsonContent(
          z.object({
            providerId: ProviderIdSchema,
            positions: BalanceViewSchema.shape.positions,
            requestId: RequestId,
          }),
          "Positions.",
          examples.livePositions,
        ),
        ...partnerErrors,
        403: liveReadRefusals,
        422: errorContent("CREDENTIALS_MISSING"),
        503: errorContent("PROVIDER_DOWN"),
      },
    }),
    async (c) => {
      const input = { externalUserId: c.req.valid("param").id, providerId: c.req.valid("query").providerId };
      const view = await getPositions(partnerCtx(c), input);
      return json(c, shaped(PositionsResponse, { ...view, requestId: c.get("requestId") }), 200);
    },
  );
