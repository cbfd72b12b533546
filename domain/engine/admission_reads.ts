/** The operator's reads of admission records: per signal, and per client across signals. */
import { and, desc, eq } from "drizzle-orm";
import { admissions, clients } from "../../db/schema.ts";
import { iso } from "../clock.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { findClient } from "../clients/load_client.ts";

const MAX_RECORDS = 500;

const recordColumns = {
  signalId: admissions.signalId,
  partnerId: clients.partnerId,
  externalUserId: clients.externalUserId,
  providerId: admissions.providerId,
  decision: admissions.decision,
  code: admissions.code,
  stage: admissions.stage,
  detail: admissions.detail,
  quantity: admissions.quantity,
  price: admissions.price,
  evaluatedAt: admissions.evaluatedAt,
};

function recordView<T extends { evaluatedAt: number }>(row: T) {
  return { ...row, evaluatedAt: iso(row.evaluatedAt) };
}

export async function admissionsOfSignal(ctx: Ctx, input: { signalId: string; decision?: string; code?: string }) {
  const rows = await ctx.db.read.select(recordColumns).from(admissions)
    .innerJoin(clients, eq(clients.id, admissions.clientId))
    .where(and(
      eq(admissions.signalId, input.signalId),
      input.decision ? eq(admissions.decision, input.decision) : undefined,
      input.code ? eq(admissions.code, input.code) : undefined,
    ))
    .orderBy(admissions.clientId)
    .limit(MAX_RECORDS);
  return rows.map(recordView);
}

export async function admissionsOfClient(ctx: Ctx, input: { partnerId: string; externalUserId: string }) {
  const client = await findClient(ctx.db.read, input.partnerId, input.externalUserId);
  if (!client) throw new ApiError("NOT_FOUND");
  const rows = await ctx.db.read.select(recordColumns).from(admissions)
    .innerJoin(clients, eq(clients.id, admissions.clientId))
    .where(eq(admissions.clientId, client.id))
    .orderBy(desc(admissions.evaluatedAt))
    .limit(MAX_RECORDS);
  return rows.map(recordView);
}
