/**
 * Paying a USDC obligation from the client's VENUE_B account (method
 * `VENUE_B_USD_SEND`). The instruction opens a hosted page (`paymentUrl`,
 * a single-use token in the fragment, 15 minutes, the partner's registered
 * return URL); there the client connects the principal wallet of the
 * connected account and signs a transfer of the exact amount to the
 * platform's wallet. The service builds the message, relays the signature
 * and credits only when the venue's ledger shows that transfer with the
 * nonce signed in this session: a `sendAsset`, whose ledger entry carries
 * it (a usdSend's carries none and can only be ambiguous). Nothing here can
 * move money by itself: every charge needs the client's signature.
 */
import { and, eq, gt, inArray, ne } from "drizzle-orm";
import { type Tx, withTransaction } from "../../db/client.ts";
import { rowInsert } from "../../db/row_insert.ts";
import { partners, payments, paymentSessions, settings } from "../../db/schema.ts";
import { cmp, formatDec, isDecimal } from "../../venues/decimal.ts";
import type { HexAddress, LedgerEntry, UserSignedAction, VenueAdapter } from "../../venues/types.ts";
import { VenueError } from "../../venues/types.ts";
import { findAccount } from "../accounts/load_account.ts";
import { iso, MINUTE_MS, wallClockNow } from "../clock.ts";
import type { ClientRow } from "../clients/load_client.ts";
import { allowedReturnUrl } from "../connect/return_url.ts";
import { withPartnerTransaction } from "../credentials/partner_transaction.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { newId } from "../ids.ts";
import { callVenue } from "../venues/call_venue.ts";
import { creditPayment } from "./confirm_payment.ts";
import { type PaymentRow, paymentView } from "./payment_view.ts";
import {
  openPageSession,
  partnerOfPayment,
  type Receipt,
  receiptOf,
  secondsLeft,
  sessionOfTicket,
  type SessionRow,
  tokenAmountOf,
  usableSession,
} from "./payment_page_session.ts";
import { brasiliaTime, ptBrAmount } from "./pt_br_text.ts";
import { obligationNotOpen } from "./superseded_instructions.ts";

const SESSION_TTL_MS = 15 * MINUTE_MS;
const WALLET_SETTING = "venue_b_payment_wallet";
/** The one token this method pays in, by the name the venue's ledger gives it. */
const USDC = "USDC";
/** The ledger is read from a little before the instruction: venue and service clocks differ. */
const LEDGER_MARGIN_MS = MINUTE_MS;
const paymentInsert = rowInsert(payments);

/** Operator: the platform wallet that receives VENUE_B sends (`PUT /operator/v1/venue-b-payment-wallet`). */
export async function setVenueBPaymentWallet(ctx: Ctx, address: string) {
  const value = address.toLowerCase();
  await withTransaction(ctx.db, (tx) =>
    tx.insert(settings).values({ key: WALLET_SETTING, value })
      .onConflictDoUpdate({ target: settings.key, set: { value } }));
  return { address: value };
}

async function platformWallet(tx: Tx | Ctx["db"]["read"]): Promise<string | null> {
  const [row] = await tx.select().from(settings).where(eq(settings.key, WALLET_SETTING));
  return row?.value ?? null;
}

/**
 * The instruction: the payment, its page session and the page's address (the
 * token only in the fragment). Once the obligation is found: whether it is
 * charged in USDC (400), the returnUrl (403), then the state, the
 * obligation's (409) before the account's (422).
 */
export async function createSendInstruction(
  ctx: Ctx,
  client: ClientRow,
  owed: { row: { obligationId: string; currency: string; status: string }; remainingMicros: number },
  returnUrl: string | undefined,
) {
  if (owed.row.currency !== "USDC") {
    throw new ApiError("CURRENCY_MISMATCH", { message: "VENUE_B_USD_SEND só quita cobranças em USDC." });
  }
  const [partner] = await ctx.db.read.select().from(partners).where(eq(partners.partnerId, client.partnerId));
  const back = returnUrl === undefined ? null : allowedReturnUrl(returnUrl, partner.returnUrlOrigins);
  if (owed.row.status !== "OPEN") throw obligationNotOpen(owed.row.status);
  const account = await findAccount(ctx.db.read, client.id, "VENUE_B");
  if (!account?.accountAddress || account.connection === "REVOKED") throw new ApiError("API_NOT_CONFIGURED");
  const issuedAt = ctx.clock.now();
  return await withPartnerTransaction(ctx, async (tx) => {
    const wallet = await platformWallet(tx);
    if (!wallet) throw new ApiError("RECIPIENT_NOT_CONFIGURED");
    const payment = await paymentInsert.insert(tx, {
      paymentId: newId("pay", issuedAt),
      partnerId: client.partnerId,
      clientId: client.id,
      obligationId: owed.row.obligationId,
      method: "VENUE_B_USD_SEND",
      status: "PENDING",
      amountMicros: owed.remainingMicros,
      networkId: "venue_b",
      tokenSymbol: "USDC",
      tokenDecimals: 6,
      tokenAmount: String(owed.remainingMicros),
      recipient: wallet,
      payerAddress: account.accountAddress,
      issuedAt,
      issuedWallAt: wallClockNow(),
      expiresAt: issuedAt + SESSION_TTL_MS,
      updatedAt: issuedAt,
    });
    const paymentUrl = await openPageSession(ctx, tx, payment, back);
    const result = {
      externalUserId: client.externalUserId,
      tenantId: client.tenantId,
      payment: paymentView(payment),
      paymentUrl,
      instructions: `Abra o link de pagamento e assine, com a carteira ${account.accountAddress}, o envio de ` +
        `${ptBrAmount(tokenAmountOf(payment))} USDC da sua conta VENUE_B para ` +
        `${wallet} até ${brasiliaTime(payment.expiresAt)}. ` +
        "Cada cobrança precisa da sua assinatura; nenhum valor é debitado sem ela.",
    };
    await ctx.idempotency?.record(tx, result);
    return result;
  });
}

