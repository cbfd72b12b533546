/** Operator: provider real-execution flag, strategy publication and asset entry policies. */
import { routeGroup } from "../route_group.ts";
import { json, shaped } from "../respond.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { setProviderSettings } from "../../domain/catalog/provider_settings.ts";
import { listProviderReadiness } from "../../domain/gates/provider_readiness.ts";
import { deleteStrategy, listStrategies, putStrategy } from "../../domain/catalog/operator_strategies.ts";
import { deleteAssetPolicy, listAssetPolicies, putAssetPolicy } from "../../domain/catalog/asset_policies.ts";
import { operatorCtx } from "../env.ts";
import { jsonBody, jsonContent, operatorErrors, ProviderIdSchema, RequestId, UsdAmount } from "../schemas/common.ts";
import { StrategyBody } from "./schemas.ts";
import * as examples from "../schemas/examples.ts";
import { EVM_NETWORKS } from "../../config.ts";
import { setPaymentRecipient } from "../../domain/payments/recipients.ts";
import { setDepositXpub } from "../../domain/payments/deposit_invoices.ts";
import { setVenueBPaymentWallet } from "../../domain/payments/venue_b_send.ts";

const ProviderSettingResponse = z.object({
  providerId: ProviderIdSchema,
  realExecution: z.enum(["ENABLED", "NOT_VALIDATED"]),
  maxEntriesPerSignal: z.number().int().nullable(),
  requestId: RequestId,
});
const ProviderReadinessList = z.object({
  providers: z.array(z.object({
    providerId: ProviderIdSchema,
    realExecution: z.enum(["ENABLED", "NOT_VALIDATED"]).openapi({
      description: "Whether real execution was validated for the provider (entry gate 8).",
    }),
    maxEntriesPerSignal: z.number().int().nullable().openapi({
      description: "Most entries one signal opens at this provider; null for no limit.",
    }),
    builder: z.object({
      address: z.string().openapi({ description: "The platform's builder beneficiary (lowercase)." }),
      mode: z.string().nullable().openapi({
        description: "The builder account's mode at the venue as it answers it; null when it could not be read.",
      }),
      accruesFees: z.boolean().nullable().openapi({
        description: "Whether builder fees accrue to it in that mode (standard mode only); null when unknown.",
      }),
      status: z.enum(["ACCRUING", "NOT_ACCRUING", "UNKNOWN"]).openapi({
        description: "NOT_ACCRUING refuses paid openings BUILDER_CONFIG_INVALID, UNKNOWN refuses them " +
          "READINESS_UNKNOWN (entry gate 9), until the builder is back in standard mode.",
      }),
    }).nullable().openapi({ description: "Builder-fee venues only, read fresh at the venue; null elsewhere." }),
  })),
  requestId: RequestId,
});
/**
 * A stored strategy: its id and the fields PUT takes. Spread rather than
 * `extend`ed: extending the strict, registered StrategyInput would be written
 * as an allOf of two closed objects, which no strategy could satisfy.
 */
const StrategyWithId = z.object({ strategyId: z.string(), ...StrategyBody.shape }).openapi("Strategy");
const StrategyResponse = z.object({ strategy: StrategyWithId, requestId: RequestId });
const tags = ["Operator: catalog"];
const app = routeGroup();

