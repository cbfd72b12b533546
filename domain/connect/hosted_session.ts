/**
 * The hosted page's side of a connect session. The page reads the link token
 * from the URL fragment and exchanges it, once per page load, for a page
 * ticket; every later call of the page names the ticket, never the token.
 * Each exchange replaces the previous ticket, so an older tab stops working.
 *
 * Refused credentials or signatures count as attempts: the fifth refusal
 * fails the session (`provider.connect_failed`); a later use answers
 * CONNECT_ATTEMPTS_EXHAUSTED. While attempts remain the session stays PENDING
 * and `failureCode` tells the partner why the last one failed.
 */
import { and, eq } from "drizzle-orm";
import { type Tx, withTransaction } from "../../db/client.ts";
import { clients, connectSessions, partners } from "../../db/schema.ts";
import type { Ctx } from "../context.ts";
import { ApiError, type ErrorCode } from "../errors.ts";
import { emitEvent } from "../events/emit_event.ts";
import { randomSecret, sha256Hex } from "../ids.ts";
import type { ProviderId } from "../../venues/types.ts";
import { type ConnectSessionRow, MAX_CONNECT_ATTEMPTS, statusAt } from "./session_view.ts";

/** What the page may show about its session (nothing that identifies the client). */
export interface PageSession {
  providerId: ProviderId;
  providerName: string;
  scheme: "API_KEY" | "AGENT_WALLET";
  purpose: "CONNECT" | "BUILDER_APPROVAL";
  partnerName: string;
  returnUrl: string | null;
  expiresAt: number;
  attemptsLeft: number;
}

/** Exchange the link token for a page ticket, marking the session opened. */
export async function exchangeLinkToken(
  ctx: Ctx,
  token: string,
): Promise<{ ticket: string; session: PageSession }> {
  const now = ctx.clock.now();
  const ticket = randomSecret(32);
  return await withTransaction(ctx.db, async (tx) => {
    const [row] = await tx.select().from(connectSessions).where(eq(connectSessions.tokenHash, sha256Hex(token)));
    if (!row) throw new ApiError("CONNECT_INVALID");
    assertUsable(row, now);
    const [opened] = await tx.update(connectSessions)
      .set({ opened: true, ticketHash: sha256Hex(ticket), ticketExpiresAt: row.expiresAt })
      .where(eq(connectSessions.sessionId, row.sessionId)).returning();
    return { ticket, session: await pageSession(ctx, tx, opened) };
  });
}

/** The usable session a page ticket names, or the error the page must show. */
export async function sessionOfTicket(ctx: Ctx, ticket: string): Promise<ConnectSessionRow> {
  const [row] = await ctx.db.read.select().from(connectSessions)
    .where(eq(connectSessions.ticketHash, sha256Hex(ticket)));
  if (!row) throw new ApiError("CONNECT_INVALID");
  assertUsable(row, ctx.clock.now());
  return row;
}

/** The page's view of its session, read again (after an attempt, for example). */
export async function pageSessionOf(ctx: Ctx, row: ConnectSessionRow): Promise<PageSession> {
  return await pageSession(ctx, ctx.db.read, row);
}

/**
 * A flow step applies only to the connection scheme and purposes it was built
 * for: a link of one provider used in another's flow is WRONG_SCHEME.
 */
export function assertFlow(row: ConnectSessionRow, scheme: PageSession["scheme"], purposes: string[]): void {
  if (row.scheme !== scheme || !purposes.includes(row.purpose)) throw new ApiError("WRONG_SCHEME");
}

/**
 * Count a refused attempt. Inside the caller's transaction, with the session
 * still PENDING (else the caller's view is stale and nothing is counted).
 * Returns the refusal to throw, carrying the attempts left.
 */
export async function recordRefusedAttempt(
  ctx: Ctx,
  tx: Tx,
  row: ConnectSessionRow,
  code: ErrorCode,
  message?: string,
): Promise<ApiError> {
  const now = ctx.clock.now();
  const [current] = await tx.select().from(connectSessions).where(eq(connectSessions.sessionId, row.sessionId));
  assertUsable(current, now);
  const attempts = current.attempts + 1;
  const exhausted = attempts >= MAX_CONNECT_ATTEMPTS;
  await tx.update(connectSessions)
    .set({
      attempts,
      failureCode: code,
      ...(exhausted ? { status: "FAILED", completedAt: now, sealedAgentKey: null, pendingAction: null } : {}),
    })
    .where(eq(connectSessions.sessionId, row.sessionId));
  if (exhausted) {
    await emitConnectionEvent(tx, current, "provider.connect_failed", now, { failureCode: code, attempts });
  }
  return new ApiError(code, {
    ...(message ? { message } : {}),
    extra: { attemptsLeft: MAX_CONNECT_ATTEMPTS - attempts },
  });
}

/** Mark the session CONNECTED (compare-and-set on PENDING) and emit `provider.connected`. */
export async function completeSession(
  ctx: Ctx,
  tx: Tx,
  row: ConnectSessionRow,
  data: Record<string, unknown>,
): Promise<void> {
  const now = ctx.clock.now();
  const done = await tx.update(connectSessions)
    .set({ status: "CONNECTED", completedAt: now, failureCode: null, sealedAgentKey: null, pendingAction: null })
    .where(and(eq(connectSessions.sessionId, row.sessionId), eq(connectSessions.status, "PENDING")))
    .returning({ sessionId: connectSessions.sessionId });
  if (!done.length) throw new ApiError("CONNECT_ALREADY_USED");
  await emitConnectionEvent(tx, row, "provider.connected", now, data);
}

async function emitConnectionEvent(
  tx: Tx,
  row: ConnectSessionRow,
  type: "provider.connected" | "provider.connect_failed",
  now: number,
  data: Record<string, unknown>,
): Promise<void> {
  const [client] = await tx.select({ externalUserId: clients.externalUserId }).from(clients)
    .where(eq(clients.id, row.clientId));
  await emitEvent(tx, {
    type,
    partnerId: row.partnerId,
    tenantId: row.tenantId,
    externalUserId: client.externalUserId,
    occurredAt: now,
    data: { sessionId: row.sessionId, providerId: row.providerId, purpose: row.purpose, ...data },
  });
}

/** A session the page may still act on; else the spec's error for its state. */
function assertUsable(row: ConnectSessionRow, now: number): void {
  switch (statusAt(row, now)) {
    case "PENDING":
      return;
    case "EXPIRED":
      throw new ApiError("CONNECT_EXPIRED");
    case "CONNECTED":
      throw new ApiError("CONNECT_ALREADY_USED");
    case "FAILED":
      throw new ApiError(row.attempts >= MAX_CONNECT_ATTEMPTS ? "CONNECT_ATTEMPTS_EXHAUSTED" : "CONNECT_NOT_ACTIVE");
    case "CANCELLED":
      throw new ApiError("CONNECT_NOT_ACTIVE");
  }
}

async function pageSession(ctx: Ctx, db: Tx, row: ConnectSessionRow): Promise<PageSession> {
  const [partner] = await db.select({ name: partners.name }).from(partners).where(
    eq(partners.partnerId, row.partnerId),
  );
  const adapter = ctx.venues[row.providerId as ProviderId];
  return {
    providerId: row.providerId as ProviderId,
    providerName: adapter.name,
    scheme: row.scheme as PageSession["scheme"],
    purpose: row.purpose as PageSession["purpose"],
    partnerName: partner.name,
    returnUrl: row.returnUrl,
    expiresAt: row.expiresAt,
    attemptsLeft: MAX_CONNECT_ATTEMPTS - row.attempts,
  };
}
