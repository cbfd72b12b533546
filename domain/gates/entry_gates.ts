/**
 * The entry gates (spec, Entry gates): the one decision whether a new real
 * entry may open for a client at a provider. It is a pure function of a
 * snapshot, so the automation view, the order routes and the signal engine
 * ask the same question and get the same answer; the snapshot is loaded by
 * `gate_snapshot.ts`. Gates run in the spec's order and the first that blocks
 * wins. Closing, reducing, protecting and reconciling never pass through
 * here: they are allowed with everything else blocked.
 */
import type { AutomationConditions, AutomationRiskMicros, EnvelopeMicros } from "../../db/schema.ts";
import type { ConnectionState } from "../accounts/connection_state.ts";
import { microsToUsd } from "../money.ts";

/** What a caller wants to do. Only OPEN is an entry; the others are maintenance. */
export type GateAction = "OPEN" | "CLOSE" | "REDUCE" | "PROTECT" | "RECONCILE";

/** A stored value the gates read; `null` anywhere below means "could not be read": fail closed. */
export interface GateSnapshot {
  /** Evaluation time (the service clock), for the trading window. */
  now: number;
  partnerActive: boolean;
  contractSuspended: boolean;
  clientActive: boolean;
  provider: { inContract: boolean; inEffectiveGrant: boolean };
  automation: {
    enabled: boolean;
    risk: AutomationRiskMicros;
    conditions: AutomationConditions;
    strategy: {
      strategyId: string;
      published: boolean;
      /** Published ∩ contract grant ∩ partner restriction holds it. */
      inPartnerGrant: boolean;
      selectedByClient: boolean;
      supportsProvider: boolean;
      /** Its supportedMarkets (empty: any). */
      markets: string[];
    };
  } | null;
  setup: {
    enabled: boolean;
    /** Codes of setupStatus.issues: missing fields needed to enable. */
    missing: string[];
    leverage: number;
    maxMarginPerTradeMicros: number;
    maxConcurrentTrades: number;
    maxDailyLossMicros: number;
    allowedSymbols: string[];
    allowMemecoins: boolean;
  } | null;
  envelope: EnvelopeMicros;
  /** True when today's realized loss reached maxDailyLossUsd. */
  dailyLossHalted: boolean | null;
  /** The operator's entry policies at this provider, by symbol. */
  assetPolicies: ReadonlyMap<string, { memecoin: boolean }> | null;
  commercial: { allowed: boolean; reasonCode: string } | null;
  readiness: {
    realExecution: "ENABLED" | "NOT_VALIDATED";
    connection: ConnectionState;
    /** Account settings the service cannot trade with (from the last credential test). */
    accountProblems: string[];
    /** false after the last call found the venue unreachable. */
    venueReachable: boolean;
    /** The account has intents whose outcome is unknown, or was never reconciled: its exposure is not known. */
    reconciliationPending: boolean;
    /** A position the service opened on the account is not PROTECTED (degraded, access lost, or still being protected). */
    protectionUnconfirmed: boolean;
    /** The account holds a position at the venue that none of the service's open positions explains. */
    externalExposure: boolean;
    /** Real positions and pending entries on the account, external ones included. */
    slotsUsed: number | null;
  };
  /** Builder-fee venues only (VENUE_B); null elsewhere. */
  builder: {
    /** The platform beneficiary; null when none is configured. */
    beneficiary: string | null;
    feeTenthsBps: number;
    ceilingTenthsBps: number;
    /** What the principal wallet approved; null when the check was inconclusive. */
    approvedMaxFeeTenthsBps: number | null;
    /** Whether fees accrue to the beneficiary (standard mode at the venue); null when it could not be read. */
    beneficiaryAccruesFees: boolean | null;
  } | null;
}

/** A concrete entry (a signal or an order): without one, the gates judge whether any entry could open. */
export interface EntryCandidate {
  symbol: string;
  /** The signal's confidence, 0-100. */
  confidence?: number;
}

export type GateDecision =
  | { newEntries: "ALLOWED"; blockReason: null; blockDetail: null }
  | { newEntries: "BLOCKED"; gate: number; blockReason: string; blockDetail: string };

/** One simultaneous real position per account (spec, Limits). */
export const REAL_POSITIONS_PER_ACCOUNT = 1;

/** Account problems that make the account unusable for entries. */
const BLOCKING_ACCOUNT_PROBLEMS = new Set([
  "FUTURES_DISABLED",
  "HEDGE_MODE_ENABLED",
  "MULTI_ASSETS_MARGIN_ENABLED",
  "AGENT_NOT_APPROVED",
]);

