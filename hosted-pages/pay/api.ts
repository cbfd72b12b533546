/**
 * The JSON API the payment page's script calls (`/pay/api/*`). It only
 * relays: the link token from the fragment is exchanged for a page ticket,
 * which every later call names in its Authorization header. The service
 * builds the message the wallet signs and checks what comes back.
 */
import { Hono } from "hono";
import { z } from "zod";
import { iso } from "../../domain/clock.ts";
import {
  exchangePaymentToken,
  type SendPage,
  startSend,
  submitSendSignature,
} from "../../domain/payments/venue_b_send.ts";
import { type AppEnv, hostedPageCtx } from "../../routes/env.ts";
import { json } from "../../routes/respond.ts";
import { parse, ticketOf } from "../page_api.ts";

const ExchangeBody = z.object({ token: z.string().regex(/^[A-Za-z0-9_-]{43}$/, "link inválido") });
const WalletBody = z.object({
  walletAddress: z.string().regex(/^0x[0-9a-fA-F]{40}$/, "endereço de carteira inválido"),
  chainId: z.string().regex(/^0x[0-9a-fA-F]{1,16}$/, "chainId inválido")
    .transform((value) => value.toLowerCase() as `0x${string}`),
});
const SignatureBody = z.object({ signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/, "assinatura inválida") });

const pageWire = (page: SendPage) => ({ ...page, expiresAt: iso(page.expiresAt) });

export function payApi(): Hono<AppEnv> {
  const api = new Hono<AppEnv>();
  api.post("/session", async (c) => {
    const { ticket, page } = await exchangePaymentToken(hostedPageCtx(c), parse(ExchangeBody, c.get("jsonBody")).token);
    return json(c, { ticket, payment: pageWire(page) }, 200);
  });
  api.post("/wallet", async (c) => {
    const input = parse(WalletBody, c.get("jsonBody"));
    return json(c, await startSend(hostedPageCtx(c), ticketOf(c, "PAYMENT_TICKET_INVALID"), input), 200);
  });
  api.post("/signature", async (c) => {
    const input = parse(SignatureBody, c.get("jsonBody"));
    return json(c, await submitSendSignature(hostedPageCtx(c), ticketOf(c, "PAYMENT_TICKET_INVALID"), input), 200);
  });
  return api;
}
