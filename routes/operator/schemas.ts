/** Wire schemas of the operator API. */
import { z } from "@hono/zod-openapi";
import {
  FEE_PERCENT_DECIMALS,
  isFeeFraction,
  isSubscriptionUsd,
  SUBSCRIPTION_MAX_USD,
} from "../../domain/partners/contract_terms.ts";
import { FreeObject, ProviderIdSchema, UsdAmount } from "../schemas/common.ts";

const HttpsOrigin = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return url.protocol === "https:" && url.origin === value && !url.username && !url.password;
  } catch {
    return false;
  }
}, { message: "deve ser uma origem https (https://host[:porta], sem caminho)" });

export const GrantsSchema = z.object({
  providers: z.array(ProviderIdSchema),
  strategies: z.array(z.string().min(1).max(64)),
  capabilities: z.array(z.string().min(1).max(64)),
});

export const RiskEnvelopeSchema = z.object({
  maxLeverage: z.number().int().min(1).max(125),
  maxMarginPerTradeUsd: UsdAmount,
  maxConcurrentTrades: z.number().int().min(1).max(3),
  maxDailyLossUsd: UsdAmount,
}).strict();

/** Contract terms with the money rules: charges in whole cents, a fee fraction of at most 6 decimals. */
export const ContractTermsSchema = z.object({
  subscriptionMonthlyUsd: z.number().min(0).max(SUBSCRIPTION_MAX_USD).refine(isSubscriptionUsd, {
    message: "deve ter no máximo 2 casas decimais (a cobrança é em centavos)",
  }).openapi({
    description: `USD a month per subscribed client, charged as is: 0 to ${SUBSCRIPTION_MAX_USD}, at most 2 decimals.`,
  }),
  currency: z.string().min(3).max(8),
  performanceFeePercent: z.number().min(0).max(1).refine(isFeeFraction, {
    message: `deve ser uma fração (0.2 = 20 %) com no máximo ${FEE_PERCENT_DECIMALS} casas decimais`,
  }).openapi({
    description:
      `Fraction: 0.2 means 20 %. 0 to 1, at most ${FEE_PERCENT_DECIMALS} decimals; stored as that exact decimal.`,
  }),
  performancePeriod: z.enum(["WEEKLY", "MONTHLY"]),
  carryPolicy: z.enum(["CARRY", "NO_CARRY"]),
  dueDays: z.number().int().min(0).max(90),
  subscriptionProviders: z.array(ProviderIdSchema),
}).strict();

/**
 * Terms as stored, for answers: a version written before the rules above
 * (a subscription of 49.999, a fee of 1e-7) is shown as it is, not refused.
 */
const ContractTermsView = ContractTermsSchema.extend({
  subscriptionMonthlyUsd: z.number().openapi({ description: "USD a month per subscribed client." }),
  performanceFeePercent: z.number().openapi({ description: "Fraction: 0.2 means 20 %." }),
});

const PartnerSettings = {
  name: z.string().min(1).max(200),
  grants: GrantsSchema,
  riskEnvelope: RiskEnvelopeSchema,
  builder: z.object({ feeTenthsBps: z.number().int().min(0).max(1000) }),
  returnUrlOrigins: z.array(HttpsOrigin).max(20),
  limits: z.object({
    requestsPerMinute: z.number().int().min(1).max(1_000_000),
    ordersPerMinute: z.number().int().min(1).max(1_000_000),
  }),
  legacyTenantIds: z.array(z.string().regex(/^[A-Za-z0-9_-]{3,64}$/)).max(50).optional(),
};

export const CreatePartnerBody = z.object({
  partnerId: z.string().regex(/^[A-Za-z0-9_-]{3,64}$/).optional(),
  ...PartnerSettings,
  contract: ContractTermsSchema,
}).strict().openapi("CreatePartner");

export const UpdatePartnerBody = z.object(PartnerSettings).partial().strict().openapi("UpdatePartner");

export const ReasonBody = z.object({ reason: z.string().min(3).max(500).optional() });

export const OperatorPartner = z.object({
  partnerId: z.string(),
  tenantId: z.string(),
  name: z.string(),
  status: z.enum(["ACTIVE", "SUSPENDED", "REVOKED"]),
  grants: GrantsSchema,
  riskEnvelope: RiskEnvelopeSchema,
  builder: z.object({ feeTenthsBps: z.number().int() }),
  returnUrlOrigins: z.array(z.string()),
  limits: z.object({ requestsPerMinute: z.number().int(), ordersPerMinute: z.number().int() }),
  legacyTenantIds: z.array(z.string()),
  contract: ContractTermsView.extend({
    version: z.number().int(),
    effectiveFrom: z.string(),
    suspended: z.boolean(),
  }),
  scheduledContract: ContractTermsView.extend({
    version: z.number().int(),
    effectiveFrom: z.string(),
    suspended: z.boolean(),
  }).nullable(),
  partnerRestrictions: z.object({
    providers: z.array(z.string()).nullable(),
    strategies: z.array(z.string()).nullable(),
    riskEnvelope: RiskEnvelopeSchema.nullable(),
    version: z.number().int(),
  }).nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
}).openapi("OperatorPartner");

export const CredentialSchema = z.object({
  clientId: z.string(),
  clientSecret: z.string().openapi({ description: "Shown once; store it now." }),
}).openapi("Credential");

export const StrategyBody = z.object({
  version: z.string().min(1).max(32),
  status: z.enum(["PUBLISHED", "DRAFT", "RETIRED"]),
  displayName: z.string().min(1).max(120),
  summary: z.string().max(2000),
  supportedProviders: z.array(ProviderIdSchema),
  supportedMarkets: z.array(z.string().min(1).max(32)),
  configurableParameters: z.array(z.object({
    key: z.string().min(1).max(64),
    type: z.string().min(1).max(32),
    label: z.string().min(1).max(120),
    min: z.number().optional(),
    max: z.number().optional(),
    options: z.array(z.string()).optional(),
    default: z.union([z.string(), z.number(), z.boolean()]).optional(),
  })),
  riskRequirements: FreeObject,
}).strict().openapi("StrategyInput");
