/**
 * `POST /v1/users`: onboard an end user by the partner's own id. The key is
 * partner + externalUserId, so the same id under another partner is another
 * client. Creating an existing pair is not an error: it answers the same client
 * with `created: false`.
 *
 * One short transaction holds the whole effect: the client row, its
 * `client.updated` event and the request's idempotent answer, every statement
 * prepared once. The credential, the partner and its contract are checked
 * inside it, so a revoke or suspension committed by any instance applies to
 * the next create.
 */
import { sql } from "drizzle-orm";
import { preparedFor } from "../../db/client.ts";
import { writeWithNext } from "../../db/held_write.ts";
import { withPartnerTransaction } from "../credentials/partner_transaction.ts";
import { clients } from "../../db/schema.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { ApiError } from "../errors.ts";
import { emitEvent } from "../events/emit_event.ts";
import { contractInForce, loadPartner } from "../partners/load_partner.ts";
import { type ClientView, clientView, findClient } from "./load_client.ts";

const insertClient = preparedFor((db) =>
  db.insert(clients).values({
    partnerId: sql.placeholder("partnerId"),
    tenantId: sql.placeholder("tenantId"),
    externalUserId: sql.placeholder("externalUserId"),
    status: sql.placeholder("status"),
    strategySelection: null,
    createdAt: sql.placeholder("createdAt"),
    updatedAt: sql.placeholder("updatedAt"),
  }).prepare()
);

export async function createClient(
  { ctx, input }: { ctx: Ctx; input: { externalUserId: string; tenantId?: string } },
): Promise<ClientView & { created: boolean }> {
  const partnerId = partnerOf(ctx);
  const now = ctx.clock.now();
  return await withPartnerTransaction(ctx, async (tx) => {
    // Read together (one round trip on a libSQL server), then judged in the order each check always had: the
    // contract only matters for a new client, and a read whose check comes later fails nothing before it.
    const partnerRead = loadPartner(tx, partnerId);
    const existingRead = findClient(tx, partnerId, input.externalUserId);
    const contractRead = contractInForce(tx, partnerId, now);
    await Promise.allSettled([partnerRead, existingRead, contractRead]);
    const partner = await partnerRead;
    const tenants = [partner.partnerId, ...partner.legacyTenantIds];
    if (input.tenantId === undefined && partner.legacyTenantIds.length > 0) throw new ApiError("TENANT_REQUIRED");
    const tenantId = input.tenantId ?? partner.partnerId;
    if (!tenants.includes(tenantId)) throw new ApiError("NOT_FOUND");
    const existing = await existingRead;
    let result: ClientView & { created: boolean };
    if (existing) {
      if (existing.tenantId !== tenantId) throw new ApiError("TENANT_MISMATCH");
      result = { ...clientView(existing), created: false };
    } else {
      // No new clients under a suspended contract; existing ones stay readable.
      if ((await contractRead).suspended) throw new ApiError("TENANT_NOT_ACTIVE");
      // A held write (db/held_write.ts): its view is the row as written, and under the write lock, with the pair
      // just found missing, only the storage can refuse it.
      const row = { tenantId, externalUserId: input.externalUserId, status: "ACTIVE", createdAt: now, updatedAt: now };
      await writeWithNext(tx, insertClient(tx), { ...row, partnerId });
      await emitEvent(tx, {
        type: "client.updated",
        partnerId,
        tenantId,
        externalUserId: input.externalUserId,
        occurredAt: now,
        data: { change: "CREATED", status: "ACTIVE" },
      });
      result = { ...clientView(row), created: true };
    }
    await ctx.idempotency?.record(tx, result);
    return result;
  });
}
