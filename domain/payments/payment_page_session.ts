/**
 * The hosted payment page's session, for every method that has a page
 * (VENUE_B_USD_SEND, EVM_TRANSFER, DEPOSIT_INVOICE). Issuing the
 * instruction opens it: a single-use link token, kept only as its hash,
 * travels in the page address's fragment (`paymentUrl`); the page exchanges
 * it for a page ticket, which every later call names in its Authorization
 * header. Each exchange replaces the previous ticket, so an older tab stops
 * working. The link lives as long as its instruction.
 *
 * A link its obligation left behind (paid, cancelled or reduced since) is
 * refused before anything else, with who asked for how much and, once the
 * obligation is paid, the receipt of the payment that paid it: the page says
 * "already paid" instead of asking a wallet for money again.
 */
import { and, eq } from "drizzle-orm";
import { type Tx, withTransaction } from "../../db/client.ts";
import { rowInsert } from "../../db/row_insert.ts";
import { clients, partners, payments, paymentSessions } from "../../db/schema.ts";
import type { EvmNetwork } from "../../config.ts";
import { NETWORK_NAMES } from "../../venues/evm/transfers.ts";
import { formatDec } from "../../venues/decimal.ts";
import { DAY_MS, iso } from "../clock.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { randomSecret, sha256Hex } from "../ids.ts";
import { staleInstruction } from "./confirm_payment.ts";
import type { PaymentRow } from "./payment_view.ts";
import { OPEN_STATUSES } from "./superseded_instructions.ts";

export type SessionRow = typeof paymentSessions.$inferSelect;
type Db = Tx | Ctx["db"]["read"];

/**
 * How long a ticket keeps answering the page's status after its link's
 * expiry or its payment's credit, whichever is later: a reload, or a client
 * coming back to the tab, still sees the payment followed to its end and the
 * receipt.
 */
export const TICKET_AFTER_MS = DAY_MS;

const sessionInsert = rowInsert(paymentSessions);

/** Why a link or ticket cannot be used, for the page to say so (`reason` beside the error). */
export type LinkRefusal = "UNKNOWN" | "EXPIRED" | "USED" | "REPLACED";

const REFUSALS: Record<LinkRefusal, string> = {
  UNKNOWN: "Este link de pagamento não é válido. Confira se ele foi copiado inteiro ou peça um novo a quem o enviou.",
  EXPIRED: "Este link de pagamento expirou. Peça um novo a quem o enviou.",
  USED: "Este link de pagamento já foi usado. Cada link vale para um único pagamento.",
  REPLACED: "Este pagamento foi aberto em outra aba ou outro aparelho. Continue por lá, ou abra o link de novo aqui.",
};

/** 400 PAYMENT_TICKET_INVALID, in the page's words for `reason`. */
export function linkRefused(reason: LinkRefusal): ApiError {
  return new ApiError("PAYMENT_TICKET_INVALID", { message: REFUSALS[reason], extra: { reason } });
}

/**
 * Open the payment's page session inside the caller's transaction (the one
 * issuing the instruction, whose stored answer carries the link); answers
 * the page's address, the token only in its fragment.
 */
export async function openPageSession(ctx: Ctx, tx: Tx, payment: PaymentRow, returnUrl: string | null) {
  const token = randomSecret(32);
  await sessionInsert.insert(tx, {
    paymentId: payment.paymentId,
    tokenHash: sha256Hex(token),
    status: "OPEN",
    returnUrl,
    expiresAt: payment.expiresAt,
  });
  return `${ctx.config.connectUrl}/pay#${token}`;
}

/**
 * Exchange the link token for a page ticket (replacing the previous one);
 * answers the ticket with the session and its payment. A link left behind
 * by its obligation answers its 409 with who asked, for how much, and the
 * receipt when it is paid.
 */
export async function exchangeLink(ctx: Ctx, token: string) {
  const ticket = randomSecret(32);
  return await withTransaction(ctx.db, async (tx) => {
    const [session] = await tx.select().from(paymentSessions)
      .where(eq(paymentSessions.tokenHash, sha256Hex(token)));
    const payment = await usableSession(ctx, tx, session).catch(async (error) => {
      throw await namedRefusal(ctx, tx, session!, error);
    });
    const [replaced] = await tx.update(paymentSessions).set({ ticketHash: sha256Hex(ticket) })
      .where(eq(paymentSessions.paymentId, session!.paymentId)).returning();
    return { ticket, session: replaced, payment };
  });
}

/** The open session a page ticket names, with its payment, while it may still be paid through the page. */
export async function sessionOfTicket(ctx: Ctx, ticket: string, method: PaymentRow["method"]) {
  const session = await ticketSession(ctx.db.read, ticket);
  // A ticket the page holds and no session has: another exchange of the link replaced it.
  if (!session) throw linkRefused("REPLACED");
  const payment = await usableSession(ctx, ctx.db.read, session);
  if (payment.method !== method) {
    throw new ApiError("PAYMENT_METHOD_MISMATCH", { message: "Este link é de outra forma de pagamento." });
  }
  return { session, payment };
}

/**
 * The session a page ticket names and its payment, for reading what became
 * of it: while the link is open and for TICKET_AFTER_MS after its expiry or
 * its credit, whichever is later.
 */
