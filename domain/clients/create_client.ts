/**
 * `POST /v1/users`: onboard an end user by the partner's own id. The key is
 * partner + externalUserId, so the same id under another partner is another
 * client. Creating an existing pair is not an error: it answers the same client
 * with `created: false`.
 */
import { withTransaction } from "../../db/client.ts";
import { clients } from "../../db/schema.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { ApiError } from "../errors.ts";
import { emitEvent } from "../events/emit_event.ts";
import { loadEffectiveAccess } from "../grants/effective_access.ts";
import { type ClientView, clientView, findClient } from "./load_client.ts";

export async function createClient(
  { ctx, input }: { ctx: Ctx; input: { externalUserId: string; tenantId?: string } },
): Promise<ClientView & { created: boolean }> {
  const partnerId = partnerOf(ctx);
  const now = ctx.clock.now();
  return await withTransaction(ctx.db, async (tx) => {
    const { partner, contract } = await loadEffectiveAccess(tx, partnerId, now);
    const tenants = [partner.partnerId, ...partner.legacyTenantIds];
    if (input.tenantId === undefined && partner.legacyTenantIds.length > 0) throw new ApiError("TENANT_REQUIRED");
    const tenantId = input.tenantId ?? partner.partnerId;
    if (!tenants.includes(tenantId)) throw new ApiError("NOT_FOUND");
    const existing = await findClient(tx, partnerId, input.externalUserId);
    if (existing) {
      if (existing.tenantId !== tenantId) throw new ApiError("TENANT_MISMATCH");
      return { ...clientView(existing), created: false };
    }
    // No new clients under a suspended contract; existing ones stay readable.
    if (contract.suspended) throw new ApiError("TENANT_NOT_ACTIVE");
    const [row] = await tx.insert(clients).values({
      partnerId,
      tenantId,
      externalUserId: input.externalUserId,
      status: "ACTIVE",
      strategySelection: null,
      createdAt: now,
      updatedAt: now,
    }).returning();
    await emitEvent(tx, {
      type: "client.updated",
      partnerId,
      tenantId,
      externalUserId: input.externalUserId,
      occurredAt: now,
      data: { change: "CREATED", status: "ACTIVE" },
    });
    return { ...clientView(row), created: true };
  });
}
