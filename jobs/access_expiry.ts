/**
 * Access-expiry job: credentials the venue ends by itself (agent approvals)
 * are announced before their end and marked lost once the venue confirms it.
 */
import type { Ctx, Deps } from "../domain/context.ts";
import { watchAccessExpiry } from "../domain/accounts/access_expiry.ts";

export async function runAccessExpiry(deps: Deps) {
  const ctx: Ctx = { ...deps, actor: { kind: "system", job: "access-expiry" }, requestId: "job-access-expiry" };
  return await watchAccessExpiry(ctx);
}
