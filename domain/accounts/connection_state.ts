/**
 * The connection state of a client at each provider (spec, States: Provider
 * connection). Stored on the account: CONNECTED, ACCESS_LOST (the venue
 * refused the stored credential) and REVOKED. Derived from a pending connect
 * session: CONNECT_PENDING (nothing connected yet, or revoked) and RECOVERING
 * (access was lost and the client is reconnecting).
 */
import { and, eq, gt, sql } from "drizzle-orm";
import { type Executor, preparedFor } from "../../db/client.ts";
import { connectSessions, providerAccounts } from "../../db/schema.ts";
import type { ProviderId } from "../../venues/types.ts";
import type { AccountRow } from "./load_account.ts";

export type ConnectionState =
  | "NOT_CONNECTED"
  | "CONNECT_PENDING"
  | "CONNECTED"
  | "ACCESS_LOST"
  | "RECOVERING"
  | "REVOKED";

export interface ProviderConnection {
  state: ConnectionState;
  account: AccountRow | null;
}

const accountsOfClient = preparedFor((db) =>
  db.select().from(providerAccounts).where(eq(providerAccounts.clientId, sql.placeholder("clientId"))).prepare()
);

const pendingSessionsOfClient = preparedFor((db) =>
  db.select({ providerId: connectSessions.providerId }).from(connectSessions)
    .where(and(
      eq(connectSessions.clientId, sql.placeholder("clientId")),
      eq(connectSessions.status, "PENDING"),
      gt(connectSessions.expiresAt, sql.placeholder("now")),
    ))
    .prepare()
);

export async function connectionsOf(
  db: Executor,
  clientId: number,
  now: number,
): Promise<(providerId: ProviderId) => ProviderConnection> {
  const accounts = await accountsOfClient(db).all({ clientId });
  const pending = new Set((await pendingSessionsOfClient(db).all({ clientId, now })).map((row) => row.providerId));
  return (providerId) => {
    const account = accounts.find((row) => row.providerId === providerId) ?? null;
    return { state: connectionState(account?.connection ?? null, pending.has(providerId)), account };
  };
}

/** The state from the account's stored connection (null: no account) and whether a session is pending. */
export function connectionState(stored: string | null, pending: boolean): ConnectionState {
  switch (stored) {
    case "CONNECTED":
      return "CONNECTED";
    case "ACCESS_LOST":
      return pending ? "RECOVERING" : "ACCESS_LOST";
    case "REVOKED":
      return pending ? "CONNECT_PENDING" : "REVOKED";
    default:
      return pending ? "CONNECT_PENDING" : "NOT_CONNECTED";
  }
}
