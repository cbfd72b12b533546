/**
 * Reconcile job: every account with a usable credential is reconciled with
 * its venue (open intents settled by query, positions and resting entries
 * kept, fills and funding recorded), in bounded batches that yield between
 * them so the API stays responsive.
 */
import type { Ctx, Deps } from "../domain/context.ts";
import { reconcileAccounts } from "../domain/execution/reconcile_accounts.ts";

export async function runReconcile(deps: Deps) {
  const ctx: Ctx = { ...deps, actor: { kind: "system", job: "reconcile" }, requestId: "job-reconcile" };
  return await reconcileAccounts(ctx);
}
