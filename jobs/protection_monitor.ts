/**
 * Protection-monitor job: between reconciliations, each account holding an
 * open position has its stops and targets verified at the venue with one read,
 * and a missing one placed again within its position's attempts.
 */
import type { Ctx, Deps } from "../domain/context.ts";
import { monitorProtection } from "../domain/execution/protection_monitor.ts";

export async function runProtectionMonitor(deps: Deps) {
  const ctx: Ctx = {
    ...deps,
    actor: { kind: "system", job: "protection-monitor" },
    requestId: "job-protection-monitor",
  };
  return await monitorProtection(ctx);
}