app.openapi(
  createRoute({
    method: "put",
    path: "/operator/v1/providers/{providerId}",
    operationId: "putProvider",
    description: "Validates real execution at a provider (`realExecution: true` lets entry gate 8 pass there; false " +
      "stops new entries there again) and sets how many entries one signal may open there. Takes effect for the " +
      "next entry; positions already open are maintained either way. Emits no event.\n\nErrors: 400 " +
      "VALIDATION_ERROR.",
    tags,
    summary: "Mark real execution validated (or not) for a provider, and cap the entries one signal opens there",
    request: {
      params: z.object({ providerId: ProviderIdSchema }),
      body: jsonBody(
        z.object({
          realExecution: z.boolean(),
          maxEntriesPerSignal: z.number().int().min(1).nullable().optional().openapi({
            description: "Most entries one signal opens at this provider; eligible accounts beyond it are refused " +
              "SIGNAL_DISTRIBUTION_LIMIT and go first at later signals. Absent or null: no limit.",
          }),
        }).strict(),
        { realExecution: true },
      ),
    },
    responses: {
      200: jsonContent(ProviderSettingResponse, "Saved.", examples.providerSetting),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const out = await setProviderSettings({
      ctx: operatorCtx(c),
      input: {
        providerId: c.req.valid("param").providerId,
        realExecution: body.realExecution,
        maxEntriesPerSignal: body.maxEntriesPerSignal ?? null,
      },
    });
    return json(c, shaped(ProviderSettingResponse, { ...out, requestId: c.get("requestId") }), 200);
  },
);

app.openapi(
  createRoute({
    method: "get",
    path: "/operator/v1/providers",
    operationId: "listOperatorProviders",
    description: "Per provider: whether real execution is validated, the entry cap per signal and, for builder-fee " +
      "venues, the builder account's mode read fresh at the venue and whether its fees accrue (NOT_ACCRUING or " +
      "UNKNOWN refuse paid openings). Changes nothing.",
    tags,
    summary: "Each provider's readiness beyond a client's account: real execution, entry cap, the builder's mode",
    responses: {
      200: jsonContent(ProviderReadinessList, "Providers.", examples.operatorProviders),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const out = await listProviderReadiness({ ctx: operatorCtx(c) });
    return json(c, shaped(ProviderReadinessList, { ...out, requestId: c.get("requestId") }), 200);
  },
);

app.openapi(
  createRoute({
    method: "put",
    path: "/operator/v1/strategies/{strategyId}",
    operationId: "putStrategy",
    description: "Creates or replaces a strategy of the catalog, whole. PUBLISHED strategies can be granted and run; " +
      "DRAFT ones are invisible to partners; RETIRED ones stop opening entries while automations that name them " +
      "keep their history. Emits no event.\n\nErrors: 400 VALIDATION_ERROR.",
    tags,
    summary: "Create or replace a strategy (PUBLISHED, DRAFT or RETIRED)",
    request: {
      params: z.object({ strategyId: z.string().regex(/^[A-Za-z0-9_.:-]{2,64}$/) }),
      body: jsonBody(StrategyBody, {
        version: "0.1.0",
        status: "DRAFT",
        displayName: "Demo: rompimento (QA)",
        summary: "Rascunho: entra no rompimento da máxima do dia em BTC.",
        supportedProviders: ["VENUE_A"],
        supportedMarkets: ["BTCUSDT"],
        configurableParameters: [],
        riskRequirements: { maxLeverage: 10, requiresStopLoss: true },
      }),
    },
    responses: {
      200: jsonContent(StrategyResponse, "Saved.", examples.strategyStored),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const strategy = await putStrategy({
      ctx: operatorCtx(c),
      input: { strategyId: c.req.valid("param").strategyId, ...c.req.valid("json") },
    });
    return json(c, shaped(StrategyResponse, { strategy, requestId: c.get("requestId") }), 200);
  },
);

const StrategiesResponse = z.object({ strategies: z.array(StrategyWithId), requestId: RequestId });
const StrategyPath = z.object({ strategyId: z.string().regex(/^[A-Za-z0-9_.:-]{2,64}$/) });

app.openapi(
  createRoute({
    method: "get",
    path: "/operator/v1/strategies",
    operationId: "listOperatorStrategies",
    description: "The whole catalog, PUBLISHED, DRAFT and RETIRED. Changes nothing.",
    tags,
    summary: "Every strategy, whatever its status",
    responses: {
      200: jsonContent(StrategiesResponse, "Strategies.", examples.operatorStrategies),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const strategies = await listStrategies(operatorCtx(c));
    return json(c, shaped(StrategiesResponse, { strategies, requestId: c.get("requestId") }), 200);
  },
);

app.openapi(
  createRoute({
    method: "delete",
    path: "/operator/v1/strategies/{strategyId}",
    operationId: "deleteStrategy",
    description: "Removes a strategy from the catalog.\n\nErrors: 404 NOT_FOUND, 409 STATE_CONFLICT (an automation " +
      "names it: retire it with PUT status RETIRED instead).",
    tags,
    summary: "Remove a strategy no automation uses (one in use answers 409: retire it instead)",
    request: { params: StrategyPath },
    responses: {
      200: jsonContent(z.object({ requestId: RequestId }), "Removed.", examples.strategyDeleted),
      ...operatorErrors,
    },
  }),
  async (c) => {
    await deleteStrategy(operatorCtx(c), { strategyId: c.req.valid("param").strategyId });
    return json(c, { requestId: c.get("requestId") }, 200);
  },
);

/** An aggregate cap: absent or null, none. */
const AggregateCap = UsdAmount.nullable().optional();
const AssetPolicyBody = z.object({
  minNotionalUsd: UsdAmount,
  maxNotionalUsd: UsdAmount,
  maxSpreadBps: z.number().int().min(0).max(10_000),
  maxSlippageBps: z.number().int().min(0).max(10_000),
  maxBookFraction: z.number().gt(0).max(1),
  memecoin: z.boolean().optional(),
  maxSignalNotionalUsd: AggregateCap.describe("Platform cap on the entries of one signal together (USD notional)."),
  maxAssetNotionalUsd: AggregateCap.describe("Platform cap on everything open or in flight on the asset."),
  maxDirectionNotionalUsd: AggregateCap.describe("Platform cap on the asset in one direction (long or short)."),
}).strict().openapi("AssetPolicyInput");
/** Spread, not `extend`ed, for the reason StrategyWithId gives. */
const AssetPolicy = z.object({
  ...AssetPolicyBody.shape,
  providerId: ProviderIdSchema,
  symbol: z.string(),
  memecoin: z.boolean(),
  maxSignalNotionalUsd: UsdAmount.nullable(),
  maxAssetNotionalUsd: UsdAmount.nullable(),
  maxDirectionNotionalUsd: UsdAmount.nullable(),
  updatedAt: z.string(),
}).openapi("AssetPolicy");
const AssetPolicyPath = z.object({ providerId: ProviderIdSchema, symbol: z.string().regex(/^[A-Z0-9]{2,20}$/) });
const AssetPolicyResponse = z.object({ assetPolicy: AssetPolicy, requestId: RequestId });

app.openapi(
  createRoute({
    method: "put",
    path: "/operator/v1/asset-policies/{providerId}/{symbol}",
    operationId: "putAssetPolicy",
    description: "Creates or replaces an asset's entry policy at a provider: notional bounds, spread, slippage and " +
      "book-depth limits, whether it is a memecoin (a setup must allow memecoins) and the platform's aggregate " +
      "caps. An asset without a policy opens no entry (ASSET_POLICY_REQUIRED). Takes effect for the next entry; " +
      "emits no event.\n\nErrors: 400 VALIDATION_ERROR.",
    tags,
    summary: "Create or replace the entry policy of an asset (our symbol, e.g. BTCUSDT or BTCUSDC)",
    request: {
      params: AssetPolicyPath,
      body: jsonBody(AssetPolicyBody, {
        minNotionalUsd: 10,
        maxNotionalUsd: 5000,
        maxSpreadBps: 30,
        maxSlippageBps: 50,
        maxBookFraction: 0.05,
        memecoin: true,
      }),
    },
    responses: { 200: jsonContent(AssetPolicyResponse, "Saved.", examples.assetPolicyStored), ...operatorErrors },
  }),
  async (c) => {
    const assetPolicy = await putAssetPolicy(operatorCtx(c), { ...c.req.valid("param"), policy: c.req.valid("json") });
    return json(c, { assetPolicy, requestId: c.get("requestId") }, 200);
  },
);

app.openapi(
  createRoute({
    method: "get",
    path: "/operator/v1/asset-policies",
    operationId: "listAssetPolicies",
    description: "Every entry policy, by provider and symbol, or those of one provider. Changes nothing.",
    tags,
    summary: "Entry policies, optionally of one provider",
    request: { query: z.object({ providerId: ProviderIdSchema.optional() }) },
    responses: {
      200: jsonContent(
        z.object({ assetPolicies: z.array(AssetPolicy), requestId: RequestId }),
        "Policies.",
        examples.assetPolicies,
      ),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const assetPolicies = await listAssetPolicies(operatorCtx(c), c.req.valid("query"));
    return json(c, { assetPolicies, requestId: c.get("requestId") }, 200);
  },
);

app.openapi(
  createRoute({
    method: "delete",
    path: "/operator/v1/asset-policies/{providerId}/{symbol}",
    operationId: "deleteAssetPolicy",
    description: "Removes an asset's entry policy and answers it: new entries on the asset are refused " +
      "ASSET_POLICY_REQUIRED; open positions are maintained.\n\nErrors: 404 NOT_FOUND.",
    tags,
    summary: "Remove an entry policy: no new entry opens on that asset any more",
    request: { params: AssetPolicyPath },
    responses: {
      200: jsonContent(AssetPolicyResponse, "The removed policy.", examples.assetPolicyDeleted),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const assetPolicy = await deleteAssetPolicy(operatorCtx(c), c.req.valid("param"));
    return json(c, { assetPolicy, requestId: c.get("requestId") }, 200);
  },
);

app.openapi(
  createRoute({
    method: "put",
    path: "/operator/v1/payment-recipients/{networkId}",
    operationId: "putPaymentRecipient",
    description: "Sets the platform's receiving address on an EVM network (stored lowercase). A different address " +
      "bumps `receiverVersion`: instructions issued before keep the address they named. Logged with the actor; " +
      "emits no event.\n\nErrors: 400 VALIDATION_ERROR.",
    tags,
    summary: "The platform's receiving address on a payment network (a change bumps receiverVersion)",
    request: {
      params: z.object({ networkId: z.enum(EVM_NETWORKS) }),
      body: jsonBody(z.object({ address: z.string().regex(/^0x[0-9a-fA-F]{40}$/, "deve ser 0x e 40 hexadecimais") }), {
        address: examples.paymentRecipient.address,
      }),
    },
    responses: {
      200: jsonContent(
        z.object({
          networkId: z.string(),
          address: z.string(),
          receiverVersion: z.number().int(),
          requestId: RequestId,
        }),
        "The recipient.",
        examples.paymentRecipient,
      ),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const recipient = await setPaymentRecipient(operatorCtx(c), {
      networkId: c.req.valid("param").networkId,
      address: c.req.valid("json").address,
    });
    return json(c, { ...recipient, requestId: c.get("requestId") }, 200);
  },
);

app.openapi(
  createRoute({
    method: "put",
    path: "/operator/v1/deposit-xpub/{networkId}",
    operationId: "putDepositXpub",
    description: "Sets the extended public key (xpub) from which DEPOSIT_INVOICE payments derive one address per " +
      "invoice; the service never holds the private key. A key set again continues from its own next index." +
      "\n\nErrors: 400 VALIDATION_ERROR (not an extended key, or a private one).",
    tags,
    summary: "The extended public key deposit invoices derive their addresses from (no private key)",
    request: {
      params: z.object({ networkId: z.enum(EVM_NETWORKS) }),
      body: jsonBody(z.object({ xpub: z.string().min(100).max(120) }), { xpub: examples.depositXpubKey }),
    },
    responses: {
      200: jsonContent(
        z.object({ networkId: z.string(), nextIndex: z.number().int(), requestId: RequestId }),
        "The key is set.",
        examples.depositXpub,
      ),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const set = await setDepositXpub(operatorCtx(c), {
      networkId: c.req.valid("param").networkId,
      xpub: c.req.valid("json").xpub,
    });
    return json(c, { ...set, requestId: c.get("requestId") }, 200);
  },
);

app.openapi(
  createRoute({
    method: "put",
    path: "/operator/v1/venue-b-payment-wallet",
    operationId: "putVenueBPaymentWallet",
    description: "Sets the platform's VENUE_B wallet that VENUE_B_USD_SEND payments are sent to. Emits no event." +
      "\n\nErrors: 400 VALIDATION_ERROR.",
    tags,
    summary: "The platform wallet that receives VENUE_B USD sends",
    request: {
      body: jsonBody(z.object({ address: z.string().regex(/^0x[0-9a-fA-F]{40}$/, "deve ser 0x e 40 hexadecimais") }), {
        address: examples.venueBPaymentWallet.address,
      }),
    },
    responses: {
      200: jsonContent(
        z.object({ address: z.string(), requestId: RequestId }),
        "The wallet is set.",
        examples.venueBPaymentWallet,
      ),
      ...operatorErrors,
    },
  }),
  async (c) => {
    const set = await setVenueBPaymentWallet(operatorCtx(c), c.req.valid("json").address);
    return json(c, { ...set, requestId: c.get("requestId") }, 200);
  },
);

export const operatorCatalog = app;
