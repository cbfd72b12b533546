/** `GET /v1/tenants` and `GET /v1/tenants/:tenantId`: the caller's one contract. */
import { type Ctx, partnerOf } from "../context.ts";
import { ApiError } from "../errors.ts";
import { effectiveAccessOf } from "../grants/effective_access.ts";
import { ownsTenant, type TenantView, tenantView } from "./tenant_view.ts";

export async function listTenants({ ctx }: { ctx: Ctx }): Promise<TenantView[]> {
  const access = await effectiveAccessOf(ctx, partnerOf(ctx));
  return [await tenantView(ctx.db.read, access)];
}

export async function getTenant({ ctx, input }: { ctx: Ctx; input: { tenantId: string } }): Promise<TenantView> {
  const access = await effectiveAccessOf(ctx, partnerOf(ctx));
  // Another partner's tenant answers exactly like a missing one.
  if (!ownsTenant(access.partner, input.tenantId)) throw new ApiError("NOT_FOUND");
  return await tenantView(ctx.db.read, access, input.tenantId);
}
