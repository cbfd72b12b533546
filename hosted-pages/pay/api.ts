/**
 * The JSON API the payment page's script calls (`/pay/api/*`). It only
 * relays: the link token from the fragment is exchanged for a page ticket,
 * which every later call names in its Authorization header.
 *
 * - `POST /session {token}` → `{ticket, payment}`: `payment.method` says which
 *   page to show. VENUE_B_USD_SEND: `{method, partnerName, amount, token,
 *   from, to, expiresAt, returnUrl}`; EVM_TRANSFER and DEPOSIT_INVOICE: the
 *   checkout (domain/payments/checkout_page.ts). A link its obligation left
 *   behind answers 409 OBLIGATION_NOT_OPEN (with `obligationStatus`) or
 *   PAYMENT_SUPERSEDED, with `payment: {method, partnerName, amount, token,
 *   returnUrl, receipt}` (`receipt` once the obligation is paid); a link or
 *   ticket that cannot be used, 400 PAYMENT_TICKET_INVALID with `reason`
 *   (UNKNOWN, EXPIRED, USED, REPLACED).
 * - VENUE_B_USD_SEND: `POST /wallet`, `POST /signature` (venue_b_send.ts).
 * - EVM_TRANSFER, DEPOSIT_INVOICE: `GET /status` (checkout_status.ts).
 */
import { Hono } from "hono";
import { z } from "zod";
import { checkoutStatus } from "../../domain/payments/checkout_status.ts";
import { openPaymentPage } from "../../domain/payments/open_payment_page.ts";
import { linkRefused } from "../../domain/payments/payment_page_session.ts";
import { startSend, submitSendSignature } from "../../domain/payments/venue_b_send.ts";
import { type AppEnv, hostedPageCtx } from "../../routes/env.ts";
import { json } from "../../routes/respond.ts";
import { ApiError } from "../../domain/errors.ts";
import { ticketOf } from "../page_api.ts";

const LINK_TOKEN = /^[A-Za-z0-9_-]{43}$/;
const WalletBody = z.object({
  walletAddress: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
  chainId: z.string().regex(/^0x[0-9a-fA-F]{1,16}$/).transform((value) => value.toLowerCase() as `0x${string}`),
});
const SignatureBody = z.object({ signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/) });

/** What the wallet handed the page, checked; refused in the page's words (the page shows them), no field names. */
function fromWallet<T>(schema: z.ZodType<T>, body: unknown, message: string): T {
  const result = schema.safeParse(body);
  if (!result.success) throw new ApiError("VALIDATION_ERROR", { message });
  return result.data;
}

/** The link token of the exchange's body; anything else is a link the page cannot use (said in plain words). */
function linkToken(body: unknown): string {
  const token = (body as { token?: unknown } | null)?.token;
  if (typeof token !== "string" || !LINK_TOKEN.test(token)) throw linkRefused("UNKNOWN");
  return token;
}

export function payApi(): Hono<AppEnv> {
  const api = new Hono<AppEnv>();
  api.post("/session", async (c) => {
    return json(c, await openPaymentPage(hostedPageCtx(c), linkToken(c.get("jsonBody"))), 200);
  });
  api.post("/wallet", async (c) => {
    const input = fromWallet(
      WalletBody,
      c.get("jsonBody"),
      "A carteira informou um endereço ou uma rede que não reconhecemos. Conecte a carteira de novo.",
    );
    return json(c, await startSend(hostedPageCtx(c), ticketOf(c, "PAYMENT_TICKET_INVALID"), input), 200);
  });
  api.post("/signature", async (c) => {
    const input = fromWallet(
      SignatureBody,
      c.get("jsonBody"),
      "A carteira devolveu uma assinatura que não reconhecemos. Nada foi enviado; assine de novo.",
    );
    return json(c, await submitSendSignature(hostedPageCtx(c), ticketOf(c, "PAYMENT_TICKET_INVALID"), input), 200);
  });
  api.get("/status", async (c) => {
    return json(c, await checkoutStatus(hostedPageCtx(c), ticketOf(c, "PAYMENT_TICKET_INVALID")), 200);
  });
  return api;
}