// ---------------------------------------------------------------- the page

/** What the page shows: who asks, how much, from which wallet to which, and until when. */
export async function sendPage(ctx: Ctx, session: SessionRow, payment: PaymentRow) {
  const partner = await partnerOfPayment(ctx.db.read, payment);
  return {
    method: "VENUE_B_USD_SEND" as const,
    partnerName: partner.name,
    reference: payment.paymentId,
    amount: tokenAmountOf(payment),
    token: "USDC" as const,
    from: payment.payerAddress!,
    to: payment.recipient!,
    expiresAt: iso(session.expiresAt),
    secondsLeft: secondsLeft(ctx, session),
    returnUrl: session.returnUrl,
  };
}

/** The connected wallet must be the account's principal; answers the message it signs. */
export async function startSend(ctx: Ctx, ticket: string, input: { walletAddress: string; chainId: HexAddress }) {
  const { session, payment } = await sessionOfTicket(ctx, ticket, "VENUE_B_USD_SEND");
  const wallet = input.walletAddress.toLowerCase();
  if (wallet !== payment.payerAddress) throw new ApiError("WALLET_MISMATCH");
  const approvals = venueB(ctx).walletApprovals!;
  // The venue takes the send from where the payer's account keeps its USDC (asked of the venue): built once
  // here, kept with the session, checked against the ledger as signed.
  const action = await callVenue(ctx, "VENUE_B", () =>
    approvals.usdcTransfer({
      from: payment.payerAddress as HexAddress,
      destination: payment.recipient as HexAddress,
      amount: formatDec({ units: BigInt(payment.tokenAmount!), scale: 6 }),
      signatureChainId: input.chainId,
    }));
  await withTransaction(ctx.db, (tx) =>
    tx.update(paymentSessions).set({ walletAddress: wallet, pendingAction: action })
      .where(and(eq(paymentSessions.paymentId, session.paymentId), eq(paymentSessions.status, "OPEN"))));
  return { typedData: approvals.typedDataForWallet(action) };
}

export interface SendOutcome {
  /** REVIEW: the send arrived after the obligation was settled (relayed before that); it paid nothing. */
  status: "CONFIRMED" | "SUBMITTED" | "REVIEW";
  code?: string;
  /** CONFIRMED: what was paid, when, under which ledger hash. */
  receipt?: Receipt;
  returnUrl: string | null;
}

/**
 * Check the wallet's signature (the principal's, of the message this session
 * built), relay it, and look for the transfer in the ledger. A refusal by the
 * venue is PAYMENT_REJECTED and leaves the page open for a new signature; a
 * relayed one spends the link.
 */
