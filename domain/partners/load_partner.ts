/** Reading a partner and the contract version in force. */
import { and, desc, eq, lte, sql } from "drizzle-orm";
import { type Executor, preparedFor } from "../../db/client.ts";
import { contractVersions, partnerRestrictions, partners } from "../../db/schema.ts";
import { ApiError } from "../errors.ts";

export type PartnerRow = typeof partners.$inferSelect;
export type ContractRow = typeof contractVersions.$inferSelect;
export type RestrictionRow = typeof partnerRestrictions.$inferSelect;

const partnerById = preparedFor((db) =>
  db.select().from(partners).where(eq(partners.partnerId, sql.placeholder("partnerId"))).prepare()
);
const contractVersionsOf = preparedFor((db) =>
  db.select().from(contractVersions).where(eq(contractVersions.partnerId, sql.placeholder("partnerId"))).prepare()
);
const restrictionsOf = preparedFor((db) =>
  db.select().from(partnerRestrictions).where(eq(partnerRestrictions.partnerId, sql.placeholder("partnerId"))).prepare()
);

export async function loadPartner(db: Executor, partnerId: string): Promise<PartnerRow> {
  const row = await loadPartnerOrNull(db, partnerId);
  if (!row) throw new ApiError("NOT_FOUND");
  return row;
}

/** Of a partner's contract versions, the one whose effectiveFrom is the latest not after `at`. */
export function pickContractInForce(versions: ContractRow[], at: number): ContractRow {
  const inForce = versions.filter((c) => c.effectiveFrom <= at)
    .sort((a, b) => b.effectiveFrom - a.effectiveFrom || b.version - a.version)[0];
  if (!inForce) throw new Error("The partner has no contract in force");
  return inForce;
}

/** The same rule as pickContractInForce, in SQL: one row, for writes that check the contract inside their transaction. */
const contractInForceAt = preparedFor((db) =>
  db.select().from(contractVersions)
    .where(and(
      eq(contractVersions.partnerId, sql.placeholder("partnerId")),
      lte(contractVersions.effectiveFrom, sql.placeholder("at")),
    ))
    .orderBy(desc(contractVersions.effectiveFrom), desc(contractVersions.version))
    .limit(1)
    .prepare()
);

export async function contractInForce(db: Executor, partnerId: string, at: number): Promise<ContractRow> {
  const row = await contractInForceAt(db).get({ partnerId, at });
  if (!row) throw new Error("The partner has no contract in force");
  return row;
}

export async function loadContractVersions(db: Executor, partnerId: string): Promise<ContractRow[]> {
  return await contractVersionsOf(db).execute({ partnerId });
}

export async function latestContract(db: Executor, partnerId: string): Promise<ContractRow> {
  const [row] = await db.select().from(contractVersions)
    .where(eq(contractVersions.partnerId, partnerId))
    .orderBy(desc(contractVersions.version)).limit(1);
  if (!row) throw new Error(`Partner ${partnerId} has no contract`);
  return row;
}

export async function loadRestrictions(db: Executor, partnerId: string): Promise<RestrictionRow | null> {
  return (await restrictionsOf(db).get({ partnerId })) ?? null;
}

export async function loadPartnerOrNull(db: Executor, partnerId: string): Promise<PartnerRow | null> {
  return (await partnerById(db).get({ partnerId })) ?? null;
}
