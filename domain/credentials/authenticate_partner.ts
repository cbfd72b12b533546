/**
 * Turning a presented credential pair into a partner principal, or refusing it.
 * Every failure of the pair itself (unknown id, wrong secret, revoked, rotated
 * out) is the same 401, so a caller learns nothing about which part was wrong.
 */
import { eq } from "drizzle-orm";
import type { Executor } from "../../db/client.ts";
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
  expiresAt: number | null;
  revokedAt: number | null;
  partnerId: string;
  status: string;
  requestsPerMinute: number;
  ordersPerMinute: number;
}

async function loadCredential(db: Executor, clientId: string): Promise<CredentialRecord | null> {
  const [row] = await db.select({
    secretHash: credentials.secretHash,
    expiresAt: credentials.expiresAt,
    revokedAt: credentials.revokedAt,
    partnerId: partners.partnerId,
    status: partners.status,
    requestsPerMinute: partners.requestsPerMinute,
    ordersPerMinute: partners.ordersPerMinute,
  }).from(credentials)
    .innerJoin(partners, eq(partners.partnerId, credentials.partnerId))
    .where(eq(credentials.clientId, clientId));
  return row ?? null;
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
  const presentedHash = sha256Hex(presented.clientSecret);
  const valid = row !== null && constantTimeEqual(presentedHash, row.secretHash) && row.revokedAt === null &&
    (row.expiresAt === null || row.expiresAt > now);
  if (!valid) throw new ApiError("B2B_CREDENTIAL_INVALID");
  if (row.status !== "ACTIVE") throw new ApiError("PRINCIPAL_NOT_ACTIVE");
  return {
    partnerId: row.partnerId,
    clientId: presented.clientId,
    requestsPerMinute: row.requestsPerMinute,
    ordersPerMinute: row.ordersPerMinute,
  };
}
