/** Writing the connected account a hosted-page flow produced, in the flow's completing transaction. */
import { eq } from "drizzle-orm";
import type { Tx } from "../../db/client.ts";
import { providerAccounts } from "../../db/schema.ts";
import { accessValidity } from "../accounts/access_expiry.ts";
import type { AccountRow } from "../accounts/load_account.ts";
import { ApiError } from "../errors.ts";
import type { CredentialCheck, ProviderId, VenueCredentials } from "../../venues/types.ts";

export interface ConnectedAccount {
  /** The row id the secret was sealed for: the existing account's on a reconnection. */
  accountId: string;
  clientId: number;
  providerId: ProviderId;
  credentials: VenueCredentials;
  check: CredentialCheck;
  now: number;
}

/** Insert the account, or replace the credentials of the client's earlier one at this provider. */
export async function storeConnectedAccount(tx: Tx, account: ConnectedAccount, existing: AccountRow | null) {
  const { credentials } = account;
  const fields = {
    scheme: credentials.scheme,
    connection: "CONNECTED",
    apiKey: credentials.scheme === "API_KEY" ? credentials.apiKey : null,
    accountAddress: credentials.scheme === "AGENT_WALLET" ? credentials.accountAddress : null,
    agentAddress: credentials.scheme === "AGENT_WALLET" ? credentials.agentAddress : null,
    sealedSecret: credentials.scheme === "API_KEY"
      ? credentials.sealedApiSecret.sealed
      : credentials.sealedAgentPrivateKey.sealed,
    permissions: account.check.permissions,
    problems: account.check.problems,
    accountHint: account.check.accountHint,
    ...accessValidity(account.check, account.now),
    secretRetainedForReconciliation: false,
    revokedAt: null,
    updatedAt: account.now,
  };
  if (existing) {
    // The secret opens only in the row it was sealed for: another row here means another flow got in first.
    if (existing.accountId !== account.accountId) throw new ApiError("CONNECT_NOT_ACTIVE");
    await tx.update(providerAccounts).set(fields).where(eq(providerAccounts.accountId, existing.accountId));
  } else {
    await tx.insert(providerAccounts).values({
      ...fields,
      accountId: account.accountId,
      clientId: account.clientId,
      providerId: account.providerId,
      connectedAt: account.now,
    });
  }
}
