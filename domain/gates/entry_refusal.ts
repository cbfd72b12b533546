/**
 * A manual opening the entry gates blocked, as the error the order routes
 * answer: the spec's codes where it names one (403 B2B_ACCESS_SUSPENDED for a
 * suspended party or overdue billing, 422 RISK_ENVELOPE_EXCEEDED, 422
 * DAILY_LOSS_HALT, 422 CREDENTIALS_MISSING, ...), the block reason itself
 * otherwise; the gate's pt-BR detail is the message.
 */
import { ApiError, ERROR_CATALOG, type ErrorCode } from "../errors.ts";
import type { GateDecision } from "./entry_gates.ts";

const ERROR_OF_REASON: Record<string, ErrorCode> = {
  B2B_ACCESS_SUSPENDED: "B2B_ACCESS_SUSPENDED",
  CLIENT_SUSPENDED: "B2B_ACCESS_SUSPENDED",
  OUTSIDE_ENVELOPE: "RISK_ENVELOPE_EXCEEDED",
  SETUP_INCOMPLETE: "SETUP_INCOMPLETE",
  DAILY_RISK_EXHAUSTED: "DAILY_LOSS_HALT",
  API_NOT_CONFIGURED: "CREDENTIALS_MISSING",
  PROVIDER_ACCESS_LOST: "PROVIDER_CREDENTIAL_REJECTED",
  READINESS_UNKNOWN: "ENTRY_CIRCUIT_OPEN",
};

export function entryRefusal(decision: Extract<GateDecision, { newEntries: "BLOCKED" }>): ApiError {
  const reason = decision.blockReason;
  // Gate 7: any commercial refusal (overdue obligation, revoked, ...) denies openings, as a suspension does.
  const named = ERROR_OF_REASON[reason] ?? (decision.gate === 7 ? "B2B_ACCESS_SUSPENDED" : reason);
  // Every reason a manual opening can meet is in the catalog; an unknown one still refuses, never answers 500.
  const code: ErrorCode = named in ERROR_CATALOG ? named as ErrorCode : "ENTRY_CIRCUIT_OPEN";
  const status = code === "RISK_ENVELOPE_EXCEEDED" || code === "PROVIDER_CREDENTIAL_REJECTED" ? 422 : undefined;
  return new ApiError(code, { message: decision.blockDetail, ...(status ? { status } : {}) });
}
