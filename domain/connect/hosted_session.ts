/**
 * The hosted page's side of a connect session. The page reads the link token
 * from the URL fragment and exchanges it, once per page load, for a page
 * ticket; every later call of the page names the ticket, never the token.
 * Each exchange replaces the previous ticket, so an older tab stops working;
 * the ticket it replaced is kept to tell that tab the link was opened
 * elsewhere (only the latest one: a tab two exchanges behind reads "invalid").
 *
 * A page may ask for a handoff token: single-use, the only one of its session,
 * exchanged like the link token, to carry the link into a wallet's in-app
 * browser. Wallet deep links may pass through the wallet vendor's link server,
 * so what travels there is spent by its first exchange.
 *
 * After the session ends (connected, failed, expired, cancelled) its last
 * ticket still reads the final state, and nothing else, for FINAL_READ_MS after
 * the session's expiry: a reload or Back shows the outcome again.
 *
 * Refused credentials or signatures count as attempts: the fifth refusal
 * fails the session (`provider.connect_failed`); a later use answers
 * CONNECT_ATTEMPTS_EXHAUSTED. While attempts remain the session stays PENDING
 * and `failureCode` tells the partner why the last one failed. A refusal the
 * client fixes outside the page (recordFixableRefusal) is recorded the same
 * way but costs no attempt.
 */
import { and, eq, or } from "drizzle-orm";
import { getAddress } from "viem";
import { type Executor, type Tx, withTransaction } from "../../db/client.ts";
import { clients, connectSessions, partners } from "../../db/schema.ts";
import { HOUR_MS } from "../clock.ts";
import type { Ctx } from "../context.ts";
import { findAccount } from "../accounts/load_account.ts";
import { ApiError, type ErrorCode } from "../errors.ts";
import { emitEvent } from "../events/emit_event.ts";
import { randomSecret, sha256Hex } from "../ids.ts";
import type { ProviderId } from "../../venues/types.ts";
import { type ConnectSessionRow, type ConnectStatus, MAX_CONNECT_ATTEMPTS, statusAt } from "./session_view.ts";

/**
 * How long after the session's expiry its last ticket still reads the final
 * state. The read names only the partner, the provider and the outcome, which
 * the tab showed already; an hour covers a reload or Back.
 */
export const FINAL_READ_MS = HOUR_MS;

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
  /** PENDING while the page may act; otherwise the outcome a reload shows again. */
  status: ConnectStatus;
  /** The service's outbound addresses, to restrict an API key to (empty when not configured). */
  egressAddresses: string[];
  /** AGENT_WALLET: the builder the wallet approves a fee for (checksum casing) and the partner's fee ceiling. */
  builder: { address: string; feeTenthsBps: number } | null;
  /**
   * AGENT_WALLET CONNECT for a client whose wallet already approved an agent
   * here: the link renews that approval. `accessExpiresAt` is the current
   * agent's end (epoch ms; null when lost or never read); `lapsed` says it is
   * over, on the service's clock (a phone's may be off) or as the venue showed.
   */
  renewal: { accessExpiresAt: number | null; lapsed: boolean } | null;
}

/**
 * Exchange the link token, or the handoff token, for a page ticket, marking
 * the session opened. A handoff token is spent here. The ticket it replaces is
 * kept as superseded. A link already used answers with who asked, so the page
 * can say the account is connected rather than "invalid".
 */
export async function exchangeLinkToken(
  ctx: Ctx,
  token: string,
): Promise<{ ticket: string; session: PageSession }> {
  const now = ctx.clock.now();
  const ticket = randomSecret(32);
  const hash = sha256Hex(token);
  return await withTransaction(ctx.db, async (tx) => {
    const [row] = await tx.select().from(connectSessions)
      .where(or(eq(connectSessions.tokenHash, hash), eq(connectSessions.handoffTokenHash, hash)));
    if (!row) throw new ApiError("CONNECT_INVALID");
    if (statusAt(row, now) === "CONNECTED") throw await alreadyConnected(ctx, tx, row);
    assertUsable(row, now);
    const [opened] = await tx.update(connectSessions)
      .set({
        opened: true,
        ticketHash: sha256Hex(ticket),
        ticketExpiresAt: row.expiresAt,
        supersededTicketHash: row.ticketHash ?? row.supersededTicketHash,
        ...(row.handoffTokenHash === hash ? { handoffTokenHash: null } : {}),
      })
      .where(eq(connectSessions.sessionId, row.sessionId)).returning();
    return { ticket, session: await pageSession(ctx, tx, opened) };
  });
}

/**
 * A fresh single-use handoff token for the ticket's session, replacing any
 * earlier one; it expires with the session. Answers the link that carries it.
 */
export async function issueHandoff(ctx: Ctx, ticket: string): Promise<{ url: string; expiresAt: number }> {
  const row = await sessionOfTicket(ctx, ticket);
  const token = randomSecret(32);
  await withTransaction(ctx.db, async (tx) => {
    await tx.update(connectSessions).set({ handoffTokenHash: sha256Hex(token) })
      .where(eq(connectSessions.sessionId, row.sessionId));
  });
  return { url: `${ctx.config.connectUrl}/connect#t=${token}`, expiresAt: row.expiresAt };
}

