/**
 * The safety policy: rules that flag risky combinations of a setup. Flags do
 * not forbid anything; they must be acknowledged. The fingerprint hashes the
 * policy version with the exact values the rules read, so an acknowledgement
 * holds for that combination only: raise one of those values, or change the
 * policy, and the alerts must be acknowledged again. A change that only makes
 * an acknowledged setup safer (no new flag, every value the rules read the
 * same or moved in its safe direction) keeps the acknowledgement, which then
 * moves to the new combination (issue 28). A new rule or threshold is a new
 * `POLICY_VERSION`. The flags are documented in docs/api-notes.md (Safety policy).
 */
import { sha256Hex } from "../ids.ts";
import { ApiError } from "../errors.ts";
import type { ProviderId } from "../../venues/types.ts";
import { cmp } from "../../venues/decimal.ts";
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

/** One value the rules read, and whether its value in `after` is the same as in `before` or safer. */
function field<K extends keyof SetupValues>(
  key: K,
  sameOrSafer: (before: SetupValues[K], after: SetupValues[K]) => boolean,
) {
  return { key, sameOrSafer: (before: SetupValues, after: SetupValues) => sameOrSafer(before[key], after[key]) };
}

const lowerOrSame = (before: number, after: number) => after <= before;
/** null is no limit at all: a limit removed, or set where there was none, is not classified as safer. */
const lowerLimitOrSame = (before: number | null, after: number | null) =>
  before === after || (before !== null && after !== null && after <= before);

/**
 * The values the rules read, in the fingerprint's fixed order (the "exact
 * combination"), each with its safe direction. The order is hashed: changing
 * it voids every stored acknowledgement. A rule reading another value must
 * add it here, with a direction; whatever has no safe direction only passes
 * unchanged. Lower leverage, margin, loss per trade and daily loss are
 * safer (0 is the strictest: no margin opens nothing, a daily limit of 0 halts
 * on the first loss); the automatic stop on and memecoins off are safer; a
 * lower maxAdverseEntryPercent enters closer to the signal. capitalBase is no
 * limit but the base every share is measured against: lowering it enlarges
 * each share, and raising it only makes the same limits look smaller, so any
 * change of it needs the acknowledgement again.
 */
const COMBINATION = [
  field("leverage", lowerOrSame),
  field("maxMarginPerTradeMicros", lowerOrSame),
  field("capitalBaseMicros", (before, after) => before === after),
  field("maxLossPerTradeMicros", lowerLimitOrSame),
  field("maxDailyLossMicros", lowerOrSame),
  field("autoStopLoss", (before, after) => after === before || after),
  field("allowMemecoins", (before, after) => after === before || !after),
  field("maxAdverseEntryPercent", (before, after) => cmp(after, before) <= 0),
];

function flagsOf(values: SetupValues): string[] {
  return RULES.filter((rule) => rule.flags(values)).map((rule) => rule.code);
}

function fingerprintOf(providerId: ProviderId, values: SetupValues): string {
  return sha256Hex(JSON.stringify([POLICY_VERSION, [providerId, ...COMBINATION.map(({ key }) => values[key])]]));
}

/** What a stored setup acknowledged: its values and the fingerprint stored with them (null: none). */
export interface StoredAcknowledgement {
  values: SetupValues;
  fingerprint: string | null;
}

/**
 * Whether the stored acknowledgement holds for `values`, another combination:
 * only when it holds for the stored values themselves (this policy version,
 * that exact combination), `values` raise no flag the stored values did not,
 * and every value the rules read is the same or safer. Anything else, a
 * mixed change (one value down, another up) included, needs a new one.
 */
export function carriesOver(
  providerId: ProviderId,
  stored: StoredAcknowledgement,
  values: SetupValues,
): boolean {
  if (stored.fingerprint === null || stored.fingerprint !== fingerprintOf(providerId, stored.values)) return false;
  const acknowledgedFlags = flagsOf(stored.values);
  return flagsOf(values).every((code) => acknowledgedFlags.includes(code)) &&
    COMBINATION.every(({ sameOrSafer }) => sameOrSafer(stored.values, values));
}

/**
 * The policy's verdict on `values`. `stored` is the setup as stored with its
 * acknowledgement (null when never configured): `acknowledged` is true when
 * that acknowledgement is for this exact combination or carries over to it,
 * which is what a write of `values` without a new acknowledgement would find.
 */
export function evaluateSafety(
  providerId: ProviderId,
  values: SetupValues,
  stored: StoredAcknowledgement | null,
): Safety {
  const flags = flagsOf(values);
  const fingerprint = fingerprintOf(providerId, values);
  return {
    policyVersion: POLICY_VERSION,
    fingerprint,
    required: flags.length > 0,
    acknowledged: flags.length > 0 && stored !== null &&
      (stored.fingerprint === fingerprint || carriesOver(providerId, stored, values)),
    flags,
  };
}

export interface RiskAcknowledgement {
  fingerprint: string;
  codes: string[];
}

/**
 * The fingerprint to store with a write: refuses (RISK_ACK_REQUIRED) unless
 * the alerts are already acknowledged (this exact combination, or a safer one
 * of an acknowledged setup) or the request acknowledges them now, with the
 * preview's fingerprint and all its codes. It is always the new combination's
 * fingerprint, stored with the values in the same write: an acknowledgement
 * carried over to a safer combination no longer holds for the riskier one it
 * came from, so raising back needs a new acknowledgement.
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
