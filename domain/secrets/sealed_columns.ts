/**
 * Every database column that holds a sealed secret, and the binding each of
 * its values is sealed under. Code that seals or opens a stored secret builds
 * the binding with `bindingOf`, so a rotation re-seals exactly what the domain
 * will later open.
 *
 * A new sealed column is added here, nowhere else: `rotate-master-key` walks
 * this list.
 */
import { secretBinding } from "./secret_box.ts";

export interface SealedColumn {
  table: string;
  /** The row's primary key column: part of the binding, and the order a rotation walks in. */
  idColumn: string;
  column: string;
  /** What the secret is for; two sealed columns of one row never share a purpose. */
  purpose: string;
}

/** The sealed columns of the schema. */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  // A VENUE_A API secret or a VENUE_B agent key of a connected account.
  { table: "provider_accounts", idColumn: "account_id", column: "sealed_secret", purpose: "credential_secret" },
  // A VENUE_B agent key created for a connect session, until the wallet approves it.
  { table: "connect_sessions", idColumn: "session_id", column: "sealed_agent_key", purpose: "agent_private_key" },
  // A partner's webhook signing secret, and the previous one while a rotation overlaps.
  { table: "webhook_endpoints", idColumn: "partner_id", column: "sealed_secret", purpose: "webhook_signing_secret" },
  {
    table: "webhook_endpoints",
    idColumn: "partner_id",
    column: "previous_sealed_secret",
    purpose: "webhook_previous_signing_secret",
  },
];

export function bindingOf(column: SealedColumn, rowId: string): string {
  return secretBinding(column.table, rowId, column.purpose);
}