const ALLOWED: GateDecision = { newEntries: "ALLOWED", blockReason: null, blockDetail: null };

class Blocked {
  constructor(readonly gate: number, readonly reason: string, readonly detail: string) {}
}

function block(gate: number, reason: string, detail: string): never {
  throw new Blocked(gate, reason, detail);
}

/**
 * Who asks: the signal engine routes through the client's automation;
 * a partner's manual order (the order routes) answers to no automation.
 */
export type EntryChannel = "AUTOMATION" | "MANUAL";

/**
 * A manual order is judged as if by an enabled automation without conditions
 * or risk of its own: every other gate (parties, provider grant, asset and
 * setup, envelope, daily halt, commercial, readiness, builder) still applies.
 */
const MANUAL_ORDER_AUTOMATION: NonNullable<GateSnapshot["automation"]> = {
  enabled: true,
  risk: { leverage: 0, maxMarginPerTradeMicros: 0, maxConcurrentTrades: 0, maxDailyLossMicros: 0 },
  conditions: {},
  strategy: {
    strategyId: "MANUAL",
    published: true,
    inPartnerGrant: true,
    selectedByClient: true,
    supportsProvider: true,
    markets: [],
  },
};

/** The decision for `action`; maintenance is always allowed. */
export function evaluateEntry(
  snapshot: GateSnapshot,
  action: GateAction,
  candidate?: EntryCandidate,
  channel: EntryChannel = "AUTOMATION",
): GateDecision {
  if (action !== "OPEN") return ALLOWED;
  const judged = channel === "MANUAL" ? { ...snapshot, automation: MANUAL_ORDER_AUTOMATION } : snapshot;
  try {
    for (const gate of GATES) gate(judged, candidate);
    return ALLOWED;
  } catch (error) {
    if (!(error instanceof Blocked)) throw error;
    return { newEntries: "BLOCKED", gate: error.gate, blockReason: error.reason, blockDetail: error.detail };
  }
}

type Gate = (s: GateSnapshot, candidate?: EntryCandidate) => void;

/** 1. Partner, tenant and client are active. */
const activeParties: Gate = (s) => {
  if (!s.partnerActive) block(1, "B2B_ACCESS_SUSPENDED", "O parceiro está suspenso.");
  if (s.contractSuspended) block(1, "B2B_ACCESS_SUSPENDED", "O contrato (tenant) está suspenso.");
  if (!s.clientActive) block(1, "CLIENT_SUSPENDED", "O cliente está suspenso.");
};

/** 2. Provider and strategy are in the effective grant (an automation names the strategy). */
const inGrant: Gate = (s) => {
  if (!s.provider.inContract) block(2, "PROVIDER_NOT_ALLOWED", "Provedor fora do contrato do parceiro.");
  if (!s.provider.inEffectiveGrant) block(2, "PROVIDER_NOT_GRANTED", "Provedor removido pela restrição do parceiro.");
  if (!s.automation) block(2, "AUTOMATION_OFF", "Nenhuma automação configurada para este provedor.");
  if (!s.automation.enabled) block(2, "AUTOMATION_OFF", "A automação está pausada.");
  const { strategy } = s.automation;
  if (!strategy.published) {
    block(2, "STRATEGY_NOT_AVAILABLE", `A estratégia "${strategy.strategyId}" não está publicada.`);
  }
  if (!strategy.inPartnerGrant) {
    block(2, "STRATEGY_NOT_GRANTED", `A estratégia "${strategy.strategyId}" está fora da concessão do parceiro.`);
  }
  if (!strategy.supportsProvider) {
    block(2, "STRATEGY_NOT_GRANTED", `A estratégia "${strategy.strategyId}" não opera neste provedor.`);
  }
};

/** 3. The strategy is selected by the client. */
const selected: Gate = (s) => {
  const { strategy } = s.automation!;
  if (!strategy.selectedByClient) {
    block(3, "STRATEGY_NOT_GRANTED", `A estratégia "${strategy.strategyId}" não está selecionada para o cliente.`);
  }
};

