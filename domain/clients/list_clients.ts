/**
 * `GET /v1/users`: newest first, filtered, with an opaque cursor so a partner
 * with a million clients can walk all of them without OFFSET scans.
 */
import { and, desc, eq, lt, or } from "drizzle-orm";
import { clients } from "../../db/schema.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { ApiError } from "../errors.ts";
import { type ClientView, clientView } from "./load_client.ts";

export interface ListClientsInput {
  tenantId?: string;
  status?: "ACTIVE" | "SUSPENDED";
  limit: number;
  cursor?: string;
}

function encodeCursor(row: { createdAt: number; id: number }): string {
  return btoa(`${row.createdAt}.${row.id}`).replace(/=+$/, "");
}

function decodeCursor(cursor: string): { createdAt: number; id: number } {
  try {
    const [createdAt, id] = atob(cursor).split(".").map(Number);
    if (Number.isSafeInteger(createdAt) && Number.isSafeInteger(id)) return { createdAt, id };
  } catch {
    // fall through to the validation error
  }
  throw new ApiError("VALIDATION_ERROR", { message: "O parâmetro 'cursor' é inválido." });
}

export async function listClients(
  { ctx, input }: { ctx: Ctx; input: ListClientsInput },
): Promise<{ users: ClientView[]; nextCursor: string | null }> {
  const partnerId = partnerOf(ctx);
  const after = input.cursor ? decodeCursor(input.cursor) : null;
  const rows = await ctx.db.read.select().from(clients)
    .where(and(
      eq(clients.partnerId, partnerId),
      input.tenantId ? eq(clients.tenantId, input.tenantId) : undefined,
      input.status ? eq(clients.status, input.status) : undefined,
      after
        ? or(
          lt(clients.createdAt, after.createdAt),
          and(eq(clients.createdAt, after.createdAt), lt(clients.id, after.id)),
        )
        : undefined,
    ))
    .orderBy(desc(clients.createdAt), desc(clients.id))
    .limit(input.limit + 1);
  const page = rows.slice(0, input.limit);
  return {
    users: page.map(clientView),
    nextCursor: rows.length > input.limit ? encodeCursor(page.at(-1)!) : null,
  };
}
