/** Risk and setup (`/v1/users/:id/setup`, `/setup/preview`, `/risk`) and automation (`/v1/users/:id/automation`). */
import { routeGroup } from "./route_group.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { getAutomation, putAutomation } from "../domain/automation/automations.ts";
import { getSetup, previewSetup, putRisk, putSetup } from "../domain/setups/setups.ts";
import { partnerCtx } from "./env.ts";
import { idempotentRoute } from "./middleware/idempotency.ts";
import { idempotentJson, json, shaped } from "./respond.ts";
import {
  errorContent,
  ErrorResponse,
  idempotencyErrors,
  IK_BEHAVIOUR,
  jsonBody,
  jsonContent,
  partnerErrors,
  ProviderIdSchema,
  RequestId,
  ShortId,
  UsdAmount,
} from "./schemas/common.ts";
import * as examples from "./schemas/examples.ts";
import { AutomationSchema } from "./schemas/resources.ts";
import { ExternalUserId } from "./users.ts";

const Leverage = z.number().int().min(1).max(125);
const MaxConcurrentTrades = z.number().int().min(1).max(3).openapi({
  description: "1-3 (one real position per account).",
});
/**
 * The contract's bounds as checks zod knows (min, gt), not refinements: the
 * document then states them (minimum 1; minimum 0 with exclusiveMinimum).
 */
const OrderSizeUsd = UsdAmount.min(1, { message: "deve ser pelo menos 1" }).openapi({
  description: "USD, at least 1, up to 6 decimals.",
});
const PositiveUsd = UsdAmount.gt(0, { message: "deve ser maior que 0" }).openapi({
  description: "USD, above 0, up to 6 decimals.",
});
const Symbol = z.string().regex(/^[A-Z0-9]{2,20}$/, { message: "símbolo inválido (ex.: BTCUSDT)" });
const Percent = z.number().min(0).max(100);

const RiskAcknowledgement = z.object({
  fingerprint: z.string().min(1).max(128),
  codes: z.array(z.string().max(64)).max(32),
}).openapi({ description: "The preview's safety.fingerprint and every code of safety.flags." });

const SetupBody = z.object({
  providerId: ProviderIdSchema,
  mode: z.string().max(16).openapi({ description: "Must be REAL (else 403 PAPER_NOT_GRANTED)." }),
  enabled: z.boolean(),
  leverage: Leverage,
  orderSizeUsd: OrderSizeUsd,
  maxConcurrentTrades: MaxConcurrentTrades,
  maxMarginPerTradeUsd: UsdAmount,
  maxDailyLossUsd: UsdAmount,
  capitalBase: PositiveUsd.nullable().optional(),
  maxLossPerTrade: PositiveUsd.nullable().optional(),
  entryTimeoutMinutes: z.number().int().min(1).max(1440).nullable().optional(),
  marginType: z.enum(["ISOLATED", "CROSSED"]).optional(),
  allowedSymbols: z.array(Symbol).max(200).optional(),
  autoStopLoss: z.boolean().optional(),
  autoTakeProfit: z.boolean().optional(),
  autoBreakEven: z.boolean().optional(),
  allowMemecoins: z.boolean().optional(),
  maxOpenNotionalUsd: UsdAmount.nullable().optional(),
  maxSameDirection: z.number().int().min(1).max(3).nullable().optional(),
  maxAdverseEntryPercent: Percent.optional().openapi({ description: "Percent, e.g. 0.5 = 0.5 %." }),
});

/** PUT risk: the risk limits of the setup body, and an acknowledgement when they raise alerts. */
const RiskBody = SetupBody.pick({
  providerId: true,
  maxConcurrentTrades: true,
  maxMarginPerTradeUsd: true,
  maxDailyLossUsd: true,
  maxOpenNotionalUsd: true,
  maxSameDirection: true,
  maxLossPerTrade: true,
}).extend({ riskAcknowledgement: RiskAcknowledgement.optional() });

const SafetySchema = z.object({
  policyVersion: z.string(),
  fingerprint: z.string(),
  required: z.boolean(),
  acknowledged: z.boolean(),
  flags: z.array(z.string()),
}).openapi("Safety");