/** The usable session a page ticket names, or the error the page must show. */
export async function sessionOfTicket(ctx: Ctx, ticket: string): Promise<ConnectSessionRow> {
  const row = await rowOfTicket(ctx, ticket);
  assertUsable(row, ctx.clock.now());
  return row;
}

/**
 * What a reload shows: the session of the ticket as it is now, ended or not,
 * until FINAL_READ_MS after its expiry.
 */
export async function pageSessionOfTicket(ctx: Ctx, ticket: string): Promise<PageSession> {
  const row = await rowOfTicket(ctx, ticket);
  if (ctx.clock.now() >= row.expiresAt + FINAL_READ_MS) throw new ApiError("CONNECT_EXPIRED");
  return await pageSession(ctx, ctx.db.read, row);
}

/** The session whose current ticket this is; a replaced ticket is CONNECT_OPENED_ELSEWHERE. */
async function rowOfTicket(ctx: Ctx, ticket: string): Promise<ConnectSessionRow> {
  const hash = sha256Hex(ticket);
  const [row] = await ctx.db.read.select().from(connectSessions)
    .where(or(eq(connectSessions.ticketHash, hash), eq(connectSessions.supersededTicketHash, hash)));
  if (!row) throw new ApiError("CONNECT_INVALID");
  if (row.ticketHash !== hash) throw new ApiError("CONNECT_OPENED_ELSEWHERE");
  return row;
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

/**
 * A refusal the client fixes outside the page (a setting at the exchange, a
 * deposit) or one where nothing was signed: the partner sees it as the
 * session's `failureCode`, but it costs no attempt, so the same link works
 * once the client fixed it. Returns the refusal to throw.
 */
export async function recordFixableRefusal(
  ctx: Ctx,
  row: ConnectSessionRow,
  code: ErrorCode,
  options: { message?: string; extra?: Record<string, unknown> } = {},
): Promise<ApiError> {
  await withTransaction(ctx.db, async (tx) => {
    const [current] = await tx.select().from(connectSessions).where(eq(connectSessions.sessionId, row.sessionId));
    assertUsable(current, ctx.clock.now());
    await tx.update(connectSessions).set({ failureCode: code }).where(eq(connectSessions.sessionId, row.sessionId));
  });
  return new ApiError(code, options);
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

/** A spent link names who asked and where, so the page can say the account is connected (nothing secret). */
async function alreadyConnected(ctx: Ctx, db: Executor, row: ConnectSessionRow): Promise<ApiError> {
  const { providerName, partnerName, purpose, returnUrl } = await pageSession(ctx, db, row);
  const message = purpose === "BUILDER_APPROVAL"
    ? `Este link já foi usado: a taxa da plataforma já foi aprovada na sua conta ${providerName}.`
    : `Este link já foi usado: sua conta ${providerName} já está conectada a ${partnerName}.`;
  return new ApiError("CONNECT_ALREADY_USED", {
    message,
    extra: { session: { providerName, partnerName, purpose, returnUrl, status: "CONNECTED" } },
  });
}

async function pageSession(ctx: Ctx, db: Executor, row: ConnectSessionRow): Promise<PageSession> {
  const [partner] = await db.select({ name: partners.name, fee: partners.builderFeeTenthsBps }).from(partners).where(
    eq(partners.partnerId, row.partnerId),
  );
  const adapter = ctx.venues[row.providerId as ProviderId];
  const wallet = row.scheme === "AGENT_WALLET";
  return {
    providerId: row.providerId as ProviderId,
    providerName: adapter.name,
    scheme: row.scheme as PageSession["scheme"],
    purpose: row.purpose as PageSession["purpose"],
    partnerName: partner.name,
    returnUrl: row.returnUrl,
    expiresAt: row.expiresAt,
    attemptsLeft: MAX_CONNECT_ATTEMPTS - row.attempts,
    status: statusAt(row, ctx.clock.now()),
    egressAddresses: wallet ? [] : ctx.config.egressAddresses,
    builder: wallet ? { address: checksummed(ctx.config.venueBBuilderAddress), feeTenthsBps: partner.fee } : null,
    renewal: wallet && row.purpose === "CONNECT" ? await renewalOf(ctx, db, row) : null,
  };
}

/** The agent this link would replace, when the client's stored connection has one and the link is still open. */
async function renewalOf(ctx: Ctx, db: Executor, row: ConnectSessionRow): Promise<PageSession["renewal"]> {
  // Only while the link can act: once it connected, the account it made is no earlier agent.
  if (statusAt(row, ctx.clock.now()) !== "PENDING") return null;
  const account = await findAccount(db, row.clientId, row.providerId as ProviderId);
  if (!account?.agentAddress || !RENEWABLE.has(account.connection)) return null;
  const { accessExpiresAt } = account;
  const lapsed = account.connection === "ACCESS_LOST" ||
    (accessExpiresAt !== null && accessExpiresAt <= ctx.clock.now());
  return { accessExpiresAt, lapsed };
}

/** Connections whose agent a new approval replaces (RECOVERING and REVOKED are not renewed by a link). */
const RENEWABLE = new Set(["CONNECTED", "ACCESS_LOST"]);

/** An address as wallets and explorers show it (EIP-55 mixed case), so the page and the wallet agree. */
export function checksummed(address: string): string {
  return getAddress(address);
}
