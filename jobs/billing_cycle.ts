/**
 * Billing-cycle job: monthly subscriptions become obligations, and clients
 * whose obligations fell due, ran out of grace or were settled are announced
 * (domain/billing/billing_cycle.ts).
 */
import type { Ctx, Deps } from "../domain/context.ts";
import { runBillingCycle } from "../domain/billing/billing_cycle.ts";

export async function runBillingCycleJob(deps: Deps) {
  const ctx: Ctx = { ...deps, actor: { kind: "system", job: "billing-cycle" }, requestId: "job-billing-cycle" };
  return { ...await runBillingCycle(ctx) };
}
