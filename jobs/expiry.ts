/** Expiry job: idempotency keys past their retention (connect sessions and payment instructions join later). */
import type { Deps } from "../domain/context.ts";
import { purgeExpiredKeys } from "../domain/idempotency/idempotency_keys.ts";

export async function runExpiry(deps: Deps) {
  return { idempotencyKeysPurged: await purgeExpiredKeys(deps.db, deps.clock.now()) };
}
