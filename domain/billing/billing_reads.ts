/**
 * `GET /v1/users/:id/billing` and `/obligations`: the contract's billing
 * policy (a component the contract lacks reads zero), the client's
 * obligations with their effective status, and what blocks new entries.
 */
import { desc, eq } from "drizzle-orm";
import type { Executor } from "../../db/client.ts";
import { obligations } from "../../db/schema.ts";
import { reducedSoFar } from "./fee_obligations.ts";
import { iso } from "../clock.ts";
import { contractProviders } from "../commercial/commercial_state.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { effectiveAccessOf } from "../grants/effective_access.ts";
import { loadClient } from "../clients/load_client.ts";
import { microsToUsd } from "../money.ts";
import { QUOTE_CURRENCY } from "../setups/setup_values.ts";
import { blocksNewEntry, effectiveStatus, GRACE_HOURS, obligationView } from "./obligation_view.ts";

/** Tokens an EVM transfer may settle an obligation in. */
const PAYMENT_TOKENS = ["USDC", "USDT"];

async function obligationsOf(db: Executor, clientId: number) {
  return await db.select({
    row: obligations,
    reduced: reducedSoFar,
  }).from(obligations).where(eq(obligations.clientId, clientId))
    .orderBy(desc(obligations.dueAt), desc(obligations.createdAt), desc(obligations.obligationId));
}

export async function listObligations(ctx: Ctx, input: { externalUserId: string }) {
  const partnerId = partnerOf(ctx);
  const client = await loadClient(ctx.db.read, partnerId, input.externalUserId);
  const now = ctx.clock.now();
  const rows = await obligationsOf(ctx.db.read, client.id);
  return {
    externalUserId: client.externalUserId,
    tenantId: client.tenantId,
    obligations: rows.map(({ row, reduced }) => obligationView(row, reduced, now)),
  };
}

export async function getBilling(ctx: Ctx, input: { externalUserId: string }) {
  const partnerId = partnerOf(ctx);
  const client = await loadClient(ctx.db.read, partnerId, input.externalUserId);
  const access = await effectiveAccessOf(ctx, partnerId);
  const now = ctx.clock.now();
  const { contract, partner } = access;
  const open = (await obligationsOf(ctx.db.read, client.id))
    .filter(({ row }) => row.status === "OPEN");
  const statuses = open.map(({ row }) => effectiveStatus(row, now));
  const status = statuses.includes("OVERDUE_AFTER_GRACE")
    ? "SUSPENDED"
    : statuses.includes("GRACE")
    ? "GRACE"
    : statuses.length
    ? "DUE"
    : "ACTIVE";
  const providers = contractProviders(access);
  return {
    externalUserId: client.externalUserId,
    tenantId: client.tenantId,
    status,
    policy: {
      contractId: partnerId,
      version: contract.version,
      effectiveFrom: iso(contract.effectiveFrom),
      suspended: contract.suspended,
      subscriptionMonthlyUsd: microsToUsd(contract.subscriptionMonthlyMicros),
      subscriptionProviders: contract.subscriptionProviders,
      currency: contract.currency,
      performanceFeePercent: Number(contract.performanceFeePercent),
      performancePeriod: contract.performancePeriod,
      carryPolicy: contract.carryPolicy,
      dueDays: contract.dueDays,
      graceHours: GRACE_HOURS,
    },
    builder: { source: "B2B_CONTRACT", version: contract.version, feeTenthsBps: partner.builderFeeTenthsBps },
    providerCurrencies: Object.fromEntries(providers.map((providerId) => [providerId, QUOTE_CURRENCY[providerId]])),
    payment: {
      networks: Object.entries(ctx.config.evmRpc).flatMap(([network, url]) => url ? [network] : []),
      tokens: PAYMENT_TOKENS,
    },
    openObligations: open.map(({ row, reduced }) => obligationView(row, reduced, now)),
    newEntriesBlockedBy: open.some(({ row }) => blocksNewEntry(row, now)) ? ["OBLIGATION_OVERDUE"] : [],
  };
}
