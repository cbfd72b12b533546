/**
 * The JSON API the connect page's script calls (`/connect/api/*`). It only
 * relays: the link token is exchanged for a page ticket, and every later call
 * names the ticket in its Authorization header, never in a URL. Errors use the
 * API's envelope; refusals that count as an attempt add `attemptsLeft`.
 */
import { Hono } from "hono";
import { z } from "zod";
import { connectApiKey } from "../../domain/connect/connect_api_key.ts";
import { startWalletFlow, submitWalletSignature } from "../../domain/connect/connect_wallet.ts";
import { qaTestCredentials } from "../../domain/qa/test_credentials.ts";
import {
  exchangeLinkToken,
  type PageSession,
  pageSessionOf,
  sessionOfTicket,
} from "../../domain/connect/hosted_session.ts";
import { iso } from "../../domain/clock.ts";
import { type AppEnv, hostedPageCtx } from "../../routes/env.ts";
import { json } from "../../routes/respond.ts";
import { parse, ticketOf } from "../page_api.ts";

const TOKEN = z.string().regex(/^[A-Za-z0-9_-]{43}$/, "link inválido");
const ExchangeBody = z.object({ token: TOKEN });
const ApiKeyBody = z.object({
  apiKey: z.string().trim().min(16, "chave curta demais").max(256).regex(/^[\x21-\x7e]+$/, "a chave contém espaços"),
  apiSecret: z.string().trim().min(16, "segredo curto demais").max(256).regex(
    /^[\x21-\x7e]+$/,
    "o segredo contém espaços",
  ),
});

const HEX_ADDRESS = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "endereço de carteira inválido")
  .transform((value) => value.toLowerCase() as `0x${string}`);
const WalletStartBody = z.object({
  walletAddress: HEX_ADDRESS,
  chainId: z.string().regex(/^0x[0-9a-fA-F]{1,16}$/, "chainId inválido").transform((value) =>
    value.toLowerCase() as `0x${string}`
  ),
});
const TestCredentialsBody = z.object({ walletAddress: HEX_ADDRESS.optional() });
const WalletSignatureBody = z.object({ signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/, "assinatura inválida") });

function sessionWire(session: PageSession, qa: boolean) {
  return { ...session, expiresAt: iso(session.expiresAt), qa };
}

export function connectApi(): Hono<AppEnv> {
  const api = new Hono<AppEnv>();

  api.post("/session", async (c) => {
    const ctx = hostedPageCtx(c);
    const { token } = parse(ExchangeBody, c.get("jsonBody"));
    const { ticket, session } = await exchangeLinkToken(ctx, token);
    return json(c, { ticket, session: sessionWire(session, ctx.config.serviceEnv === "qa") }, 200);
  });

  api.get("/session", async (c) => {
    const ctx = hostedPageCtx(c);
    const session = await pageSessionOf(ctx, await sessionOfTicket(ctx, ticketOf(c, "CONNECT_INVALID")));
    return json(c, { session: sessionWire(session, ctx.config.serviceEnv === "qa") }, 200);
  });

  api.post("/api-key", async (c) => {
    const ctx = hostedPageCtx(c);
    const input = parse(ApiKeyBody, c.get("jsonBody"));
    const connected = await connectApiKey(ctx, ticketOf(c, "CONNECT_INVALID"), input);
    return json(c, { status: "CONNECTED", ...connected }, 200);
  });

  api.post("/wallet/start", async (c) => {
    const next = await startWalletFlow(
      hostedPageCtx(c),
      ticketOf(c, "CONNECT_INVALID"),
      parse(WalletStartBody, c.get("jsonBody")),
    );
    return json(c, next, 200);
  });

  api.post("/wallet/sign", async (c) => {
    const next = await submitWalletSignature(
      hostedPageCtx(c),
      ticketOf(c, "CONNECT_INVALID"),
      parse(WalletSignatureBody, c.get("jsonBody")),
    );
    return json(c, next, 200);
  });

  // QA only (the domain answers 404 elsewhere): test credentials, like a payment sandbox's test cards.
  api.post("/qa/test-credentials", async (c) => {
    const input = parse(TestCredentialsBody, c.get("jsonBody") ?? {});
    return json(c, await qaTestCredentials(hostedPageCtx(c), ticketOf(c, "CONNECT_INVALID"), input), 200);
  });

  return api;
}
