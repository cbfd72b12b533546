/**
 * Automation per client and provider (spec, Automation): which strategy routes
 * signals to the client's account, within which risk and conditions, and the
 * view of whether new entries may open there, decided by the entry gates
 * alone. Pausing stops new entries only: open positions keep their
 * maintenance (`positionMaintenance: CONTINUES`).
 */
import { eq } from "drizzle-orm";
import {
  type AutomationConditions,
  type AutomationRiskMicros,
  automations,
  type EnvelopeMicros,
  strategies,
} from "../../db/schema.ts";
import { iso } from "../clock.ts";
import { type ClientRow, loadActiveClient, loadClient } from "../clients/load_client.ts";
import { contractProviders } from "../commercial/commercial_state.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { withPartnerTransaction } from "../credentials/partner_transaction.ts";
import { ApiError } from "../errors.ts";
import { emitEvent } from "../events/emit_event.ts";
import { evaluateEntry, fieldsAbove } from "../gates/entry_gates.ts";
import { type AutomationRow, automationRowsOf, gateSnapshotsOf } from "../gates/gate_snapshot.ts";
import {
  assertProviderUsable,
  clientStrategies,
  effectiveAccessOf,
  loadEffectiveAccess,
} from "../grants/effective_access.ts";
import { microsToUsd, usdToMicros } from "../money.ts";
import type { ProviderId } from "../../venues/types.ts";
import { QUOTE_CURRENCY } from "../setups/setup_values.ts";

export interface AutomationRiskInput {
  leverage: number;
  maxMarginPerTradeUsd: number;
  maxConcurrentTrades: number;
  maxDailyLossUsd: number;
}

export interface AutomationInput {
  providerId: ProviderId;
  strategyId: string;
  enabled: boolean;
  risk: AutomationRiskInput;
  conditions?: AutomationConditions;
}

function riskWire(risk: AutomationRiskMicros): AutomationRiskInput {
  return {
    leverage: risk.leverage,
    maxMarginPerTradeUsd: microsToUsd(risk.maxMarginPerTradeMicros),
    maxConcurrentTrades: risk.maxConcurrentTrades,
    maxDailyLossUsd: microsToUsd(risk.maxDailyLossMicros),
  };
}

/** The Automation resource. */
export function automationView(row: Omit<AutomationRow, "lastCohortSignal">) {
  return {
    providerId: row.providerId as ProviderId,
    strategyId: row.strategyId,
    strategyVersion: row.strategyVersion,
    enabled: row.enabled,
    risk: riskWire(row.risk),
    conditions: row.conditions,
    runtime: row.enabled ? "ROUTING" as const : "DISABLED" as const,
    updatedAt: iso(row.updatedAt),
  };
}

export type AutomationView = ReturnType<typeof automationView>;

/** The client's automations, for the single-client read and the status overview. */
export async function automationsOfClient(ctx: Ctx, client: ClientRow): Promise<AutomationView[]> {
  return (await automationRowsOf(ctx.db.read, client.id)).map(automationView);
}

/** `GET /v1/users/:id/automation`: per provider of the contract, the entry gates' verdict. */
export async function getAutomation(ctx: Ctx, input: { externalUserId: string }) {
  const partnerId = partnerOf(ctx);
  const client = await loadClient(ctx.db.read, partnerId, input.externalUserId);
  const access = await effectiveAccessOf(ctx, partnerId);
  const { snapshotOf, automations: rows } = await gateSnapshotsOf(ctx, client, access);
  const providers = [];
  for (const providerId of contractProviders(access)) {
    const snapshot = await snapshotOf(providerId);
    const decision = evaluateEntry(snapshot, "OPEN");
    const row = rows.find((automation) => automation.providerId === providerId);
    providers.push({
      providerId,
      setupEnabled: snapshot.setup?.enabled ?? false,
      mode: snapshot.setup ? "REAL" as const : "PAPER" as const,
      haltedToday: snapshot.dailyLossHalted ?? false,
      ...(row ? { automation: automationView(row) } : {}),
      newEntries: decision.newEntries,
      blockReason: decision.blockReason,
      blockDetail: decision.blockDetail,
      positionMaintenance: "CONTINUES" as const,
    });
  }
  return { externalUserId: client.externalUserId, tenantId: client.tenantId, providers };
}

