/**
 * A client's setup per provider (spec, Resources: Setup) between its wire
 * form and its stored row: the defaults a never-configured setup reads back
 * with, the declaration a PUT turns into stored values, and the issues that
 * keep it from being enabled.
 */
import type { clientSetups, EnvelopeMicros } from "../../db/schema.ts";
import { fieldsAbove } from "../gates/entry_gates.ts";
import { microsOrNull, microsToUsd, usdOrNull, usdToMicros } from "../money.ts";
import type { ProviderId } from "../../venues/types.ts";
import { formatDec, parseDec } from "../../venues/decimal.ts";

/** The quote asset entries are margined in, per provider (our symbols end with it). */
export const QUOTE_CURRENCY: Record<ProviderId, string> = { VENUE_A: "USDT", VENUE_B: "USDC" };

export type SetupRow = typeof clientSetups.$inferSelect;

/** The values a setup declares, as stored (money in micro-units). */
export type SetupValues = Omit<
  SetupRow,
  "clientId" | "providerId" | "outsideEnvelope" | "acknowledgedFingerprint" | "updatedAt" | "mode" | "market"
>;

/** The Setup body of PUT setup and preview, as validated by the route. */
export interface SetupDeclaration {
  providerId: ProviderId;
  mode: string;
  enabled: boolean;
  leverage: number;
  orderSizeUsd: number;
  maxConcurrentTrades: number;
  maxMarginPerTradeUsd: number;
  maxDailyLossUsd: number;
  capitalBase?: number | null;
  maxLossPerTrade?: number | null;
  entryTimeoutMinutes?: number | null;
  marginType?: "ISOLATED" | "CROSSED";
  allowedSymbols?: string[];
  autoStopLoss?: boolean;
  autoTakeProfit?: boolean;
  autoBreakEven?: boolean;
  allowMemecoins?: boolean;
  maxOpenNotionalUsd?: number | null;
  maxSameDirection?: number | null;
  maxAdverseEntryPercent?: number;
}

/** What an absent optional field means in a full declaration, and what a never-configured setup shows. */
export const SETUP_DEFAULTS: SetupValues = {
  enabled: false,
  leverage: 1,
  marginType: "ISOLATED",
  orderSizeMicros: 10_000_000,
  maxConcurrentTrades: 1,
  maxMarginPerTradeMicros: 0,
  maxDailyLossMicros: 0,
  allowedSymbols: [],
  allowMemecoins: false,
  autoStopLoss: true,
  autoTakeProfit: true,
  autoBreakEven: false,
  maxAdverseEntryPercent: "0.5",
  capitalBaseMicros: null,
  maxLossPerTradeMicros: null,
  entryTimeoutMinutes: null,
  maxOpenNotionalMicros: null,
  maxSameDirection: null,
};

/** A full declaration: every field it leaves out takes its default, never the previous value. */
export function declaredValues(input: SetupDeclaration): SetupValues {
  return {
    enabled: input.enabled,
    leverage: input.leverage,
    marginType: input.marginType ?? SETUP_DEFAULTS.marginType,
    orderSizeMicros: usdToMicros(input.orderSizeUsd),
    maxConcurrentTrades: input.maxConcurrentTrades,
    maxMarginPerTradeMicros: usdToMicros(input.maxMarginPerTradeUsd),
    maxDailyLossMicros: usdToMicros(input.maxDailyLossUsd),
    allowedSymbols: [...new Set(input.allowedSymbols ?? [])],
    allowMemecoins: input.allowMemecoins ?? SETUP_DEFAULTS.allowMemecoins,
    autoStopLoss: input.autoStopLoss ?? SETUP_DEFAULTS.autoStopLoss,
    autoTakeProfit: input.autoTakeProfit ?? SETUP_DEFAULTS.autoTakeProfit,
    autoBreakEven: input.autoBreakEven ?? SETUP_DEFAULTS.autoBreakEven,
    maxAdverseEntryPercent: input.maxAdverseEntryPercent === undefined
      ? SETUP_DEFAULTS.maxAdverseEntryPercent
      : formatDec(parseDec(input.maxAdverseEntryPercent)),
    capitalBaseMicros: microsOrNull(input.capitalBase),
    maxLossPerTradeMicros: microsOrNull(input.maxLossPerTrade),
    entryTimeoutMinutes: input.entryTimeoutMinutes ?? null,
    maxOpenNotionalMicros: microsOrNull(input.maxOpenNotionalUsd),
    maxSameDirection: input.maxSameDirection ?? null,
  };
}

