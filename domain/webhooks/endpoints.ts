/**
 * A partner's webhook endpoint (`PUT /operator/v1/partners/:partnerId/webhook`).
 * Registering answers a new signing secret, once; it is kept sealed (it must
 * sign, so it cannot be hashed). Registering again rotates it: for
 * `overlapSeconds` the previous secret signs too, so the partner can switch
 * without refusing a delivery. Deliveries begin with the events that follow.
 */
import { eq, max } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { events, webhookEndpoints } from "../../db/schema.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { randomSecret } from "../ids.ts";
import { loadPartner } from "../partners/load_partner.ts";
import { bindingOf, SEALED_COLUMNS } from "../secrets/sealed_columns.ts";
import { checkedAddresses, OutboundRefusal } from "../outbound/outbound_policy.ts";

const [SECRET, PREVIOUS_SECRET] = SEALED_COLUMNS.filter((column) => column.table === "webhook_endpoints");
/** How long a rotated-out secret still signs, by default. */
export const DEFAULT_OVERLAP_SECONDS = 24 * 3600;

export async function registerWebhook(
  ctx: Ctx,
  input: { partnerId: string; url: string; overlapSeconds?: number },
) {
  const url = await allowedUrl(ctx, input.url);
  await loadPartner(ctx.db.read, input.partnerId);
  const secret = `whsec_${randomSecret(32)}`;
  const now = ctx.clock.now();
  const sealed = (await ctx.secrets.seal(secret, bindingOf(SECRET, input.partnerId))).sealed;
  return await withTransaction(ctx.db, async (tx) => {
    const [existing] = await tx.select().from(webhookEndpoints).where(eq(webhookEndpoints.partnerId, input.partnerId));
    const previous = existing
      ? {
        previousSealedSecret: await resealAsPrevious(ctx, input.partnerId, existing.sealedSecret),
        previousUntil: now + (input.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS) * 1000,
      }
      : { previousSealedSecret: null, previousUntil: null };
    const [{ last }] = await tx.select({ last: max(events.seq) }).from(events)
      .where(eq(events.partnerId, input.partnerId));
    const row = {
      partnerId: input.partnerId,
      url,
      sealedSecret: sealed,
      ...previous,
      afterSeq: existing?.afterSeq ?? last ?? 0,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
    await tx.insert(webhookEndpoints).values(row)
      .onConflictDoUpdate({ target: webhookEndpoints.partnerId, set: row });
    return { partnerId: input.partnerId, url, signingSecret: secret };
  });
}

/** The secrets that sign a delivery now: the current one, and the previous one during its overlap. */
export async function signingSecrets(ctx: Ctx, endpoint: typeof webhookEndpoints.$inferSelect): Promise<string[]> {
  const secrets = [
    await ctx.secrets.open({ sealed: endpoint.sealedSecret, binding: bindingOf(SECRET, endpoint.partnerId) }),
  ];
  if (endpoint.previousSealedSecret && endpoint.previousUntil !== null && ctx.clock.now() < endpoint.previousUntil) {
    secrets.push(
      await ctx.secrets.open({
        sealed: endpoint.previousSealedSecret,
        binding: bindingOf(PREVIOUS_SECRET, endpoint.partnerId),
      }),
    );
  }
  return secrets;
}

/** The current secret moves to the previous column, sealed under that column's binding. */
async function resealAsPrevious(ctx: Ctx, partnerId: string, sealed: string): Promise<string> {
  const plain = await ctx.secrets.open({ sealed, binding: bindingOf(SECRET, partnerId) });
  return (await ctx.secrets.seal(plain, bindingOf(PREVIOUS_SECRET, partnerId))).sealed;
}

/**
 * https, no credentials, and a host whose every address is public (in QA
 * with OUTBOUND_ALLOW_LOOPBACK, also loopback over http). Checked again before
 * every delivery: a name can resolve elsewhere later.
 */
async function allowedUrl(ctx: Ctx, candidate: string): Promise<string> {
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    throw new ApiError("VALIDATION_ERROR", { message: "url: não é uma URL válida." });
  }
  try {
    await checkedAddresses(ctx.outbound.policy, url);
  } catch (error) {
    if (error instanceof OutboundRefusal) throw new ApiError("VALIDATION_ERROR", { message: `url: ${error.message}.` });
    throw error;
  }
  return url.href;
}
