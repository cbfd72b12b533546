/**
 * `GET /v1/users`: newest first, filtered, with an opaque cursor so a partner
 * with a million clients can walk all of them without OFFSET scans.
 *
 * The page is one prepared statement answering one text cell: SQLite builds
 * the page as a JSON array of rows from the covering index
 * `clients_partner_list` (~105 µs for 101 rows, of which ~25 µs is the scan). Handing 100 rows across the driver value by value
 * costs ~0.6 µs a value (~400 µs a page); one string and `JSON.parse` cost a
 * fraction of that. The cursor is a row-value comparison, so a deep page is
 * an index seek, not a scan from the top.
 */
import { sql } from "drizzle-orm";
import { preparedFor } from "../../db/client.ts";
import { clients } from "../../db/schema.ts";
import { iso } from "../clock.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { ApiError } from "../errors.ts";
import type { ClientView } from "./load_client.ts";

export interface ListClientsInput {
  tenantId?: string;
  status?: "ACTIVE" | "SUSPENDED";
  limit: number;
  cursor?: string;
}

interface CursorPosition {
  createdAt: number;
  id: number;
}

/** Before every real row: created at and numbered below this, for the first page. */
const FIRST_PAGE: CursorPosition = { createdAt: Number.MAX_SAFE_INTEGER, id: Number.MAX_SAFE_INTEGER };

/**
 * The cursor is the last row's position, sealed for the partner it was issued
 * to: opaque (no creation time, no internal row number), tamper-evident, and
 * refused when another partner presents it.
 */
function cursorBinding(partnerId: string): string {
  return `clients-list-cursor/${partnerId}`;
}

function encodeCursor(ctx: Ctx, partnerId: string, row: CursorPosition): Promise<string> {
  return ctx.secrets.sealToken(`${row.createdAt}.${row.id}`, cursorBinding(partnerId));
}

async function decodeCursor(ctx: Ctx, partnerId: string, cursor: string): Promise<CursorPosition> {
  const payload = await ctx.secrets.openToken(cursor, cursorBinding(partnerId));
  const match = payload?.match(/^(\d{1,15})\.(\d{1,15})$/);
  if (match) return { createdAt: Number(match[1]), id: Number(match[2]) };
  throw new ApiError("VALIDATION_ERROR", { message: "O parâmetro 'cursor' é inválido." });
}

type PageRow = [
  externalUserId: string,
  tenantId: string,
  status: ClientView["status"],
  createdAt: number,
  updatedAt: number,
  id: number,
];

const clientPage = preparedFor((db) =>
  db.select({
    page: sql<string>`json_group_array(json_array(external_user_id, tenant_id, status, created_at, updated_at, id))`,
  }).from(sql`(
      SELECT external_user_id, tenant_id, status, created_at, updated_at, id FROM ${clients}
      WHERE partner_id = ${sql.placeholder("partnerId")}
        AND (created_at, id) < (${sql.placeholder("beforeCreatedAt")}, ${sql.placeholder("beforeId")})
        AND (${sql.placeholder("tenantId")} IS NULL OR tenant_id = ${sql.placeholder("tenantId")})
        AND (${sql.placeholder("status")} IS NULL OR status = ${sql.placeholder("status")})
      ORDER BY created_at DESC, id DESC
      LIMIT ${sql.placeholder("limit")}
    ) AS page_rows`).prepare()
);

export async function listClients(
  { ctx, input }: { ctx: Ctx; input: ListClientsInput },
): Promise<{ users: ClientView[]; nextCursor: string | null }> {
  const partnerId = partnerOf(ctx);
  const before = input.cursor ? await decodeCursor(ctx, partnerId, input.cursor) : FIRST_PAGE;
  const { page } = (await clientPage(ctx.db.read).get({
    partnerId,
    beforeCreatedAt: before.createdAt,
    beforeId: before.id,
    tenantId: input.tenantId ?? null,
    status: input.status ?? null,
    // One more than asked: its presence says whether a next page exists.
    limit: input.limit + 1,
  }))!;
  // An aggregate's input order is not guaranteed (ORDER BY inside it costs a temporary B-tree): sort here.
  const rows = (JSON.parse(page) as PageRow[]).sort((a, b) => b[3] - a[3] || b[5] - a[5]);
  const shown = rows.slice(0, input.limit);
  const last = shown.at(-1);
  return {
    users: shown.map(([externalUserId, tenantId, status, createdAt, updatedAt]) => ({
      externalUserId,
      tenantId,
      status,
      createdAt: iso(createdAt),
      updatedAt: iso(updatedAt),
    })),
    nextCursor: rows.length > input.limit && last
      ? await encodeCursor(ctx, partnerId, { createdAt: last[3], id: last[5] })
      : null,
  };
}
