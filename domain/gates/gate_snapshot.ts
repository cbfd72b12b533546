/**
 * Loading what the entry gates judge, for one client at each provider of the
 * contract: stored state from the database in a handful of queries, the
 * provider's reachability as last observed, and the account's position slots
 * read live at the venue (the only venue call, made only when every earlier
 * gate could pass, since the answer would not change otherwise).
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import { type Executor, preparedFor } from "../../db/client.ts";
import {
  accountStates,
  assetPolicies,
  automations,
  clientSetups,
  dailyResults,
  intents,
  positions,
  strategies,
} from "../../db/schema.ts";
import { callWithAccount } from "../accounts/account_call.ts";
import { connectionsOf, type ConnectionState } from "../accounts/connection_state.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import type { ClientRow } from "../clients/load_client.ts";
import { type RealExecution, realExecutionByProvider } from "../catalog/provider_settings.ts";
import { commercialStates } from "../commercial/commercial_state.ts";
import { type BillingStanding, billingStandingOf } from "../billing/billing_standing.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { clientStrategies, type EffectiveAccess } from "../grants/effective_access.ts";
import { isHalted, utcDay } from "../setups/daily_loss.ts";
import { missingForEnabling, type SetupRow, valuesOf } from "../setups/setup_values.ts";
import { MAX_PERP_BUILDER_FEE } from "../../venues/venue_b/constants.ts";
import { builderSourcesOf } from "./builder_standing.ts";
import type { ProviderId } from "../../venues/types.ts";
import type { EntryChannel, GateSnapshot } from "./entry_gates.ts";

export type AutomationRow = typeof automations.$inferSelect;
type StrategyRow = typeof strategies.$inferSelect;

// Every per-client verdict (the automation and providers views, manual orders) runs all of these: each is
// built once per connection, since building drizzle's SQL costs several times running it.
const setupsOfClient = preparedFor((db) =>
  db.select().from(clientSetups).where(eq(clientSetups.clientId, sql.placeholder("clientId"))).prepare()
);
const automationRowsOfClient = preparedFor((db) =>
  db.select().from(automations).where(eq(automations.clientId, sql.placeholder("clientId"))).prepare()
);
const strategiesOfClientAutomations = preparedFor((db) =>
  db.select().from(strategies)
    .where(inArray(
      strategies.strategyId,
      db.select({ strategyId: automations.strategyId }).from(automations).where(
        eq(automations.clientId, sql.placeholder("clientId")),
      ),
    ))
    .prepare()
);
const resultsOfDay = preparedFor((db) =>
  db.select().from(dailyResults)
    .where(and(eq(dailyResults.clientId, sql.placeholder("clientId")), eq(dailyResults.day, sql.placeholder("day"))))
    .prepare()
);
const entryPolicies = preparedFor((db) =>
  db.select({
    providerId: assetPolicies.providerId,
    symbol: assetPolicies.symbol,
    memecoin: assetPolicies.memecoin,
  }).from(assetPolicies).prepare()
);
const reconciledProviders = preparedFor((db) =>
  db.select({ providerId: accountStates.providerId }).from(accountStates)
    .where(eq(accountStates.clientId, sql.placeholder("clientId"))).prepare()
);
const unsettledProviders = preparedFor((db) =>
  db.select({ providerId: intents.providerId }).from(intents)
    .where(and(eq(intents.clientId, sql.placeholder("clientId")), inArray(intents.status, ["SUBMITTING", "UNCERTAIN"])))
    .prepare()
);
const openPositionsOfClient = preparedFor((db) =>
  db.select({
    providerId: positions.providerId,
    symbol: positions.symbol,
    protectionStatus: positions.protectionStatus,
  }).from(positions).where(and(eq(positions.clientId, sql.placeholder("clientId")), eq(positions.status, "OPEN")))
    .prepare()
);

/** A client's automations, one row per provider. */
export async function automationRowsOf(db: Executor, clientId: number): Promise<AutomationRow[]> {
  return await automationRowsOfClient(db).all({ clientId });
}

/**
 * The stored rows of one client the gates read, loaded together: the reads
 * are independent, so they are issued at once (on a libSQL server they leave
 * in one batch, one round trip instead of eight; embedded, nothing changes).
 */
export async function loadClientGateRows(db: Executor, clientId: number, now: number) {
  const [setups, automations, strategies, results, policies, reconciled, unsettled, openPositions] = await Promise
    .all([
      setupsOfClient(db).all({ clientId }),
      automationRowsOf(db, clientId),
      strategiesOfClientAutomations(db).all({ clientId }),
      resultsOfDay(db).all({ clientId, day: utcDay(now) }),
      entryPolicies(db).all(),
      reconciledProviders(db).all({ clientId }),
      unsettledProviders(db).all({ clientId }),
      openPositionsOfClient(db).all({ clientId }),
    ]);
  return { setups, automations, strategies, results, policies, reconciled, unsettled, openPositions };
}

/** Everything one provider's snapshot is built from, however it was loaded (per client or in bulk). */
export interface SnapshotSources {
  now: number;
  providerId: ProviderId;
  client: Pick<ClientRow, "status" | "strategySelection">;
  access: EffectiveAccess;
  setupRow: SetupRow | null;
  automation: AutomationRow | null;
  strategy: StrategyRow | null;
  connection: ConnectionState;
  account: Pick<AccountRow, "problems" | "approvedBuilderFeeTenthsBps"> | null;
  realizedToday: string;
  /** The operator's entry policies at this provider. */
  policies: { symbol: string; memecoin: boolean }[];
  realExecution: RealExecution;
  venueReachable: boolean;
  reconciliationPending: boolean;
  protectionUnconfirmed: boolean;
  externalExposure: boolean;
  slotsUsed: number | null;
  /** Due obligations per provider (billing_standing.ts): none is ACTIVE. */
  billing: ReadonlyMap<string, BillingStanding>;
  /** The platform's builder beneficiary, for builder-fee venues; undefined elsewhere. */
  builderBeneficiary?: string | null;
  /** Whether fees accrue to the beneficiary at the venue (builder_standing.ts); null when unknown. */
  builderAccruesFees?: boolean | null;
}