export async function submitSendSignature(
  ctx: Ctx,
  ticket: string,
  input: { signature: string },
): Promise<SendOutcome> {
  const { session, payment } = await sessionOfTicket(ctx, ticket, "VENUE_B_USD_SEND");
  if (!session.pendingAction) {
    throw new ApiError("VALIDATION_ERROR", { message: "Conecte a carteira antes de enviar uma assinatura." });
  }
  const adapter = venueB(ctx);
  const approvals = adapter.walletApprovals!;
  let signed: UserSignedAction;
  try {
    signed = approvals.withSignature(session.pendingAction as UserSignedAction["action"], input.signature);
    if (approvals.signerOf(signed) !== payment.payerAddress) throw new ApiError("WALLET_MISMATCH");
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError("VALIDATION_ERROR", { message: "A assinatura não é válida." });
  }
  // Recorded before the relay (a process that dies during it leaves a send the ledger check settles), and only
  // while no other link of the obligation relays one: two links signed at once would both send.
  await claimRelay(ctx, session, payment, signed);
  try {
    await callVenue(ctx, "VENUE_B", (venue) => venue.submitUserSignedAction!(signed));
  } catch (error) {
    // An answer that was lost may hide a send that happened, and so may a nonce the venue already has (this
    // very send, relayed before): only the ledger can tell (never relayed again).
    const uncertain = (error instanceof ApiError && error.uncertain) ||
      (error instanceof VenueError && (error.kind === "OUTCOME_UNKNOWN" || error.kind === "NONCE_SPENT"));
    if (!uncertain) {
      // Only the venue's own refusal is PAYMENT_REJECTED. PROVIDER_DOWN (unreachable, or never sent for the
      // egress budget) passes as it is: nothing was refused, the page may sign again later. Either way nothing
      // was sent: the link is open again.
      const rejected = error instanceof VenueError;
      await releaseRelay(ctx, session, payment, rejected ? "PAYMENT_REJECTED" : null);
      if (!rejected) throw error;
      throw new ApiError("PAYMENT_REJECTED");
    }
  }
  const outcome = await checkSendLedger(ctx, { ...payment, status: "SUBMITTED" }, signed.nonce);
  return { ...outcome, returnUrl: session.returnUrl };
}

/** How long a relayed send keeps the obligation's other links from relaying theirs: its ledger entry shows by then. */
const RELAY_WINDOW_MS = 2 * MINUTE_MS;

/**
 * Take the relay of `signed` for the payment: in one write transaction, the
 * link is still usable (its obligation open and unchanged) and no other link
 * of the obligation relayed a send within RELAY_WINDOW_MS (409
 * PAYMENT_IN_PROGRESS); the session is SIGNED with the signed send and the
 * payment SUBMITTED before anything reaches the venue.
 */
async function claimRelay(ctx: Ctx, session: SessionRow, payment: PaymentRow, signed: UserSignedAction) {
  const now = ctx.clock.now();
  await withTransaction(ctx.db, async (tx) => {
    const [current] = await tx.select().from(paymentSessions).where(eq(paymentSessions.paymentId, session.paymentId));
    await usableSession(ctx, tx, current);
    const [relaying] = await tx.select({ paymentId: paymentSessions.paymentId }).from(paymentSessions)
      .innerJoin(payments, eq(payments.paymentId, paymentSessions.paymentId))
      .where(and(
        eq(payments.obligationId, payment.obligationId),
        ne(payments.paymentId, payment.paymentId),
        gt(paymentSessions.relayedAt, now - RELAY_WINDOW_MS),
      )).limit(1);
    if (relaying) throw new ApiError("PAYMENT_IN_PROGRESS");
    // The signed send stays with the session: the ledger check binds on its nonce, token and dexes.
    await tx.update(paymentSessions)
      .set({ status: "SIGNED", signedNonce: signed.nonce, pendingAction: signed.action, relayedAt: now })
      .where(and(eq(paymentSessions.paymentId, session.paymentId), eq(paymentSessions.status, "OPEN")));
    await tx.update(payments).set({ status: "SUBMITTED", failureReason: null, updatedAt: now })
      .where(and(eq(payments.paymentId, payment.paymentId), inArray(payments.status, ["PENDING", "SUPERSEDED"])));
  });
}

/** Nothing was sent: the link is open again (with why, when the venue refused the send). */
async function releaseRelay(ctx: Ctx, session: SessionRow, payment: PaymentRow, refusal: "PAYMENT_REJECTED" | null) {
  const now = ctx.clock.now();
  await withTransaction(ctx.db, async (tx) => {
    await tx.update(paymentSessions)
      .set({ status: "OPEN", signedNonce: null, pendingAction: session.pendingAction, relayedAt: null })
      .where(eq(paymentSessions.paymentId, session.paymentId));
    await tx.update(payments).set({
      status: payment.status,
      failureReason: refusal ? `${refusal}: O provedor recusou o envio assinado.` : payment.failureReason,
      updatedAt: now,
    }).where(and(eq(payments.paymentId, payment.paymentId), eq(payments.status, "SUBMITTED")));
  });
}

/**
 * Credit the payment if the payer's ledger shows the transfer signed in its
 * session (a USDC `send` with that nonce and the dexes signed, to the
 * platform wallet, of the exact amount). Otherwise say what is missing: the
 * transfer with that nonce for another amount, a compatible transfer that
 * names no nonce or other dexes than signed (reviewed by a person, never
 * credited here), or nothing yet. Entries of other tokens are no payment in
 * USDC; amounts are compared as exact decimals, so no entry (dust with more
 * decimals than USDC's 6, say) can make the check fail.
 */
