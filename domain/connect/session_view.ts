/** The Connect session resource, and its state as of now. */
import { and, eq, sql } from "drizzle-orm";
import { type Executor, preparedFor } from "../../db/client.ts";
import { connectSessions } from "../../db/schema.ts";
import { iso, MINUTE_MS } from "../clock.ts";
import { ApiError } from "../errors.ts";

export type ConnectSessionRow = typeof connectSessions.$inferSelect;
export type ConnectStatus = "PENDING" | "CONNECTED" | "FAILED" | "EXPIRED" | "CANCELLED";

/** How long a connect link stays usable (spec, Hosted-page rules: 15 minutes). */
export const CONNECT_SESSION_TTL_MS = 15 * MINUTE_MS;
/** Refused credentials or signatures a link allows before the session fails. */
export const MAX_CONNECT_ATTEMPTS = 5;

/** A PENDING session past its expiry is EXPIRED, whether or not anyone stored that yet. */
export function statusAt(row: ConnectSessionRow, now: number): ConnectStatus {
  if (row.status === "PENDING" && now >= row.expiresAt) return "EXPIRED";
  return row.status as ConnectStatus;
}

export function connectSessionView(row: ConnectSessionRow, externalUserId: string, now: number) {
  return {
    sessionId: row.sessionId,
    externalUserId,
    providerId: row.providerId,
    scheme: row.scheme as "API_KEY" | "AGENT_WALLET",
    purpose: row.purpose as "CONNECT" | "BUILDER_APPROVAL",
    status: statusAt(row, now),
    failureCode: row.failureCode,
    opened: row.opened,
    expiresAt: iso(row.expiresAt),
    completedAt: row.completedAt === null ? null : iso(row.completedAt),
  };
}

export type ConnectSessionView = ReturnType<typeof connectSessionView>;

const sessionOfClient = preparedFor((db) =>
  db.select().from(connectSessions)
    .where(and(
      eq(connectSessions.sessionId, sql.placeholder("sessionId")),
      eq(connectSessions.clientId, sql.placeholder("clientId")),
    ))
    .prepare()
);

/** The client's session, or 404 exactly like a missing one for anybody else's. */
export async function loadSessionOfClient(db: Executor, clientId: number, sessionId: string) {
  const row = await sessionOfClient(db).get({ sessionId, clientId });
  if (!row) throw new ApiError("NOT_FOUND");
  return row;
}