export interface SetupIssue {
  code: string;
  field: string;
  message: string;
}

/** Fields a setup needs before it can be enabled (spec: "to enable"). */
export function missingForEnabling(values: SetupValues): SetupIssue[] {
  const issues: SetupIssue[] = [];
  if (values.capitalBaseMicros === null || values.capitalBaseMicros <= 0) {
    issues.push({
      code: "CAPITAL_BASE_REQUIRED",
      field: "capitalBase",
      message: "Informe o capital base (capitalBase), em USD, para ativar.",
    });
  }
  if (values.maxLossPerTradeMicros === null || values.maxLossPerTradeMicros <= 0) {
    issues.push({
      code: "MAX_LOSS_REQUIRED",
      field: "maxLossPerTrade",
      message: "Informe a perda máxima por operação (maxLossPerTrade), em USD, para ativar.",
    });
  }
  if (values.entryTimeoutMinutes === null) {
    issues.push({
      code: "ENTRY_TIMEOUT_REQUIRED",
      field: "entryTimeoutMinutes",
      message: "Informe em quantos minutos uma entrada não executada expira (entryTimeoutMinutes, 1 a 1440).",
    });
  }
  return issues;
}

/**
 * setupStatus: READY, SETUP_INCOMPLETE (fields missing to enable) or
 * OUTSIDE_ENVELOPE (the envelope was lowered below the setup), with the issues.
 */
export function setupStatus(values: SetupValues, envelope: EnvelopeMicros) {
  const missing = missingForEnabling(values);
  if (missing.length) return { status: "SETUP_INCOMPLETE", issues: missing };
  const above = fieldsAbove(values, envelope);
  if (above.length) {
    return {
      status: "OUTSIDE_ENVELOPE",
      issues: above.map((field) => ({
        code: "OUTSIDE_ENVELOPE",
        field: field.split(" ")[0],
        message: `Acima do envelope de risco efetivo: ${field}. Reduza o valor para voltar a operar.`,
      })),
    };
  }
  return { status: "READY", issues: [] as SetupIssue[] };
}

/**
 * sizingStatus: AVAILABLE when one entry of orderSizeUsd at this leverage
 * needs no more margin than maxMarginPerTradeUsd; CAPPED_BY_MARGIN when the
 * engine will size entries down to maxMarginPerTradeUsd × leverage.
 */
export function sizingStatus(values: SetupValues): "AVAILABLE" | "CAPPED_BY_MARGIN" {
  return values.orderSizeMicros <= values.maxMarginPerTradeMicros * values.leverage ? "AVAILABLE" : "CAPPED_BY_MARGIN";
}

/** The setup's values in wire form (the Setup resource's own fields). */
export function setupValuesWire(values: SetupValues) {
  return {
    enabled: values.enabled,
    market: "FUTURES",
    leverage: values.leverage,
    marginType: values.marginType as "ISOLATED" | "CROSSED",
    orderSizeUsd: microsToUsd(values.orderSizeMicros),
    sizingStatus: sizingStatus(values),
    maxConcurrentTrades: values.maxConcurrentTrades,
    maxMarginPerTradeUsd: microsToUsd(values.maxMarginPerTradeMicros),
    maxDailyLossUsd: microsToUsd(values.maxDailyLossMicros),
    allowedSymbols: values.allowedSymbols,
    allowMemecoins: values.allowMemecoins,
    autoStopLoss: values.autoStopLoss,
    autoTakeProfit: values.autoTakeProfit,
    autoBreakEven: values.autoBreakEven,
    maxAdverseEntryPercent: Number(values.maxAdverseEntryPercent),
    capitalBase: usdOrNull(values.capitalBaseMicros),
    maxLossPerTrade: usdOrNull(values.maxLossPerTradeMicros),
    entryTimeoutMinutes: values.entryTimeoutMinutes,
  };
}

/** The stored values of a row (or the defaults when there is none). */
export function valuesOf(row: SetupRow | null): SetupValues {
  if (!row) return SETUP_DEFAULTS;
  const {
    clientId: _c,
    providerId: _p,
    outsideEnvelope: _o,
    acknowledgedFingerprint: _a,
    updatedAt: _u,
    mode: _m,
    market: _k,
    ...values
  } = row;
  return values;
}