/** 4. The asset is inside the setup, the automation's conditions and an operator entry policy. */
const assetAllowed: Gate = (s, candidate) => {
  const automation = s.automation!;
  if (!s.setup) block(4, "SETUP_DISABLED", "Nenhuma configuração (setup) salva para este provedor.");
  if (!s.assetPolicies) block(4, "READINESS_UNKNOWN", "Não foi possível ler as políticas de ativos.");
  const window = automation.conditions.tradingWindowUtc;
  if (window && !insideWindow(s.now, window)) {
    block(4, "OUTSIDE_TRADING_WINDOW", `Fora da janela de negociação ${window.from}–${window.to} UTC.`);
  }
  const allowedBy = (symbol: string) =>
    (s.setup!.allowedSymbols.length === 0 || s.setup!.allowedSymbols.includes(symbol)) &&
    (!automation.conditions.symbols?.length || automation.conditions.symbols.includes(symbol)) &&
    (automation.strategy.markets.length === 0 || automation.strategy.markets.includes(symbol));
  const memecoinRefused = (symbol: string) => !s.setup!.allowMemecoins && s.assetPolicies!.get(symbol)?.memecoin;
  if (candidate) {
    if (!allowedBy(candidate.symbol) || memecoinRefused(candidate.symbol)) {
      block(4, "ASSET_NOT_ALLOWED", `${candidate.symbol} está fora dos ativos permitidos do setup e da automação.`);
    }
    if (!s.assetPolicies.has(candidate.symbol)) {
      block(4, "ASSET_POLICY_REQUIRED", `${candidate.symbol} não tem política de entrada configurada.`);
    }
    const minConfidence = automation.conditions.minConfidence;
    if (minConfidence !== undefined && (candidate.confidence ?? 0) < minConfidence) {
      block(4, "BELOW_MIN_CONFIDENCE", `Confiança do sinal abaixo do mínimo de ${minConfidence}.`);
    }
    return;
  }
  const tradable = [...s.assetPolicies.keys()].filter((symbol) => allowedBy(symbol) && !memecoinRefused(symbol));
  if (tradable.length === 0) {
    block(4, "ASSET_POLICY_REQUIRED", "Nenhum ativo permitido pelo setup e pela automação tem política de entrada.");
  }
};

/** 5. Risk is within the effective envelope (setup and automation alike). */
const withinEnvelope: Gate = (s) => {
  const over = [
    ...fieldsAbove(s.setup!, s.envelope).map((field) => `setup.${field}`),
    ...fieldsAbove(s.automation!.risk, s.envelope).map((field) => `automation.risk.${field}`),
  ];
  if (over.length) {
    block(5, "OUTSIDE_ENVELOPE", `Acima do envelope de risco efetivo: ${over.join(", ")}. Reduza a configuração.`);
  }
};

/** 6. The setup is enabled and complete, and no daily-loss halt is active. */
const setupValid: Gate = (s) => {
  if (!s.setup!.enabled) block(6, "SETUP_DISABLED", "A configuração (setup) está desativada.");
  if (s.setup!.missing.length) block(6, "SETUP_INCOMPLETE", `Faltam campos: ${s.setup!.missing.join(", ")}.`);
  if (s.dailyLossHalted === null) block(6, "READINESS_UNKNOWN", "Não foi possível ler o resultado do dia.");
  if (s.dailyLossHalted) {
    block(6, "DAILY_RISK_EXHAUSTED", "Limite de perda diária atingido; novas entradas a partir de 00:00 UTC.");
  }
};

/** 7. Commercial gate: contract active, no overdue obligation. */
const commercialAllowed: Gate = (s) => {
  if (!s.commercial) block(7, "READINESS_UNKNOWN", "Não foi possível ler a situação comercial.");
  if (!s.commercial.allowed) block(7, s.commercial.reasonCode, "Situação comercial não permite novas entradas.");
};

/** 8. Provider readiness: real execution validated, access healthy, a free position slot. */
const providerReady: Gate = (s) => {
  const r = s.readiness;
  if (r.realExecution !== "ENABLED") {
    block(8, "REAL_EXECUTION_NOT_VALIDATED", "A execução real ainda não foi validada para este provedor.");
  }
  if (r.connection === "ACCESS_LOST" || r.connection === "RECOVERING") {
    block(8, "PROVIDER_ACCESS_LOST", "O provedor recusou a credencial; reconecte a conta.");
  }
  if (r.connection !== "CONNECTED") block(8, "API_NOT_CONFIGURED", "Conta do provedor não conectada.");
  const problems = r.accountProblems.filter((problem) => BLOCKING_ACCOUNT_PROBLEMS.has(problem));
  if (problems.length) block(8, "ACCOUNT_SETTINGS_INVALID", `Ajuste a conta no provedor: ${problems.join(", ")}.`);
  if (!r.venueReachable) block(8, "ENTRY_CIRCUIT_OPEN", "Provedor indisponível; entradas pausadas.");
  if (r.reconciliationPending) {
    block(8, "ENTRY_CIRCUIT_OPEN", "Reconciliação pendente nesta conta; entradas pausadas até concluí-la.");
  }
  if (r.protectionUnconfirmed) {
    block(
      8,
      "ENTRY_CIRCUIT_OPEN",
      "Uma posição desta conta está sem proteção confirmada no provedor; entradas pausadas.",
    );
  }
  if (r.externalExposure) {
    block(
      8,
      "ENTRY_CIRCUIT_OPEN",
      "A conta tem posição aberta fora da plataforma; entradas pausadas com exposição mista.",
    );
  }
  if (r.slotsUsed === null) block(8, "READINESS_UNKNOWN", "Não foi possível ler as posições da conta.");
  if (r.slotsUsed >= REAL_POSITIONS_PER_ACCOUNT) {
    block(8, "POSITION_COUNT_CAP", "Já existe uma posição real ou entrada pendente nesta conta.");
  }
};

