/** Shapes of the partner (contract) as the operator defines it. */
import type { Grants } from "../../db/schema.ts";

export interface RiskEnvelopeInput {
  maxLeverage: number;
  maxMarginPerTradeUsd: number;
  maxConcurrentTrades: number;
  maxDailyLossUsd: number;
}

export interface ContractTermsInput {
  subscriptionMonthlyUsd: number;
  currency: string;
  performanceFeePercent: number;
  performancePeriod: "WEEKLY" | "MONTHLY";
  carryPolicy: "CARRY" | "NO_CARRY";
  dueDays: number;
  subscriptionProviders: string[];
}

export interface PartnerSettingsInput {
  name: string;
  grants: Grants;
  riskEnvelope: RiskEnvelopeInput;
  builder: { feeTenthsBps: number };
  returnUrlOrigins: string[];
  limits: { requestsPerMinute: number; ordersPerMinute: number };
  legacyTenantIds?: string[];
}

export interface CreatePartnerInput extends PartnerSettingsInput {
  partnerId?: string;
  contract: ContractTermsInput;
}

export type PartnerStatus = "ACTIVE" | "SUSPENDED" | "REVOKED";