export async function checkSendLedger(ctx: Ctx, payment: PaymentRow, nonce: number) {
  let ledger: LedgerEntry[];
  try {
    ledger = await venueB(ctx).getLedger!(payment.payerAddress as HexAddress, payment.issuedWallAt - LEDGER_MARGIN_MS);
  } catch {
    return await pending(ctx, payment, "PAYMENT_AWAITING_LEDGER", "O ledger do provedor não pôde ser lido agora.");
  }
  const signed = await signedSend(ctx, payment.paymentId, nonce);
  const toPlatform = ledger.filter((entry) =>
    entry.token === USDC && entry.user === payment.payerAddress && entry.destination === payment.recipient
  );
  const bound = signed &&
    toPlatform.find((entry) =>
      entry.type === "send" && entry.nonce === nonce && entry.sourceDex === signed.sourceDex &&
      entry.destinationDex === signed.destinationDex
    );
  const exact = BigInt(payment.tokenAmount!);
  const owed = formatDec({ units: exact, scale: 6 });
  if (bound) {
    if (!sameAmount(bound.amount, owed)) {
      return await pending(ctx, payment, "PAYMENT_AMOUNT_MISMATCH", "O envio assinado tem outro valor.");
    }
    const now = ctx.clock.now();
    const credited = await withTransaction(ctx.db, (tx) => creditPayment(tx, payment, bound.hash, exact, now));
    if (credited) return sendOutcomeOf(ctx, credited.payment);
    const [current] = await ctx.db.read.select().from(payments).where(eq(payments.paymentId, payment.paymentId));
    return sendOutcomeOf(ctx, current);
  }
  if (toPlatform.some((entry) => sameAmount(entry.amount, owed))) {
    return await pending(
      ctx,
      payment,
      "PAYMENT_LEDGER_BINDING_AMBIGUOUS",
      "Há uma transferência compatível sem o nonce desta sessão ou entre saldos diferentes dos assinados; ela será " +
        "revisada manualmente.",
    );
  }
  return await pending(ctx, payment, "PAYMENT_AWAITING_LEDGER", "O envio ainda não aparece no ledger do provedor.");
}

/**
 * The dexes of the send signed in the payment's session under `nonce`. A
 * session signed before the send was kept with it signed perp to perp (the
 * only send built then); a kept send under another nonce binds nothing.
 */
async function signedSend(ctx: Ctx, paymentId: string, nonce: number) {
  const [session] = await ctx.db.read.select({ action: paymentSessions.pendingAction }).from(paymentSessions)
    .where(eq(paymentSessions.paymentId, paymentId));
  const action = session?.action;
  if (!action) return { sourceDex: "", destinationDex: "" };
  if (action.nonce !== nonce) return null;
  return { sourceDex: String(action.sourceDex), destinationDex: String(action.destinationDex) };
}

/** Whether a ledger amount is exactly `owed`; any text at all may come in, and none throws. */
function sameAmount(amount: string, owed: string): boolean {
  return isDecimal(amount) && cmp(amount, owed) === 0;
}

/**
 * A send the ledger showed: it paid the obligation (an excess, if it was
 * reduced since, reviewed; with the receipt the page shows and keeps for a
 * reload) or is held for review.
 */
function sendOutcomeOf(ctx: Ctx, payment: PaymentRow) {
  switch (payment.status) {
    case "CONFIRMED":
      return payment.review
        ? { status: "CONFIRMED" as const, code: "PAYMENT_OVERPAID_MANUAL_REVIEW", receipt: receiptOf(ctx, payment) }
        : { status: "CONFIRMED" as const, receipt: receiptOf(ctx, payment) };
    case "REVIEW":
      return { status: "REVIEW" as const, code: "OBLIGATION_ALREADY_SETTLED" };
    default:
      return { status: "SUBMITTED" as const };
  }
}

async function pending(ctx: Ctx, payment: PaymentRow, code: string, message: string) {
  await recordFailure(ctx, payment, code, message, "SUBMITTED");
  return { status: "SUBMITTED" as const, code };
}

async function recordFailure(ctx: Ctx, payment: PaymentRow, code: string, message: string, status: string) {
  await withTransaction(
    ctx.db,
    (tx) =>
      tx.update(payments).set({ failureReason: `${code}: ${message}`, updatedAt: ctx.clock.now() })
        .where(and(eq(payments.paymentId, payment.paymentId), eq(payments.status, status))),
  );
}

function venueB(ctx: Ctx): VenueAdapter {
  const adapter = ctx.venues.VENUE_B;
  if (!adapter.walletApprovals || !adapter.submitUserSignedAction || !adapter.getLedger) {
    throw new ApiError("WRONG_SCHEME");
  }
  return adapter;
}
