/**
 * Finding a partner's client by externalUserId. A client of another partner is
 * looked up exactly like a missing one (same query, same 404), so the answer
 * and its timing reveal nothing about other partners.
 */
import { and, eq, getTableColumns, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.ts";
import { preparedRow } from "../../db/compiled_row.ts";
import { clients } from "../../db/schema.ts";
import { iso } from "../clock.ts";
import { ApiError } from "../errors.ts";

export type ClientRow = typeof clients.$inferSelect;

/** Read before nearly every client route: through preparedRow (db/compiled_row.ts), without drizzle's per-row work. */
const clientByExternalId = preparedRow(getTableColumns(clients), (db, fields) =>
  db.select(fields).from(clients)
    .where(
      and(
        eq(clients.partnerId, sql.placeholder("partnerId")),
        eq(clients.externalUserId, sql.placeholder("externalUserId")),
      ),
    ));

export async function findClient(db: Executor, partnerId: string, externalUserId: string): Promise<ClientRow | null> {
  return (await clientByExternalId(db, { partnerId, externalUserId })) ?? null;
}

export async function loadClient(db: Executor, partnerId: string, externalUserId: string): Promise<ClientRow> {
  const row = await findClient(db, partnerId, externalUserId);
  if (!row) throw new ApiError("NOT_FOUND");
  return row;
}

/** For writes: the client must exist and be ACTIVE. */
export async function loadActiveClient(db: Executor, partnerId: string, externalUserId: string): Promise<ClientRow> {
  const row = await loadClient(db, partnerId, externalUserId);
  if (row.status !== "ACTIVE") {
    throw new ApiError("OWNER_NOT_ALLOWED", { message: "O cliente está suspenso; reative-o antes de alterar dados." });
  }
  return row;
}

/** The Client resource. Internal ids never leave the domain. */
export function clientView(row: Pick<ClientRow, "externalUserId" | "tenantId" | "status" | "createdAt" | "updatedAt">) {
  return {
    externalUserId: row.externalUserId,
    tenantId: row.tenantId,
    status: row.status as "ACTIVE" | "SUSPENDED",
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

export type ClientView = ReturnType<typeof clientView>;