const SetupSchema = z.object({
  externalUserId: z.string(),
  providerId: ProviderIdSchema,
  mode: z.enum(["REAL", "PAPER"]).openapi({ description: "PAPER only for a never-configured setup." }),
  enabled: z.boolean(),
  market: z.string(),
  leverage: z.number().int(),
  marginType: z.enum(["ISOLATED", "CROSSED"]),
  orderSizeUsd: z.number(),
  sizingStatus: z.enum(["AVAILABLE", "CAPPED_BY_MARGIN"]),
  maxConcurrentTrades: z.number().int(),
  maxMarginPerTradeUsd: z.number(),
  maxDailyLossUsd: z.number(),
  allowedSymbols: z.array(z.string()),
  allowMemecoins: z.boolean(),
  autoStopLoss: z.boolean(),
  autoTakeProfit: z.boolean(),
  autoBreakEven: z.boolean(),
  maxAdverseEntryPercent: z.number(),
  quoteCurrency: z.string().nullable(),
  capitalBase: z.number().nullable(),
  maxLossPerTrade: z.number().nullable(),
  entryTimeoutMinutes: z.number().int().nullable(),
  allowedStrategies: z.array(z.string()),
  setupStatus: z.object({
    status: z.enum(["READY", "SETUP_INCOMPLETE", "OUTSIDE_ENVELOPE"]),
    issues: z.array(z.object({ code: z.string(), field: z.string(), message: z.string() })),
  }),
  risk: z.object({
    maxDailyLossUsd: z.number(),
    maxOpenNotionalUsd: z.number().nullable(),
    maxSameDirection: z.number().int().nullable(),
    haltedToday: z.boolean(),
  }),
  safety: SafetySchema,
  apiConfigured: z.boolean(),
}).openapi("Setup");

const SetupResponse = SetupSchema.extend({ requestId: RequestId });

const HourMinute = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, { message: "use HH:MM (UTC)" });

const AutomationBody = z.object({
  providerId: ProviderIdSchema,
  strategyId: ShortId,
  enabled: z.boolean(),
  risk: z.object({
    leverage: Leverage,
    maxMarginPerTradeUsd: UsdAmount,
    maxConcurrentTrades: MaxConcurrentTrades,
    maxDailyLossUsd: UsdAmount,
  }),
  conditions: z.object({
    symbols: z.array(Symbol).max(200).optional(),
    tradingWindowUtc: z.object({ from: HourMinute, to: HourMinute }).optional(),
    minConfidence: Percent.optional(),
  }).optional(),
});

const AutomationViewResponse = z.object({
  externalUserId: z.string(),
  tenantId: z.string(),
  providers: z.array(z.object({
    providerId: ProviderIdSchema,
    setupEnabled: z.boolean(),
    mode: z.enum(["REAL", "PAPER"]),
    haltedToday: z.boolean(),
    automation: AutomationSchema.optional(),
    newEntries: z.enum(["ALLOWED", "BLOCKED"]),
    blockReason: z.string().nullable(),
    blockDetail: z.string().nullable(),
    positionMaintenance: z.literal("CONTINUES"),
  })),
  requestId: RequestId,
});

const tags = ["Risk and setup"];

/** The walkthrough's setup (docs/walkthrough.md step 8): REAL, enabled, memecoins allowed (one flag to acknowledge). */
const WALKTHROUGH_SETUP = {
  providerId: "VENUE_A",
  mode: "REAL",
  enabled: true,
  leverage: 5,
  orderSizeUsd: 200,
  maxConcurrentTrades: 1,
  maxMarginPerTradeUsd: 50,
  maxDailyLossUsd: 100,
  capitalBase: 1000,
  maxLossPerTrade: 20,
  entryTimeoutMinutes: 30,
  allowMemecoins: true,
} as const;
const UserParams = z.object({ id: ExternalUserId });
/** A setup refused: beside `error`, what to fix. */
const SetupRefusal = ErrorResponse.extend({
  setupStatus: SetupSchema.shape.setupStatus.optional().openapi({
    description: "400 SETUP_INCOMPLETE: the fields enabling still needs.",
  }),
  safety: SafetySchema.optional().openapi({
    description: "422 RISK_ACK_REQUIRED: the verdict whose fingerprint and flags to acknowledge.",
  }),
});

const setupRefusals = {
  400: jsonContent(SetupRefusal, "VALIDATION_ERROR; SETUP_INCOMPLETE with `setupStatus`."),
  403: errorContent("PAPER_NOT_GRANTED, PROVIDER_NOT_ALLOWED, PROVIDER_NOT_GRANTED, OWNER_NOT_ALLOWED"),
  422: jsonContent(
    SetupRefusal,
    "RISK_ENVELOPE_EXCEEDED, API_NOT_CONFIGURED, RISK_ACK_REQUIRED with `safety`, DAILY_LOSS_HALT",
  ),
};

