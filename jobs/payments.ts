/**
 * Payments job: stale instructions expire and submitted transfers are
 * checked again on chain (domain/payments/payment_checks.ts).
 */
import type { Ctx, Deps } from "../domain/context.ts";
import { checkPayments } from "../domain/payments/payment_checks.ts";

export async function runPayments(deps: Deps) {
  const ctx: Ctx = { ...deps, actor: { kind: "system", job: "payments" }, requestId: "job-payments" };
  return { ...await checkPayments(ctx) };
}
