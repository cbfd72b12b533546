/**
 * Payments job: stale instructions expire and submitted transfers are
 * checked again on chain (domain/payments/payment_checks.ts); the networks'
 * Transfer logs are scanned for transfers nobody confirmed
 * (transfer_scan.ts); credited transfers are read again until final
 * (finality.ts). Each isolates its own failures (per payment, per
 * network).
 */
import type { Ctx, Deps } from "../domain/context.ts";
import { checkFinality } from "../domain/payments/finality.ts";
import { checkPayments } from "../domain/payments/payment_checks.ts";
import { scanTransfers } from "../domain/payments/transfer_scan.ts";

export async function runPayments(deps: Deps) {
  const ctx: Ctx = { ...deps, actor: { kind: "system", job: "payments" }, requestId: "job-payments" };
  const checks = await checkPayments(ctx);
  const scan = await scanTransfers(ctx);
  const finality = await checkFinality(ctx);
  return { ...checks, ...scan, ...finality };
}
