/**
 * Turning a presented credential pair into a partner principal, or refusing it.
 * Every failure of the pair itself (unknown id, wrong secret, revoked, rotated
 * out) is the same 401, so a caller learns nothing about which part was wrong.
 */
import { eq, sql } from "drizzle-orm";
import { type Executor, preparedFor } from "../../db/client.ts";
import { credentials, partners } from "../../db/schema.ts";
import { ApiError } from "../errors.ts";
import type { Caches } from "../cache.ts";
import { constantTimeEqual, sha256Hex } from "../ids.ts";

export interface PartnerPrincipal {
  partnerId: string;
  clientId: string;
  requestsPerMinute: number;
  ordersPerMinute: number;
}

export interface CredentialRecord {
  secretHash: string;
  /**
   * The secret that last verified against `secretHash`, kept in this cache
   * entry only (never stored or logged), so a partner's next calls compare
   * it in constant time instead of hashing it again. The entry, and this,
   * go away when the cache drops the credential (TTL or a change to it).
   */
  verifiedSecret?: string;
  expiresAt: number | null;
  revokedAt: number | null;
  partnerId: string;
  status: string;
  requestsPerMinute: number;
  ordersPerMinute: number;
}

const credentialWithPartner = preparedFor((db) =>
  db.select({
    secretHash: credentials.secretHash,
    expiresAt: credentials.expiresAt,
    revokedAt: credentials.revokedAt,
    partnerId: partners.partnerId,
    status: partners.status,
    requestsPerMinute: partners.requestsPerMinute,
    ordersPerMinute: partners.ordersPerMinute,
  }).from(credentials)
    .innerJoin(partners, eq(partners.partnerId, credentials.partnerId))
    .where(eq(credentials.clientId, sql.placeholder("clientId"))).prepare()
);

async function loadCredential(db: Executor, clientId: string): Promise<CredentialRecord | null> {
  return (await credentialWithPartner(db).get({ clientId })) ?? null;
}

/** Whether a credential still authenticates at `now`: neither revoked nor past its overlap expiry. */
function inForce(row: Pick<CredentialRecord, "revokedAt" | "expiresAt">, now: number): boolean {
  return row.revokedAt === null && (row.expiresAt === null || row.expiresAt > now);
}

/**
 * Authentication again, from the database inside a write's transaction:
 * the credential must still be in force and its partner ACTIVE. The request
 * was authenticated through a cache that a revoke or suspension committed by
 * another instance reaches only after its TTL; under the write lock this
 * check and the write cannot be separated by such a change.
 */
export async function recheckPrincipal(tx: Executor, clientId: string, now: number): Promise<void> {
  const row = await loadCredential(tx, clientId);
  if (row === null || !inForce(row, now)) throw new ApiError("B2B_CREDENTIAL_INVALID");
  if (row.status !== "ACTIVE") throw new ApiError("PRINCIPAL_NOT_ACTIVE");
}

export async function authenticatePartner(
  db: Executor,
  caches: Caches,
  presented: { clientId: string; clientSecret: string } | null,
  now: number,
): Promise<PartnerPrincipal> {
  if (!presented) throw new ApiError("B2B_CREDENTIAL_INVALID");
  const row = await caches.credentials.get(presented.clientId, () => loadCredential(db, presented.clientId));
  // Hash even when the id is unknown, so timing does not reveal which ids exist.
  if (row === null) sha256Hex(presented.clientSecret);
  const valid = row !== null && secretMatches(row, presented.clientSecret) && inForce(row, now);
  if (!valid) throw new ApiError("B2B_CREDENTIAL_INVALID");
  if (row.status !== "ACTIVE") throw new ApiError("PRINCIPAL_NOT_ACTIVE");
  return {
    partnerId: row.partnerId,
    clientId: presented.clientId,
    requestsPerMinute: row.requestsPerMinute,
    ordersPerMinute: row.ordersPerMinute,
  };
}

function secretMatches(row: CredentialRecord, secret: string): boolean {
  if (row.verifiedSecret !== undefined && constantTimeEqual(secret, row.verifiedSecret)) return true;
  if (!constantTimeEqual(sha256Hex(secret), row.secretHash)) return false;
  row.verifiedSecret = secret;
  return true;
}
