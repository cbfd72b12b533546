/** Wire schemas of the partner resources (spec, Resources and their fields). */
import { z } from "@hono/zod-openapi";
import { ProviderIdSchema, RequestId, UsdAmount } from "./common.ts";

/** Strict on purpose: the spec says an envelope has "no other keys" (unknown keys elsewhere are ignored). */
export const EnvelopeSchema = z.object({
  maxLeverage: z.number().min(0).openapi({ description: "Integer leverage ceiling." }),
  maxMarginPerTradeUsd: UsdAmount,
  maxConcurrentTrades: z.number().min(0),
  maxDailyLossUsd: UsdAmount,
}).strict().openapi("RiskEnvelope");

export const TenantSchema = z.object({
  tenantId: z.string(),
  name: z.string(),
  status: z.enum(["ACTIVE", "SUSPENDED"]).openapi({ description: "SUSPENDED while the contract is suspended." }),
  grants: z.object({
    providers: z.array(z.string()),
    strategies: z.array(z.string()),
    capabilities: z.array(z.string()),
  }),
  partnerRestrictions: z.object({
    providers: z.array(z.string()).nullable(),
    strategies: z.array(z.string()).nullable(),
    riskEnvelope: EnvelopeSchema.nullable(),
  }).nullable(),
  returnUrlOrigins: z.array(z.string()),
  contract: z.object({
    version: z.number().int(),
    suspended: z.boolean(),
    subscriptionMonthlyUsd: z.number(),
    currency: z.string(),
    performanceFeePercent: z.number().openapi({ description: "Fraction: 0.2 means 20 %." }),
    performancePeriod: z.enum(["WEEKLY", "MONTHLY"]),
    carryPolicy: z.enum(["CARRY", "NO_CARRY"]),
  }),
  clients: z.number().int().openapi({ description: "Number of clients." }),
}).openapi("Tenant");

export const ProviderItemSchema = z.object({
  providerId: ProviderIdSchema,
  name: z.string(),
  kind: z.enum(["PERP_CEX", "PERP_DEX"]),
  capabilities: z.array(z.string()),
}).openapi("ProviderCatalogItem");

export const StrategySchema = z.object({
  strategyId: z.string(),
  version: z.string(),
  status: z.string(),
  displayName: z.string(),
  summary: z.string(),
  supportedProviders: z.array(z.string()),
  supportedMarkets: z.array(z.string()),
  configurableParameters: z.array(z.object({
    key: z.string(),
    type: z.string(),
    label: z.string(),
    min: z.number().optional(),
    max: z.number().optional(),
    options: z.array(z.string()).optional(),
    default: z.union([z.string(), z.number(), z.boolean()]).optional(),
  })),
  riskRequirements: z.record(z.string(), z.unknown()),
}).openapi("Strategy");

export const MarketSchema = z.looseObject({
  symbol: z.string(),
  providerSymbol: z.string(),
  kind: z.string(),
  base: z.string(),
  quote: z.string(),
  active: z.boolean(),
  tickSize: z.number(),
  stepSize: z.number(),
  minQty: z.number(),
  minNotionalUsd: z.number(),
  quantityPrecision: z.number().int(),
  maxLeverage: z.number(),
}).openapi("Market");

export const ClientSchema = z.object({
  externalUserId: z.string(),
  tenantId: z.string().nullable(),
  status: z.enum(["ACTIVE", "SUSPENDED"]),
  createdAt: z.string(),
  updatedAt: z.string(),
}).openapi("Client");

export const CommercialSchema = z.object({
  providerId: ProviderIdSchema,
  allowed: z.boolean(),
  state: z.enum(["ACTIVE", "GRACE", "SUSPENDED", "REVOKED", "BLACKLISTED", "NO_ENTITLEMENT", "ACCOUNT_INACTIVE"]),
  reasonCode: z.string(),
  graceUntil: z.string().nullable(),
  source: z.string(),
}).openapi("Commercial");

export const StrategySelectionSchema = z.object({
  granted: z.array(z.string()),
  selected: z.array(z.string()),
  selectionMode: z.enum(["ALL_GRANTED", "EXPLICIT"]),
  requestId: RequestId,
}).openapi("StrategySelection");

/** Automation (per client and provider). */
export const AutomationSchema = z.object({
  providerId: ProviderIdSchema,
  strategyId: z.string(),
  strategyVersion: z.string(),
  enabled: z.boolean(),
  risk: z.object({
    leverage: z.number().int(),
    maxMarginPerTradeUsd: z.number(),
    maxConcurrentTrades: z.number().int(),
    maxDailyLossUsd: z.number(),
  }),
  conditions: z.object({
    symbols: z.array(z.string()).optional(),
    tradingWindowUtc: z.object({ from: z.string(), to: z.string() }).optional(),
    minConfidence: z.number().optional(),
  }),
  runtime: z.enum(["DISABLED", "ROUTING"]),
  updatedAt: z.string(),
}).openapi("Automation");