export async function readableSession(ctx: Ctx, ticket: string) {
  const session = await ticketSession(ctx.db.read, ticket);
  if (!session) throw linkRefused("REPLACED");
  const [payment] = await ctx.db.read.select().from(payments).where(eq(payments.paymentId, session.paymentId));
  const until = Math.max(session.expiresAt, payment.confirmedAt ?? 0) + TICKET_AFTER_MS;
  if (ctx.clock.now() >= until) throw linkRefused("EXPIRED");
  return { session, payment };
}

async function ticketSession(db: Db, ticket: string): Promise<SessionRow | undefined> {
  const [session] = await db.select().from(paymentSessions).where(eq(paymentSessions.ticketHash, sha256Hex(ticket)));
  return session;
}

/**
 * The session's payment, while it still asks for money through the page.
 * An instruction its obligation left behind is said so first (settled: 409
 * OBLIGATION_NOT_OPEN; reduced: 409 PAYMENT_SUPERSEDED), whatever became of
 * the link, so a link that paid shows the paid charge; otherwise a link
 * spent, expired or unknown is PAYMENT_TICKET_INVALID with its reason.
 */
export async function usableSession(ctx: Ctx, db: Db, session: SessionRow | undefined): Promise<PaymentRow> {
  if (!session) throw linkRefused("UNKNOWN");
  const [payment] = await db.select().from(payments).where(eq(payments.paymentId, session.paymentId));
  // A VENUE_B link whose send was relayed is spent. When that send paid the obligation the page shows the paid
  // charge and its receipt; otherwise (still landing, or held for review) the link is simply used.
  if (session.status !== "OPEN") {
    throw payment.status === "CONFIRMED"
      ? await staleInstruction(db, payment) ?? linkRefused("USED")
      : linkRefused("USED");
  }
  const stale = await staleInstruction(db, payment);
  if (stale) throw stale;
  if (ctx.clock.now() >= session.expiresAt) throw linkRefused("EXPIRED");
  // SUBMITTED: an on-chain transfer named for it awaits its confirmations; the page follows it.
  if (!OPEN_STATUSES.includes(payment.status)) throw linkRefused("USED");
  return payment;
}

/** Who asks, through the payment's client. */
export async function partnerOfPayment(db: Db, payment: PaymentRow) {
  const [partner] = await db.select({ name: partners.name }).from(partners)
    .innerJoin(clients, eq(clients.partnerId, partners.partnerId))
    .where(eq(clients.id, payment.clientId));
  return partner;
}

/**
 * What a page counts its link's time down from: a phone's own clock may be
 * off, so `expiresAt` read on it could be minutes wrong.
 */
export function secondsLeft(ctx: Ctx, session: SessionRow): number {
  return Math.max(0, Math.ceil((session.expiresAt - ctx.clock.now()) / 1000));
}

/** The amount asked, as an exact decimal string in token units ("49.900123"). */
export function tokenAmountOf(payment: PaymentRow): string {
  return formatDec({ units: BigInt(payment.tokenAmount!), scale: payment.tokenDecimals! });
}

/** What the page shows once a payment paid its obligation: what was paid, where, in which transaction, when. */
export function receiptOf(ctx: Ctx, payment: PaymentRow) {
  return {
    reference: payment.paymentId,
    amount: tokenAmountOf(payment),
    token: payment.tokenSymbol!,
    networkName: payment.method === "VENUE_B_USD_SEND"
      ? ctx.venues.VENUE_B.name
      : NETWORK_NAMES[payment.networkId as EvmNetwork],
    txHash: payment.txHash!,
    paidAt: iso(payment.confirmedAt!),
  };
}

export type Receipt = ReturnType<typeof receiptOf>;

/** The receipt of the payment that paid the obligation, if a payment did. */
export async function obligationReceipt(ctx: Ctx, db: Db, obligationId: string): Promise<Receipt | null> {
  const [paid] = await db.select().from(payments)
    .where(and(eq(payments.obligationId, obligationId), eq(payments.status, "CONFIRMED"))).limit(1);
  return paid ? receiptOf(ctx, paid) : null;
}

/**
 * A link its obligation left behind (settled, or reduced since) still says
 * who asked and for how much, and, when it was paid, the receipt (inside
 * `payment`, where the page reads the rest); no ticket is issued for it.
 */
async function namedRefusal(ctx: Ctx, tx: Tx, session: SessionRow, error: unknown) {
  if (!(error instanceof ApiError) || !["OBLIGATION_NOT_OPEN", "PAYMENT_SUPERSEDED"].includes(error.code)) return error;
  const [payment] = await tx.select().from(payments).where(eq(payments.paymentId, session.paymentId));
  const partner = await partnerOfPayment(tx, payment);
  const receipt = error.extra?.obligationStatus === "PAID"
    ? await obligationReceipt(ctx, tx, payment.obligationId)
    : null;
  return new ApiError(error.code, {
    message: error.message,
    extra: {
      ...error.extra,
      payment: {
        method: payment.method,
        partnerName: partner.name,
        amount: tokenAmountOf(payment),
        token: payment.tokenSymbol,
        returnUrl: session.returnUrl,
        receipt,
      },
    },
  });
}