/** `PUT /v1/users/:id/automation`: switch on or pause, with the risk it runs within. */
export async function putAutomation(ctx: Ctx, input: { externalUserId: string; automation: AutomationInput }) {
  const partnerId = partnerOf(ctx);
  const now = ctx.clock.now();
  const { providerId, strategyId } = input.automation;
  assertConditionsShape(input.automation.conditions ?? {}, providerId);
  return await withPartnerTransaction(ctx, async (tx) => {
    const client = await loadActiveClient(tx, partnerId, input.externalUserId);
    const access = await loadEffectiveAccess(tx, partnerId, now);
    assertProviderUsable(access, providerId);
    const [strategy] = await tx.select().from(strategies).where(eq(strategies.strategyId, strategyId));
    if (!strategy || !clientStrategies(access, client.strategySelection).includes(strategyId)) {
      throw new ApiError("STRATEGY_NOT_GRANTED", {
        message: `A estratégia "${strategyId}" não está concedida e selecionada para este cliente.`,
      });
    }
    if (!strategy.supportedProviders.includes(providerId)) {
      throw new ApiError("STRATEGY_NOT_GRANTED", {
        message: `A estratégia "${strategyId}" não opera em ${providerId}.`,
      });
    }
    const risk = riskMicros(input.automation.risk);
    assertRiskAllowed(risk, access.envelope, strategy.riskRequirements);
    const conditions = checkedConditions(input.automation.conditions ?? {}, strategy.supportedMarkets, providerId);
    const row: Omit<AutomationRow, "lastCohortSignal"> = {
      clientId: client.id,
      providerId,
      strategyId,
      strategyVersion: strategy.version,
      enabled: input.automation.enabled,
      risk,
      conditions,
      updatedAt: now,
    };
    await tx.insert(automations).values(row)
      .onConflictDoUpdate({ target: [automations.clientId, automations.providerId], set: row });
    const automation = automationView(row);
    await emitEvent(tx, {
      type: "automation.updated",
      partnerId,
      tenantId: client.tenantId,
      externalUserId: client.externalUserId,
      occurredAt: now,
      data: {
        providerId,
        strategyId,
        strategyVersion: automation.strategyVersion,
        enabled: automation.enabled,
        risk: automation.risk,
        runtime: automation.runtime,
      },
    });
    const result = { externalUserId: client.externalUserId, automation };
    await ctx.idempotency?.record(tx, result);
    return result;
  });
}

function riskMicros(risk: AutomationRiskInput): AutomationRiskMicros {
  return {
    leverage: risk.leverage,
    maxMarginPerTradeMicros: usdToMicros(risk.maxMarginPerTradeUsd),
    maxConcurrentTrades: risk.maxConcurrentTrades,
    maxDailyLossMicros: usdToMicros(risk.maxDailyLossUsd),
  };
}

/** Within the effective envelope (422) and the strategy's own requirements (observed keys of the spec). */
function assertRiskAllowed(
  risk: AutomationRiskMicros,
  envelope: EnvelopeMicros,
  requirements: Record<string, unknown>,
) {
  const above = fieldsAbove(risk, envelope);
  const maxLeverage = requirements.maxLeverage;
  if (typeof maxLeverage === "number" && risk.leverage > maxLeverage) {
    above.push(`leverage (máx. ${maxLeverage} desta estratégia)`);
  }
  if (above.length) {
    throw new ApiError("RISK_ENVELOPE_EXCEEDED", {
      status: 422,
      message: `Acima do envelope de risco efetivo: ${above.join(", ")}.`,
    });
  }
  const below: string[] = [];
  const minLeverage = requirements.minLeverage;
  if (typeof minLeverage === "number" && risk.leverage < minLeverage) below.push(`leverage (mín. ${minLeverage})`);
  const minMargin = requirements.minMarginPerTradeUsd;
  if (typeof minMargin === "number" && risk.maxMarginPerTradeMicros < usdToMicros(minMargin)) {
    below.push(`maxMarginPerTradeUsd (mín. ${minMargin})`);
  }
  if (below.length) {
    throw new ApiError("VALIDATION_ERROR", {
      message: `Abaixo do mínimo exigido pela estratégia: ${below.join(", ")}.`,
    });
  }
}

/**
 * The conditions' rules of the body alone, answered before anything is read
 * (a malformed body is 400 whatever the client's state): symbols quoted in the
 * provider's currency, a window with two different ends.
 */
function assertConditionsShape(conditions: AutomationConditions, providerId: ProviderId): void {
  const quote = QUOTE_CURRENCY[providerId];
  const foreign = (conditions.symbols ?? []).filter((symbol) => !symbol.endsWith(quote));
  if (foreign.length) foreignSymbols(providerId, foreign);
  const window = conditions.tradingWindowUtc;
  if (window && window.from === window.to) {
    throw new ApiError("VALIDATION_ERROR", { message: "tradingWindowUtc: início e fim não podem ser iguais." });
  }
}

function foreignSymbols(providerId: ProviderId, symbols: string[]): never {
  const named = [...new Set(symbols)].slice(0, 5).join(", ");
  throw new ApiError("VALIDATION_ERROR", {
    message: `Símbolos fora dos mercados da estratégia em ${providerId}: ${named}.`,
  });
}

/** Symbols must be markets of the strategy at this provider (assertConditionsShape checked the rest). */
function checkedConditions(
  conditions: AutomationConditions,
  strategyMarkets: string[],
  providerId: ProviderId,
): AutomationConditions {
  const symbols = conditions.symbols === undefined ? undefined : [...new Set(conditions.symbols)];
  const foreign = (symbols ?? []).filter((symbol) => strategyMarkets.length > 0 && !strategyMarkets.includes(symbol));
  if (foreign.length) foreignSymbols(providerId, foreign);
  const window = conditions.tradingWindowUtc;
  return {
    ...(symbols ? { symbols } : {}),
    ...(window ? { tradingWindowUtc: window } : {}),
    ...(conditions.minConfidence === undefined ? {} : { minConfidence: conditions.minConfidence }),
  };
}
