/** Wire schemas of the partner resources (spec, Resources and their fields). */
import { z } from "@hono/zod-openapi";
import { FreeObject, ProviderIdSchema, RequestId, UsdAmount } from "./common.ts";

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
  riskRequirements: FreeObject,
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
}).openapi("Market", { additionalProperties: true });

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

const Usd = z.number().openapi({ description: "USD, up to 6 decimals" });

/** The figures of a live provider entry and of a statement (spec, Performance and statements). */
const PerformanceFigures = z.object({
  basis: z.literal("CANONICAL_NET_REALIZED_PNL"),
  providerNetRealizedPnlUsd: Usd,
  netPerformanceUsd: Usd,
  auditComponents: z.object({
    role: z.literal("AUDIT_EVIDENCE"),
    providerRealizedPnlUsd: Usd,
    venueFeesUsd: Usd,
    fundingUsd: Usd,
  }),
  builderFees: z.object({ role: z.literal("FINAUTON_REVENUE_SEPARATE"), builderFeesUsd: Usd }),
  carryInUsd: Usd,
  carryOutUsd: Usd,
  chargeablePerformanceUsd: Usd,
  performanceFeeUsd: Usd,
  estimatedPerformanceFeeUsd: Usd,
});

export const LiveProviderPerformanceSchema = PerformanceFigures.extend({
  providerId: ProviderIdSchema,
  pendingPortions: z.number().int().openapi({
    description: "Closing portions of the period still waiting for a fact (not in the figures yet).",
  }),
  attributionPendingFacts: z.number().int().openapi({
    description: "Venue facts of the period that belong to no position of the service (ATTRIBUTION_PENDING): " +
      "never performance, never billed.",
  }),
  pendingInEndedPeriods: z.number().int().openapi({
    description: "Closing portions dated in periods that have ended that still wait for a fact (e.g. a close the " +
      "venue reported after the boundary): each is stated with its own period once confirmed, by that period's " +
      "ORIGINAL if it is not closed yet, else by an ADJUSTMENT.",
  }),
}).openapi("LivePerformance");

export const StatementSchema = PerformanceFigures.extend({
  statementId: z.string(),
  kind: z.enum(["ORIGINAL", "ADJUSTMENT"]),
  status: z.literal("CLOSED"),
  adjustsStatementId: z.string().nullable(),
  tenantId: z.string().nullable(),
  providerId: ProviderIdSchema,
  contractId: z.string(),
  contractVersion: z.number().int(),
  period: z.enum(["WEEKLY", "MONTHLY"]),
  policy: z.enum(["CARRY", "NO_CARRY"]),
  periodStart: z.string(),
  periodEnd: z.string(),
  performanceFeePercent: z.number(),
  currency: z.string(),
  creditUsd: Usd,
  sourceFactsCount: z.number().int(),
  reason: z.string(),
  obligationId: z.string().nullable(),
  createdAt: z.string(),
}).openapi("Statement");

export const ObligationSchema = z.object({
  obligationId: z.string(),
  source: z.string(),
  reference: z.string(),
  status: z.enum(["OPEN", "PAID", "CANCELLED"]),
  effectiveStatus: z.enum(["PENDING", "GRACE", "OVERDUE_AFTER_GRACE", "PAID", "CANCELLED"]),
  amountUsd: Usd,
  currency: z.enum(["USDT", "USDC"]),
  dueAt: z.string(),
  graceUntil: z.string(),
  blocksNewEntry: z.boolean(),
  providers: z.array(ProviderIdSchema),
  settledAt: z.string().nullable(),
}).openapi("Obligation");

export const BillingPolicySchema = z.object({
  contractId: z.string(),
  version: z.number().int(),
  effectiveFrom: z.string(),
  suspended: z.boolean(),
  subscriptionMonthlyUsd: Usd,
  subscriptionProviders: z.array(z.string()),
  currency: z.string(),
  performanceFeePercent: z.number(),
  performancePeriod: z.enum(["WEEKLY", "MONTHLY"]),
  carryPolicy: z.enum(["CARRY", "NO_CARRY"]),
  dueDays: z.number().int(),
  graceHours: z.number().int(),
}).openapi("BillingPolicy");
