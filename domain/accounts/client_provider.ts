/**
 * What the account routes share: the partner's client, and the provider named
 * in the path or query checked against the partner's grant.
 */
import type { Ctx } from "../context.ts";
import { partnerOf } from "../context.ts";
import { loadClient } from "../clients/load_client.ts";
import { ApiError } from "../errors.ts";
import { assertProviderUsable, type EffectiveAccess, effectiveAccessOf } from "../grants/effective_access.ts";
import type { ProviderId } from "../../venues/types.ts";
import { type AccountRow, findAccount } from "./load_account.ts";

/**
 * The client and its account at a provider the partner may use (reads go on
 * while access is lost); `assertProvider` refuses the provider with the codes
 * the route's contract names.
 */
export async function clientAccount(
  ctx: Ctx,
  externalUserId: string,
  providerId: ProviderId,
  assertProvider: (access: EffectiveAccess, providerId: ProviderId) => void = assertProviderUsable,
) {
  const partnerId = partnerOf(ctx);
  const client = await loadClient(ctx.db.read, partnerId, externalUserId);
  assertProvider(await effectiveAccessOf(ctx, partnerId), providerId);
  const account = await findAccount(ctx.db.read, client.id, providerId);
  return { client, account: account?.connection === "REVOKED" ? null : account };
}

/** For live reads at the venue: a connected (or access-lost) account, else CREDENTIALS_MISSING. */
export function requireAccount(account: AccountRow | null): AccountRow {
  if (!account) throw new ApiError("CREDENTIALS_MISSING");
  return account;
}
