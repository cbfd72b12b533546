/**
 * Loading what the entry gates judge, for one client at each provider of the
 * contract: stored state from the database in a handful of queries, the
 * provider's reachability as last observed, and the account's position slots
 * read live at the venue (the only venue call, made only when every earlier
 * gate could pass, since the answer would not change otherwise).
 */
import { and, eq, inArray } from "drizzle-orm";
import type { Executor } from "../../db/client.ts";
import { assetPolicies, automations, clientSetups, dailyResults, strategies } from "../../db/schema.ts";
import { callWithAccount } from "../accounts/account_call.ts";
import { connectionsOf } from "../accounts/connection_state.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import type { ClientRow } from "../clients/load_client.ts";
import { realExecutionByProvider } from "../catalog/provider_settings.ts";
import { commercialStates } from "../commercial/commercial_state.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { clientStrategies, type EffectiveAccess } from "../grants/effective_access.ts";
import { isHalted, utcDay } from "../setups/daily_loss.ts";
import { missingForEnabling, valuesOf } from "../setups/setup_values.ts";
import { MAX_PERP_BUILDER_FEE } from "../../venues/venue_b/constants.ts";
import type { ProviderId } from "../../venues/types.ts";
import type { GateSnapshot } from "./entry_gates.ts";

export type AutomationRow = typeof automations.$inferSelect;

/** The stored rows of one client the gates read, loaded together. */
export async function loadClientGateRows(db: Executor, clientId: number, now: number) {
  const setups = await db.select().from(clientSetups).where(eq(clientSetups.clientId, clientId));
  const automationRows = await db.select().from(automations).where(eq(automations.clientId, clientId));
  const strategyIds = automationRows.map((row) => row.strategyId);
  const strategyRows = strategyIds.length
    ? await db.select().from(strategies).where(inArray(strategies.strategyId, strategyIds))
    : [];
  const results = await db.select().from(dailyResults)
    .where(and(eq(dailyResults.clientId, clientId), eq(dailyResults.day, utcDay(now))));
  const policies = await db.select({
    providerId: assetPolicies.providerId,
    symbol: assetPolicies.symbol,
    memecoin: assetPolicies.memecoin,
  }).from(assetPolicies);
  return { setups, automations: automationRows, strategies: strategyRows, results, policies };
}

/** A function giving each provider's snapshot (live slot read included). */
export async function gateSnapshotsOf(ctx: Ctx, client: ClientRow, access: EffectiveAccess) {
  const now = ctx.clock.now();
  const rows = await loadClientGateRows(ctx.db.read, client.id, now);
  const connectionOf = await connectionsOf(ctx.db.read, client.id, now);
  const realExecution = await realExecutionByProvider(ctx);
  const commercial = commercialStates(access, client.status);
  const selected = clientStrategies(access, client.strategySelection);

  return async (providerId: ProviderId): Promise<GateSnapshot> => {
    const setupRow = rows.setups.find((row) => row.providerId === providerId) ?? null;
    const automation = rows.automations.find((row) => row.providerId === providerId) ?? null;
    const strategy = rows.strategies.find((row) => row.strategyId === automation?.strategyId);
    const { state, account } = connectionOf(providerId);
    const values = valuesOf(setupRow);
    const maxDailyLossMicros = Math.min(
      values.maxDailyLossMicros,
      automation?.risk.maxDailyLossMicros ?? Number.MAX_SAFE_INTEGER,
    );
    const realized = rows.results.find((row) => row.providerId === providerId)?.realized ?? "0";
    const commercialEntry = commercial.find((entry) => entry.providerId === providerId);
    const snapshot: GateSnapshot = {
      now,
      partnerActive: access.partner.status === "ACTIVE",
      contractSuspended: access.contract.suspended,
      clientActive: client.status === "ACTIVE",
      provider: {
        inContract: access.partner.grants.providers.includes(providerId),
        inEffectiveGrant: access.providers.includes(providerId),
      },
      automation: automation && {
        enabled: automation.enabled,
        risk: automation.risk,
        conditions: automation.conditions,
        strategy: {
          strategyId: automation.strategyId,
          published: strategy?.status === "PUBLISHED",
          inPartnerGrant: access.strategies.includes(automation.strategyId),
          selectedByClient: selected.includes(automation.strategyId),
          supportsProvider: strategy?.supportedProviders.includes(providerId) ?? false,
          markets: strategy?.supportedMarkets ?? [],
        },
      },
      setup: setupRow && {
        enabled: values.enabled,
        missing: missingForEnabling(values).map((issue) => issue.field),
        leverage: values.leverage,
        maxMarginPerTradeMicros: values.maxMarginPerTradeMicros,
        maxConcurrentTrades: values.maxConcurrentTrades,
        maxDailyLossMicros: values.maxDailyLossMicros,
        allowedSymbols: values.allowedSymbols,
        allowMemecoins: values.allowMemecoins,
      },
      envelope: access.envelope,
      dailyLossHalted: isHalted(realized, maxDailyLossMicros),
      assetPolicies: new Map(
        rows.policies.filter((row) => row.providerId === providerId).map((row) => [row.symbol, row]),
      ),
      commercial: commercialEntry ?? null,
      readiness: {
        realExecution: realExecution[providerId],
        connection: state,
        accountProblems: account?.problems ?? [],
        venueReachable: ctx.venueAvailability.status(providerId) === "AVAILABLE",
        slotsUsed: 0,
      },
      builder: ctx.venues[providerId].capabilities.builderFee
        ? {
          beneficiary: ctx.config.venueBBuilderAddress ?? null,
          feeTenthsBps: access.partner.builderFeeTenthsBps,
          ceilingTenthsBps: MAX_PERP_BUILDER_FEE,
          approvedMaxFeeTenthsBps: account?.approvedBuilderFeeTenthsBps ?? 0,
        }
        : null,
    };
    const mayTrade = state === "CONNECTED" && snapshot.readiness.venueReachable && automation?.enabled &&
      values.enabled;
    if (mayTrade && account) {
      const slots = await slotsUsed(ctx, account);
      snapshot.readiness.slotsUsed = slots.used;
      if (slots.credentialRejected) snapshot.readiness.connection = "ACCESS_LOST";
      snapshot.readiness.venueReachable = ctx.venueAvailability.status(providerId) === "AVAILABLE";
    }
    return snapshot;
  };
}

/**
 * Real positions plus resting entry orders on the account: the venue is the
 * truth for positions opened outside the service too. An unreadable account
 * gives null (READINESS_UNKNOWN).
 */
async function slotsUsed(ctx: Ctx, account: AccountRow) {
  try {
    const snapshot = await callWithAccount(ctx, account, (venue, credentials) => venue.getAccount(credentials));
    const resting = snapshot.openOrders.filter((order) => !order.reduceOnly).length;
    return { used: snapshot.positions.length + resting, credentialRejected: false };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { used: null, credentialRejected: error.code === "PROVIDER_CREDENTIAL_REJECTED" };
  }
}
