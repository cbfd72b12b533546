/**
 * Creating a partner (operator): its settings, contract version 1 in force from
 * now, and a first credential whose secret is returned once.
 */
import { withTransaction } from "../../db/client.ts";
import { contractVersions, partners } from "../../db/schema.ts";
import { type Ctx } from "../context.ts";
import { issueCredential, type IssuedCredential } from "../credentials/issue_credential.ts";
import { ApiError } from "../errors.ts";
import { recordChange } from "../events/record_change.ts";
import { randomToken } from "../ids.ts";
import { feePercentText, subscriptionMicros } from "./contract_terms.ts";
import { envelopeToMicros } from "./envelope.ts";
import { type OperatorPartnerView, operatorPartnerView } from "./partner_view.ts";
import type { ContractTermsInput, CreatePartnerInput } from "./types.ts";
import { loadPartnerOrNull } from "./load_partner.ts";

export async function createPartner(
  { ctx, input }: { ctx: Ctx; input: CreatePartnerInput },
): Promise<{ partner: OperatorPartnerView; credential: IssuedCredential }> {
  const now = ctx.clock.now();
  const partnerId = input.partnerId ?? `ptn_${randomToken(16)}`;
  return await withTransaction(ctx.db, async (tx) => {
    if (await loadPartnerOrNull(tx, partnerId)) {
      throw new ApiError("VALIDATION_ERROR", { status: 409, message: `O parceiro "${partnerId}" já existe.` });
    }
    await tx.insert(partners).values({
      partnerId,
      name: input.name,
      status: "ACTIVE",
      grants: input.grants,
      envelope: envelopeToMicros(input.riskEnvelope),
      builderFeeTenthsBps: input.builder.feeTenthsBps,
      returnUrlOrigins: input.returnUrlOrigins,
      requestsPerMinute: input.limits.requestsPerMinute,
      ordersPerMinute: input.limits.ordersPerMinute,
      legacyTenantIds: input.legacyTenantIds ?? [],
      createdAt: now,
      updatedAt: now,
    });
    await tx.insert(contractVersions).values(contractRow(partnerId, 1, now, now, input.contract, false));
    await recordChange(ctx, tx, {
      partnerId,
      action: "partner.created",
      after: input,
      at: now,
      event: { type: "tenant.updated", data: { change: "CREATED", status: "ACTIVE", contractVersion: 1 } },
    });
    const credential = await issueCredential({ ctx, tx, input: { partnerId } });
    return { partner: await operatorPartnerView(tx, partnerId, now), credential };
  });
}

export function contractRow(
  partnerId: string,
  version: number,
  effectiveFrom: number,
  now: number,
  terms: ContractTermsInput,
  suspended: boolean,
): typeof contractVersions.$inferInsert {
  return {
    partnerId,
    version,
    effectiveFrom,
    suspended,
    subscriptionMonthlyMicros: subscriptionMicros(terms.subscriptionMonthlyUsd),
    subscriptionProviders: terms.subscriptionProviders,
    currency: terms.currency,
    performanceFeePercent: feePercentText(terms.performanceFeePercent),
    performancePeriod: terms.performancePeriod,
    carryPolicy: terms.carryPolicy,
    dueDays: terms.dueDays,
    createdAt: now,
  };
}
