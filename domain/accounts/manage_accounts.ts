/**
 * `GET /v1/users/:id/accounts`, `POST .../accounts/:provider/test` and
 * `DELETE .../accounts/:provider` (spec, Provider connection).
 */
import { and, eq, ne } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { providerAccounts } from "../../db/schema.ts";
import { iso } from "../clock.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { loadClient } from "../clients/load_client.ts";
import { withPartnerTransaction } from "../credentials/partner_transaction.ts";
import { ApiError } from "../errors.ts";
import { emitEvent } from "../events/emit_event.ts";
import { assertProviderGranted, effectiveAccessOf } from "../grants/effective_access.ts";
import { accessValidity } from "./access_expiry.ts";
import { callVenue } from "../venues/call_venue.ts";
import { type Permissions, PROVIDER_IDS, type ProviderId, VenueError } from "../../venues/types.ts";
import { clientAccount } from "./client_provider.ts";
import { accountView, credentialsOf, findAccount } from "./load_account.ts";
import { providerCapabilities } from "../catalog/catalog_reads.ts";

/** One Account per provider of the contract; a provider never connected reads NOT_CONNECTED. */
export async function listAccounts(ctx: Ctx, input: { externalUserId: string }) {
  const partnerId = partnerOf(ctx);
  const client = await loadClient(ctx.db.read, partnerId, input.externalUserId);
  const access = await effectiveAccessOf(ctx, partnerId);
  const accounts = [];
  for (const providerId of PROVIDER_IDS.filter((id) => access.partner.grants.providers.includes(id))) {
    const row = await findAccount(ctx.db.read, client.id, providerId);
    const capabilities = providerCapabilities(ctx.venues[providerId]);
    accounts.push(row ? accountView(row, capabilities) : notConnected(ctx, providerId, capabilities));
  }
  return { externalUserId: client.externalUserId, accounts };
}

function notConnected(ctx: Ctx, providerId: ProviderId, capabilities: string[]) {
  return {
    providerId,
    scheme: ctx.venues[providerId].scheme,
    configured: false,
    status: "NOT_CONNECTED" as const,
    capabilities,
    permissions: { canRead: false, canFutures: false, canWithdraw: false },
    accountHint: null,
    updatedAt: null,
    revokedAt: null,
  };
}

export type AccountTest =
  | { success: true; error: null; latencyMs: number; permissions: Permissions }
  | { success: false; error: string; latencyMs: number; permissions: Permissions | null };

/**
 * Test the stored credential read-only. Success refreshes the stored
 * permissions; a failure changes nothing (not even the connection state).
 * A provider outside the effective grant is PROVIDER_NOT_GRANTED, the one
 * code the route's contract names.
 */
export async function testAccount(ctx: Ctx, input: { externalUserId: string; providerId: ProviderId }) {
  const { client, account } = await clientAccount(ctx, input.externalUserId, input.providerId, assertProviderGranted);
  if (!account) throw new ApiError("API_NOT_CONFIGURED", { status: 400 });
  const started = performance.now();
  let result: AccountTest;
  try {
    const check = await callVenue(ctx, input.providerId, (venue) => venue.testCredentials(credentialsOf(account)));
    const latencyMs = Math.round(performance.now() - started);
    result = { success: true, error: null, latencyMs, permissions: check.permissions };
    await withTransaction(ctx.db, async (tx) => {
      await tx.update(providerAccounts)
        .set({
          permissions: check.permissions,
          problems: check.problems,
          accountHint: check.accountHint,
          ...accessValidity(check, ctx.clock.now(), account),
        })
        .where(eq(providerAccounts.accountId, account.accountId));
    });
  } catch (error) {
    if (!(error instanceof VenueError) || error.kind !== "CREDENTIAL_REJECTED") throw error;
    result = {
      success: false,
      error: "O provedor recusou a credencial armazenada.",
      latencyMs: Math.round(performance.now() - started),
      permissions: null,
    };
  }
  return { externalUserId: client.externalUserId, tenantId: client.tenantId, providerId: input.providerId, ...result };
}

/**
 * Disconnect: the account becomes REVOKED and no new entry uses it. While a
 * position is open at the provider (or the venue cannot say), the secret is
 * kept only to protect and close it; otherwise it is erased.
 */
export async function revokeAccount(ctx: Ctx, input: { externalUserId: string; providerId: ProviderId }) {
  const partnerId = partnerOf(ctx);
  const client = await loadClient(ctx.db.read, partnerId, input.externalUserId);
  const found = await findAccount(ctx.db.read, client.id, input.providerId);
  if (!found) throw new ApiError("API_NOT_CONFIGURED");
  const capabilities = providerCapabilities(ctx.venues[input.providerId]);
  if (found.connection === "REVOKED") {
    return { externalUserId: client.externalUserId, account: accountView(found, capabilities) };
  }
  const retained = await hasOpenPosition(ctx, found);
  const now = ctx.clock.now();
  const revoked = await withPartnerTransaction(ctx, async (tx) => {
    const [row] = await tx.update(providerAccounts).set({
      connection: "REVOKED",
      revokedAt: now,
      updatedAt: now,
      secretRetainedForReconciliation: retained,
      ...(retained ? {} : { sealedSecret: "" }),
    }).where(and(eq(providerAccounts.accountId, found.accountId), ne(providerAccounts.connection, "REVOKED")))
      .returning();
    // Revoked meanwhile by a concurrent request: that one emitted the event.
    if (!row) return (await findAccount(tx, client.id, input.providerId))!;
    await emitEvent(tx, {
      type: "provider.disconnected",
      partnerId,
      tenantId: client.tenantId,
      externalUserId: client.externalUserId,
      occurredAt: now,
      data: { providerId: input.providerId, secretRetainedForReconciliation: retained, revokedAt: iso(now) },
    });
    return row;
  });
  return { externalUserId: client.externalUserId, account: accountView(revoked, capabilities) };
}

async function hasOpenPosition(ctx: Ctx, account: typeof providerAccounts.$inferSelect): Promise<boolean> {
  try {
    const snapshot = await ctx.venues[account.providerId as ProviderId].getAccount(credentialsOf(account));
    return snapshot.positions.length > 0;
  } catch (error) {
    if (error instanceof VenueError) return true; // cannot tell: keep the means to close what may be open
    throw error;
  }
}
