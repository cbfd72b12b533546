/**
 * A client's connected account at one provider, and the Account resource
 * (spec, Resources: Account), which never carries credential material.
 */
import { and, eq, sql } from "drizzle-orm";
import { type Executor, preparedFor } from "../../db/client.ts";
import { providerAccounts } from "../../db/schema.ts";
import { iso } from "../clock.ts";
import { bindingOf, SEALED_COLUMNS } from "../secrets/sealed_columns.ts";
import type { ProviderId, VenueCredentials } from "../../venues/types.ts";

export type AccountRow = typeof providerAccounts.$inferSelect;

const accountOfClient = preparedFor((db) =>
  db.select().from(providerAccounts)
    .where(and(
      eq(providerAccounts.clientId, sql.placeholder("clientId")),
      eq(providerAccounts.providerId, sql.placeholder("providerId")),
    ))
    .prepare()
);

export async function findAccount(db: Executor, clientId: number, providerId: ProviderId): Promise<AccountRow | null> {
  return (await accountOfClient(db).get({ clientId, providerId })) ?? null;
}

const ACCOUNT_SECRET = SEALED_COLUMNS.find((column) => column.table === "provider_accounts")!;

/** The binding an account's secret is sealed under: its own row, nothing else. */
export function accountSecretBinding(accountId: string): string {
  return bindingOf(ACCOUNT_SECRET, accountId);
}

/** The credentials the venue adapter signs with, the secret still sealed. */
export function credentialsOf(row: AccountRow): VenueCredentials {
  const secret = { sealed: row.sealedSecret, binding: accountSecretBinding(row.accountId) };
  if (row.scheme === "API_KEY") return { scheme: "API_KEY", apiKey: row.apiKey!, sealedApiSecret: secret };
  return {
    scheme: "AGENT_WALLET",
    accountAddress: row.accountAddress as `0x${string}`,
    agentAddress: row.agentAddress as `0x${string}`,
    sealedAgentPrivateKey: secret,
  };
}

/** Account.status: ACCESS_LOST and RECOVERING are still a configured, connected account. */
export function accountView(row: AccountRow, capabilities: string[]) {
  const revoked = row.connection === "REVOKED";
  return {
    providerId: row.providerId,
    scheme: row.scheme as "API_KEY" | "AGENT_WALLET",
    configured: !revoked,
    status: revoked ? "REVOKED" as const : "CONNECTED" as const,
    capabilities,
    permissions: row.permissions,
    accountHint: row.accountHint,
    updatedAt: iso(row.updatedAt),
    revokedAt: row.revokedAt === null ? null : iso(row.revokedAt),
    ...(revoked ? { secretRetainedForReconciliation: row.secretRetainedForReconciliation } : {}),
  };
}