export const setupRoutes = routeGroup()
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/users/{id}/setup",
      operationId: "getSetup",
      description: "Reads the client's setup at a provider with what it means now: `setupStatus` (READY, or the " +
        "issues enabling still needs), the sizing verdict, the risk limits and whether today's loss halted new " +
        "entries, the safety verdict and whether the account is connected (`apiConfigured`). A setup never " +
        "declared reads back PAPER and disabled. Changes nothing.\n\nErrors: 400 VALIDATION_ERROR (providerId " +
        "missing or unknown), 403 PROVIDER_NOT_GRANTED / PROVIDER_NOT_ALLOWED, 404 unknown client.",
      tags,
      summary: "The client's setup at a provider (a never-configured one reads back as PAPER, disabled)",
      request: { params: UserParams, query: z.object({ providerId: ProviderIdSchema }) },
      responses: { 200: jsonContent(SetupResponse, "Setup.", examples.setupNeverConfigured), ...partnerErrors },
    }),
    async (c) => {
      const input = { externalUserId: c.req.valid("param").id, providerId: c.req.valid("query").providerId };
      const setup = await getSetup(partnerCtx(c), input);
      return json(c, shaped(SetupResponse, { ...setup, requestId: c.get("requestId") }), 200);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/v1/users/{id}/setup/preview",
      operationId: "previewSetup",
      description: "Checks a whole setup as PUT setup does (the fields enabling needs, mode REAL, the partner's risk " +
        "envelope; not the connection nor today's loss halt, which only PUT checks) and answers the safety " +
        "verdict: the flags a REAL setup raises and the fingerprint that acknowledges them in PUT setup's " +
        "`riskAcknowledgement`. Writes nothing, emits nothing; an Idempotency-Key is not needed.\n\nErrors: 400 SETUP_INCOMPLETE (enabled without capitalBase, maxLossPerTrade or " +
        "entryTimeoutMinutes; with `setupStatus`), 403 PAPER_NOT_GRANTED (mode other than REAL), 404 unknown " +
        "client, 422 RISK_ENVELOPE_EXCEEDED (leverage, margin, concurrent trades or daily loss above the envelope).",
      tags,
      summary: "Validate a setup against the contract and get its safety verdict; writes nothing",
      request: { params: UserParams, body: jsonBody(SetupBody, WALKTHROUGH_SETUP) },
      responses: {
        200: jsonContent(
          z.object({
            externalUserId: z.string(),
            providerId: ProviderIdSchema,
            safety: SafetySchema,
            requestId: RequestId,
          }),
          "The safety verdict: acknowledge its flags with its fingerprint in PUT setup.",
          examples.setupPreview,
        ),
        ...partnerErrors,
        ...setupRefusals,
      },
    }),
    async (c) => {
      const input = { externalUserId: c.req.valid("param").id, declaration: c.req.valid("json") };
      const preview = await previewSetup(partnerCtx(c), input);
      return json(c, { ...preview, requestId: c.get("requestId") }, 200);
    },
  )
  .openapi(
    createRoute(idempotentRoute({
      method: "put",
      path: "/v1/users/{id}/setup",
      operationId: "putSetup",
      description: "Declares the client's whole setup at a provider (not a patch) and answers it as stored. When the " +
        "preview raises safety flags, send `riskAcknowledgement` with its fingerprint and every flag code. " +
        IK_BEHAVIOUR +
        "\n\nErrors: 400 VALIDATION_ERROR (e.g. `orderSizeUsd` below 1, `capitalBase` or `maxLossPerTrade` not " +
        "above 0, `maxConcurrentTrades` above 3), 400 SETUP_INCOMPLETE (enabling with missing fields), 403 PAPER_NOT_GRANTED / PROVIDER_NOT_ALLOWED / PROVIDER_NOT_GRANTED / OWNER_NOT_ALLOWED, 422 " +
        "RISK_ENVELOPE_EXCEEDED / API_NOT_CONFIGURED / RISK_ACK_REQUIRED / DAILY_LOSS_HALT.",
      tags,
      summary: "Declare the whole setup (not a patch); alerts need riskAcknowledgement",
      request: {
        params: UserParams,
        body: jsonBody(SetupBody.extend({ riskAcknowledgement: RiskAcknowledgement.optional() }), {
          ...WALKTHROUGH_SETUP,
          riskAcknowledgement: { fingerprint: examples.setupPreview.safety.fingerprint, codes: ["MEMECOINS_ALLOWED"] },
        }),
      },
      responses: {
        200: jsonContent(SetupResponse, "The setup as stored.", examples.setupStored),
        ...partnerErrors,
        ...idempotencyErrors,
        ...setupRefusals,
      },
    })),
    (c) =>
      idempotentJson(
        c,
        200,
        (ctx) => putSetup(ctx, { externalUserId: c.req.valid("param").id, declaration: c.req.valid("json") }),
        (setup) => shaped(SetupResponse, { ...setup, requestId: c.get("requestId") }),
      ),
  )
  .openapi(
    createRoute(idempotentRoute({
      method: "put",
      path: "/v1/users/{id}/risk",
      operationId: "putRisk",
      description:
        "Changes only the risk limits of the setup (never leverage, size or enabled) and answers the setup as " +
        "updated. " + IK_BEHAVIOUR +
        "\n\nErrors: 400 VALIDATION_ERROR, 403 PROVIDER_NOT_ALLOWED / PROVIDER_NOT_GRANTED / OWNER_NOT_ALLOWED, " +
        "422 RISK_ENVELOPE_EXCEEDED / RISK_ACK_REQUIRED.",
      tags,
      summary: "Change only the risk limits (not leverage, size or enabled)",
      request: {
        params: UserParams,
        body: jsonBody(RiskBody, {
          providerId: "VENUE_A",
          maxConcurrentTrades: 1,
          maxMarginPerTradeUsd: 40,
          maxDailyLossUsd: 80,
          maxLossPerTrade: 15,
        }),
      },
      responses: {
        200: jsonContent(SetupResponse, "The setup as updated; maxDailyLossUsd at top level.", examples.riskLowered),
        ...partnerErrors,
        ...idempotencyErrors,
        ...setupRefusals,
      },
    })),
    (c) =>
      idempotentJson(
        c,
        200,
        (ctx) => putRisk(ctx, { externalUserId: c.req.valid("param").id, limits: c.req.valid("json") }),
        (setup) => shaped(SetupResponse, { ...setup, requestId: c.get("requestId") }),
      ),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/users/{id}/automation",
      operationId: "getAutomation",
      description: "Per provider: the automation (strategy, version, risk, runtime), whether new entries may open " +
        "now and, if not, the first gate that blocks them in order (`blockReason`, e.g. CLIENT_SUSPENDED, " +
        "AUTOMATION_OFF, STRATEGY_NOT_GRANTED, SETUP_DISABLED, OUTSIDE_TRADING_WINDOW) with `blockDetail` in " +
        "Portuguese. Position " +
        "maintenance (stops, targets, closes) continues whatever blocks entries. Changes nothing.\n\nErrors: 404 " +
        "unknown client.",
      tags: ["Automation"],
      summary: "Per provider: automation, whether new entries may open (and why not); maintenance continues",
      request: { params: UserParams },
      responses: {
        200: jsonContent(AutomationViewResponse, "Automation view.", examples.automationView),
        ...partnerErrors,
      },
    }),
    async (c) => {
      const view = await getAutomation(partnerCtx(c), { externalUserId: c.req.valid("param").id });
      return json(c, shaped(AutomationViewResponse, { ...view, requestId: c.get("requestId") }), 200);
    },
  )
  .openapi(
    createRoute(idempotentRoute({
      method: "put",
      path: "/v1/users/{id}/automation",
      operationId: "putAutomation",
      description:
        "Switches a granted and selected strategy on, or pauses it, for the client at a provider; `risk` is " +
        "required even when pausing. Pausing never closes positions. Emits `automation.updated`. " + IK_BEHAVIOUR +
        "\n\nErrors: 400 VALIDATION_ERROR (e.g. risk missing), 403 STRATEGY_NOT_GRANTED / PROVIDER_NOT_ALLOWED / " +
        "PROVIDER_NOT_GRANTED / OWNER_NOT_ALLOWED, 422 RISK_ENVELOPE_EXCEEDED.",
      tags: ["Automation"],
      summary: "Switch an automation on or pause it (pausing never closes positions); risk is always required",
      request: {
        params: UserParams,
        body: jsonBody(AutomationBody, {
          providerId: "VENUE_A",
          strategyId: "demo-trend",
          enabled: true,
          risk: { leverage: 5, maxMarginPerTradeUsd: 50, maxConcurrentTrades: 1, maxDailyLossUsd: 100 },
        }),
      },
      responses: {
        200: jsonContent(
          z.object({ externalUserId: z.string(), automation: AutomationSchema, requestId: RequestId }),
          "The automation as stored; event automation.updated.",
          examples.automationStored,
        ),
        ...partnerErrors,
        ...idempotencyErrors,
        403: errorContent("STRATEGY_NOT_GRANTED, PROVIDER_NOT_ALLOWED, PROVIDER_NOT_GRANTED, OWNER_NOT_ALLOWED"),
        422: errorContent("RISK_ENVELOPE_EXCEEDED"),
      },
    })),
    (c) =>
      idempotentJson(
        c,
        200,
        (ctx) => putAutomation(ctx, { externalUserId: c.req.valid("param").id, automation: c.req.valid("json") }),
        (result) => ({ ...result, requestId: c.get("requestId") }),
      ),
  );
