/**
 * The safety policy: rules that flag risky combinations of a setup. Flags do
 * not forbid anything; they must be acknowledged. The fingerprint hashes the
 * policy version with the exact values the rules read, so an acknowledgement
 * holds for that combination only: change one of those values, or the policy,
 * and the alerts must be acknowledged again. A new rule or threshold is a new
 * `POLICY_VERSION`. The flags are documented in the README (Safety policy).
 */
import { sha256Hex } from "../ids.ts";
import { ApiError } from "../errors.ts";
import type { ProviderId } from "../../venues/types.ts";
import type { SetupValues } from "./setup_values.ts";

export const POLICY_VERSION = "2026-11.1";

/** One rule: its flag code, and when it flags. Money in micro-units. */
const RULES: { code: string; flags: (v: SetupValues) => boolean }[] = [
  // With leverage the margin is a fraction of the exposure; a large margin share of capital at high leverage
  // means one adverse move takes a large part of the capital.
  {
    code: "HIGH_LEVERAGE_LARGE_MARGIN_SHARE",
    flags: (v) =>
      v.leverage >= 10 && v.capitalBaseMicros !== null && v.maxMarginPerTradeMicros * 10 > v.capitalBaseMicros,
  },
  { code: "VERY_HIGH_LEVERAGE", flags: (v) => v.leverage > 25 },
  { code: "NO_AUTO_STOP_LOSS", flags: (v) => !v.autoStopLoss },
  { code: "MEMECOINS_ALLOWED", flags: (v) => v.allowMemecoins },
  { code: "WIDE_ADVERSE_ENTRY", flags: (v) => Number(v.maxAdverseEntryPercent) > 1 },
  {
    code: "LARGE_LOSS_PER_TRADE",
    flags: (v) =>
      v.capitalBaseMicros !== null && v.maxLossPerTradeMicros !== null &&
      v.maxLossPerTradeMicros * 20 > v.capitalBaseMicros,
  },
  {
    code: "LARGE_DAILY_LOSS",
    flags: (v) => v.capitalBaseMicros !== null && v.maxDailyLossMicros * 5 > v.capitalBaseMicros,
  },
];

export interface Safety {
  policyVersion: string;
  fingerprint: string;
  required: boolean;
  acknowledged: boolean;
  flags: string[];
}

/** The values the rules read, in a fixed order: the "exact combination". */
function combination(providerId: ProviderId, v: SetupValues) {
  return [
    providerId,
    v.leverage,
    v.maxMarginPerTradeMicros,
    v.capitalBaseMicros,
    v.maxLossPerTradeMicros,
    v.maxDailyLossMicros,
    v.autoStopLoss,
    v.allowMemecoins,
    v.maxAdverseEntryPercent,
  ];
}

/** The policy's verdict on `values`; `acknowledgedFingerprint` is what the stored setup acknowledged. */
export function evaluateSafety(
  providerId: ProviderId,
  values: SetupValues,
  acknowledgedFingerprint: string | null,
): Safety {
  const flags = RULES.filter((rule) => rule.flags(values)).map((rule) => rule.code);
  const fingerprint = sha256Hex(JSON.stringify([POLICY_VERSION, combination(providerId, values)]));
  return {
    policyVersion: POLICY_VERSION,
    fingerprint,
    required: flags.length > 0,
    acknowledged: flags.length > 0 && acknowledgedFingerprint === fingerprint,
    flags,
  };
}

export interface RiskAcknowledgement {
  fingerprint: string;
  codes: string[];
}

/**
 * The fingerprint to store with a write: refuses (RISK_ACK_REQUIRED) unless
 * the alerts are already acknowledged for this exact combination or the
 * request acknowledges them now, with the preview's fingerprint and all its codes.
 */
export function acknowledgementFor(safety: Safety, given: RiskAcknowledgement | undefined): string | null {
  if (!safety.required) return null;
  if (safety.acknowledged && !given) return safety.fingerprint;
  const codesMatch = given !== undefined && given.codes.length === new Set(given.codes).size &&
    given.codes.length === safety.flags.length && safety.flags.every((code) => given.codes.includes(code));
  if (given?.fingerprint === safety.fingerprint && codesMatch) return safety.fingerprint;
  throw new ApiError("RISK_ACK_REQUIRED", {
    message: `Reconheça os alertas desta combinação (${safety.flags.join(", ")}) com riskAcknowledgement: ` +
      "o fingerprint da pré-visualização e todos os códigos.",
    extra: { safety },
  });
}