/** The snapshot the gates judge, from its sources: pure, shared by every loader. */
export function buildGateSnapshot(sources: SnapshotSources): GateSnapshot {
  const { access, automation, strategy, providerId, client } = sources;
  const values = valuesOf(sources.setupRow);
  const maxDailyLossMicros = Math.min(
    values.maxDailyLossMicros,
    automation?.risk.maxDailyLossMicros ?? Number.MAX_SAFE_INTEGER,
  );
  const commercial = commercialStates(access, client.status, sources.billing)
    .find((entry) => entry.providerId === providerId);
  return {
    now: sources.now,
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
        selectedByClient: clientStrategies(access, client.strategySelection).includes(automation.strategyId),
        supportsProvider: strategy?.supportedProviders.includes(providerId) ?? false,
        markets: strategy?.supportedMarkets ?? [],
      },
    },
    setup: sources.setupRow && {
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
    dailyLossHalted: isHalted(sources.realizedToday, maxDailyLossMicros),
    assetPolicies: new Map(sources.policies.map((row) => [row.symbol, row])),
    commercial: commercial ?? null,
    readiness: {
      realExecution: sources.realExecution,
      connection: sources.connection,
      accountProblems: sources.account?.problems ?? [],
      venueReachable: sources.venueReachable,
      reconciliationPending: sources.reconciliationPending,
      protectionUnconfirmed: sources.protectionUnconfirmed,
      externalExposure: sources.externalExposure,
      slotsUsed: sources.slotsUsed,
    },
    builder: sources.builderBeneficiary === undefined ? null : {
      beneficiary: sources.builderBeneficiary,
      feeTenthsBps: access.partner.builderFeeTenthsBps,
      ceilingTenthsBps: MAX_PERP_BUILDER_FEE,
      approvedMaxFeeTenthsBps: sources.account?.approvedBuilderFeeTenthsBps ?? 0,
      beneficiaryAccruesFees: sources.builderAccruesFees ?? null,
    },
  };
}

/**
 * For one client's views: each provider's snapshot, with the position slots
 * read live at the venue (only when every earlier gate could pass), and the
 * client's automation rows the snapshots were judged on (the automation view
 * shows them).
 */
export async function gateSnapshotsOf(
  ctx: Ctx,
  client: ClientRow,
  access: EffectiveAccess,
  channel: EntryChannel = "AUTOMATION",
) {
  const now = ctx.clock.now();
  // Independent reads, issued together (one round trip on a libSQL server).
  const [rows, connectionOf, realExecution, billing] = await Promise.all([
    loadClientGateRows(ctx.db.read, client.id, now),
    connectionsOf(ctx.db.read, client.id, now),
    realExecutionByProvider(ctx),
    billingStandingOf(ctx.db.read, client.id, now),
  ]);

  const snapshotOf = async (providerId: ProviderId): Promise<GateSnapshot> => {
    const setupRow = rows.setups.find((row) => row.providerId === providerId) ?? null;
    const automation = rows.automations.find((row) => row.providerId === providerId) ?? null;
    const { state, account } = connectionOf(providerId);
    const venueReachable = () => ctx.venueAvailability.status(providerId) === "AVAILABLE";
    const ours = rows.openPositions.filter((position) => position.providerId === providerId);
    const sources: SnapshotSources = {
      now,
      providerId,
      client,
      access,
      setupRow,
      automation,
      strategy: rows.strategies.find((row) => row.strategyId === automation?.strategyId) ?? null,
      connection: state,
      account,
      realizedToday: rows.results.find((row) => row.providerId === providerId)?.realized ?? "0",
      policies: rows.policies.filter((row) => row.providerId === providerId),
      realExecution: realExecution[providerId],
      venueReachable: venueReachable(),
      // As the engine judges it: an account never reconciled, or with an outcome only a query can tell.
      reconciliationPending: !rows.reconciled.some((row) => row.providerId === providerId) ||
        rows.unsettled.some((row) => row.providerId === providerId),
      protectionUnconfirmed: ours.some((position) => position.protectionStatus !== "PROTECTED"),
      externalExposure: false,
      slotsUsed: 0,
      billing,
      ...(await builderSourcesOf(ctx, providerId)),
    };
    const routes = channel === "MANUAL" || automation?.enabled;
    const mayTrade = state === "CONNECTED" && sources.venueReachable && routes && setupRow?.enabled;
    if (mayTrade && account) {
      const slots = await slotsUsed(ctx, account);
      sources.slotsUsed = slots.used;
      sources.externalExposure = slots.held.some((held) => !ours.some((position) => position.symbol === held.symbol));
      if (slots.credentialRejected) sources.connection = "ACCESS_LOST";
      sources.venueReachable = venueReachable();
    }
    return buildGateSnapshot(sources);
  };
  return { snapshotOf, automations: rows.automations };
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
    return { used: snapshot.positions.length + resting, held: snapshot.positions, credentialRejected: false };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { used: null, held: [], credentialRejected: error.code === "PROVIDER_CREDENTIAL_REJECTED" };
  }
}
