/**
 * Webhook-delivery job: one pass of the sender, waiting for its attempts
 * (domain/webhooks/worker.ts). The service also runs a pass every second.
 */
import type { Ctx, Deps } from "../domain/context.ts";
import { WebhookWorker } from "../domain/webhooks/worker.ts";

export async function runWebhookDelivery(deps: Deps) {
  const ctx: Ctx = { ...deps, actor: { kind: "system", job: "webhook-delivery" }, requestId: "job-webhook-delivery" };
  return { ...await new WebhookWorker(ctx).passAndWait() };
}