/** 9. Builder configuration valid and, for a positive fee, approved by the wallet (VENUE_B). */
const builderReady: Gate = (s) => {
  const b = s.builder;
  if (!b) return;
  if (!b.beneficiary) block(9, "BUILDER_CONFIG_REQUIRED", "Sem configuração de builder efetiva.");
  if (!/^0x[0-9a-fA-F]{40}$/.test(b.beneficiary) || /^0x0{40}$/.test(b.beneficiary)) {
    block(9, "BUILDER_CONFIG_INVALID", "Beneficiário de builder inválido.");
  }
  if (!Number.isInteger(b.feeTenthsBps) || b.feeTenthsBps < 0 || b.feeTenthsBps > b.ceilingTenthsBps) {
    block(9, "BUILDER_FEE_INVALID", `Taxa de builder acima do teto de ${b.ceilingTenthsBps} décimos de bp.`);
  }
  if (b.feeTenthsBps === 0) return;
  // A builder outside standard mode earns nothing at the venue: a paid opening would pay the platform no fee.
  if (b.beneficiaryAccruesFees === false) {
    block(
      9,
      "BUILDER_CONFIG_INVALID",
      "O beneficiário de builder não está no modo padrão na venue; a taxa de builder não seria creditada.",
    );
  }
  if (b.beneficiaryAccruesFees === null) {
    block(9, "READINESS_UNKNOWN", "Não foi possível confirmar o modo da conta do beneficiário de builder.");
  }
  if (b.approvedMaxFeeTenthsBps === null) {
    block(9, "READINESS_UNKNOWN", "Não foi possível confirmar a aprovação da taxa de builder.");
  }
  if (b.approvedMaxFeeTenthsBps < b.feeTenthsBps) {
    block(9, "BUILDER_APPROVAL_REQUIRED", "A carteira precisa aprovar a taxa de builder (sessão BUILDER_APPROVAL).");
  }
};

const GATES: Gate[] = [
  activeParties,
  inGrant,
  selected,
  assetAllowed,
  withinEnvelope,
  setupValid,
  commercialAllowed,
  providerReady,
  builderReady,
];

/** The envelope fields a setup or automation risk exceeds, in wire names with the limit. */
export function fieldsAbove(
  values: Pick<EnvelopeMicros, "maxMarginPerTradeMicros" | "maxConcurrentTrades" | "maxDailyLossMicros"> & {
    leverage: number;
  },
  envelope: EnvelopeMicros,
): string[] {
  const over: string[] = [];
  if (values.leverage > envelope.maxLeverage) over.push(`leverage (máx. ${envelope.maxLeverage})`);
  if (values.maxMarginPerTradeMicros > envelope.maxMarginPerTradeMicros) {
    over.push(`maxMarginPerTradeUsd (máx. ${microsToUsd(envelope.maxMarginPerTradeMicros)})`);
  }
  if (values.maxConcurrentTrades > envelope.maxConcurrentTrades) {
    over.push(`maxConcurrentTrades (máx. ${envelope.maxConcurrentTrades})`);
  }
  if (values.maxDailyLossMicros > envelope.maxDailyLossMicros) {
    over.push(`maxDailyLossUsd (máx. ${microsToUsd(envelope.maxDailyLossMicros)})`);
  }
  return over;
}

/** `from`–`to` in UTC "HH:MM"; a window whose end is before its start wraps past midnight. */
export function insideWindow(now: number, window: { from: string; to: string }): boolean {
  const minuteOfDay = Math.floor(now / 60_000) % 1440;
  const from = minutesOf(window.from);
  const to = minutesOf(window.to);
  return from <= to ? minuteOfDay >= from && minuteOfDay < to : minuteOfDay >= from || minuteOfDay < to;
}

function minutesOf(hhmm: string): number {
  const [hours, minutes] = hhmm.split(":").map(Number);
  return hours * 60 + minutes;
}
