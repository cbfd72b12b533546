/** Reading a partner and the contract version in force. */
import { and, desc, eq, lte } from "drizzle-orm";
import type { Executor } from "../../db/client.ts";
import { contractVersions, partnerRestrictions, partners } from "../../db/schema.ts";
import { ApiError } from "../errors.ts";

export type PartnerRow = typeof partners.$inferSelect;
export type ContractRow = typeof contractVersions.$inferSelect;
export type RestrictionRow = typeof partnerRestrictions.$inferSelect;

export async function loadPartner(db: Executor, partnerId: string): Promise<PartnerRow> {
  const [row] = await db.select().from(partners).where(eq(partners.partnerId, partnerId));
  if (!row) throw new ApiError("NOT_FOUND");
  return row;
}

/** The version whose effectiveFrom is the latest one not after `at`. */
export async function contractInForce(db: Executor, partnerId: string, at: number): Promise<ContractRow> {
  const [row] = await db.select().from(contractVersions)
    .where(and(eq(contractVersions.partnerId, partnerId), lte(contractVersions.effectiveFrom, at)))
    .orderBy(desc(contractVersions.effectiveFrom), desc(contractVersions.version)).limit(1);
  if (!row) throw new Error(`Partner ${partnerId} has no contract in force`);
  return row;
}

export async function latestContract(db: Executor, partnerId: string): Promise<ContractRow> {
  const [row] = await db.select().from(contractVersions)
    .where(eq(contractVersions.partnerId, partnerId))
    .orderBy(desc(contractVersions.version)).limit(1);
  if (!row) throw new Error(`Partner ${partnerId} has no contract`);
  return row;
}

export async function loadRestrictions(db: Executor, partnerId: string): Promise<RestrictionRow | null> {
  const [row] = await db.select().from(partnerRestrictions).where(eq(partnerRestrictions.partnerId, partnerId));
  return row ?? null;
}

export async function loadPartnerOrNull(db: Executor, partnerId: string): Promise<PartnerRow | null> {
  const [row] = await db.select().from(partners).where(eq(partners.partnerId, partnerId));
  return row ?? null;
}
