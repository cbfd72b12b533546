/**
 * The JSON API the connect page's script calls (`/connect/api/*`). It only
 * relays: the link token is exchanged for a page ticket, and every later call
 * names the ticket in its Authorization header, never in a URL. Errors use the
 * API's envelope; refusals that count as an attempt add `attemptsLeft`, a
 * refused body names its `field`.
 */
import { Hono } from "hono";
import { z } from "zod";
import { connectApiKey } from "../../domain/connect/connect_api_key.ts";
import { startWalletFlow, submitWalletSignature } from "../../domain/connect/connect_wallet.ts";
import { qaTestCredentials } from "../../domain/qa/test_credentials.ts";
import {
  exchangeLinkToken,
  issueHandoff,
  type PageSession,
  pageSessionOfTicket,
} from "../../domain/connect/hosted_session.ts";
import { iso } from "../../domain/clock.ts";
import type { Ctx } from "../../domain/context.ts";
import { qrSvg } from "../../domain/payments/qr_svg.ts";
import { ApiError } from "../../domain/errors.ts";
import { type AppEnv, hostedPageCtx } from "../../routes/env.ts";
import { json } from "../../routes/respond.ts";
import { ticketOf } from "../page_api.ts";

// Each message says, in plain words, what to do; the refusal names its field (`field`) so the page puts it there.
const TOKEN = z.string({
  error: "Este link está incompleto ou foi alterado. Abra de novo o link completo que você recebeu.",
}).regex(/^[A-Za-z0-9_-]{43}$/);
const ExchangeBody = z.object({ token: TOKEN });

/** A key or secret as the exchange shows it: printable, no spaces, 16 to 256 characters. */
function pastedKey(name: string) {
  const copyAgain = `Copie de novo a ${name} inteira na corretora e cole aqui.`;
  return z.string({ error: `Cole a ${name}.` }).trim()
    .min(1, `Cole a ${name}.`)
    .min(16, `A ${name} parece incompleta. ${copyAgain}`)
    .max(256, `Isto é mais longo que uma ${name}. ${copyAgain}`)
    .regex(/^[\x21-\x7e]+$/, `A ${name} tem espaços ou caracteres que não fazem parte dela. ${copyAgain}`);
}
const ApiKeyBody = z.object({ apiKey: pastedKey("API Key"), apiSecret: pastedKey("Secret Key") });

const HEX_ADDRESS = z.string({ error: "A carteira enviou um endereço que não conseguimos ler. Conecte-a de novo." })
  .regex(/^0x[0-9a-fA-F]{40}$/)
  .transform((value) => value.toLowerCase() as `0x${string}`);
const WalletStartBody = z.object({
  walletAddress: HEX_ADDRESS,
  chainId: z.string({ error: "A carteira informou uma rede que não conseguimos ler. Conecte-a de novo." })
    .regex(/^0x[0-9a-fA-F]{1,16}$/)
    .transform((value) => value.toLowerCase() as `0x${string}`),
});
const TestCredentialsBody = z.object({ walletAddress: HEX_ADDRESS.optional() });
const WalletSignatureBody = z.object({
  signature: z.string({ error: "A carteira devolveu uma assinatura que não conseguimos ler. Assine de novo." })
    .regex(/^0x[0-9a-fA-F]{130}$/),
});

/**
 * The body against its schema, or VALIDATION_ERROR with the first problem's
 * message as it is (written for the client, see above) and its `field`.
 */
function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const [issue] = result.error.issues;
  const field = issue.path.map(String).join(".");
  throw new ApiError("VALIDATION_ERROR", { message: issue.message, extra: field ? { field } : {} });
}

/**
 * `secondsLeft` is what the page counts down from: a phone's own clock may be
 * minutes off, so the page measures only the time since it read this.
 */
function sessionWire(session: PageSession, ctx: Ctx) {
  const secondsLeft = Math.max(0, Math.ceil((session.expiresAt - ctx.clock.now()) / 1000));
  return { ...session, expiresAt: iso(session.expiresAt), secondsLeft, qa: ctx.config.serviceEnv === "qa" };
}

export function connectApi(): Hono<AppEnv> {
  const api = new Hono<AppEnv>();

  api.post("/session", async (c) => {
    const ctx = hostedPageCtx(c);
    const { token } = parseBody(ExchangeBody, c.get("jsonBody"));
    const { ticket, session } = await exchangeLinkToken(ctx, token);
    return json(c, { ticket, session: sessionWire(session, ctx) }, 200);
  });

  // Also after the session ended (its `status` says how), so a reload shows the outcome again.
  api.get("/session", async (c) => {
    const ctx = hostedPageCtx(c);
    const session = await pageSessionOfTicket(ctx, ticketOf(c, "CONNECT_INVALID"));
    return json(c, { session: sessionWire(session, ctx) }, 200);
  });

  // A single-use link to open this session in another browser (a wallet's); its exchange ends this tab's ticket.
  // The QR code, drawn here as SVG markup the page inlines, lets a desktop hand the link to a phone's wallet
  // with no request at all (a data: image is still one).
  api.post("/handoff", async (c) => {
    const handoff = await issueHandoff(hostedPageCtx(c), ticketOf(c, "CONNECT_INVALID"));
    return json(c, { url: handoff.url, expiresAt: iso(handoff.expiresAt), qrSvg: qrSvg(handoff.url) }, 200);
  });

  api.post("/api-key", async (c) => {
    const ctx = hostedPageCtx(c);
    const input = parseBody(ApiKeyBody, c.get("jsonBody"));
    const connected = await connectApiKey(ctx, ticketOf(c, "CONNECT_INVALID"), input);
    return json(c, { status: "CONNECTED", ...connected }, 200);
  });

  api.post("/wallet/start", async (c) => {
    const next = await startWalletFlow(
      hostedPageCtx(c),
      ticketOf(c, "CONNECT_INVALID"),
      parseBody(WalletStartBody, c.get("jsonBody")),
    );
    return json(c, next, 200);
  });

  api.post("/wallet/sign", async (c) => {
    const next = await submitWalletSignature(
      hostedPageCtx(c),
      ticketOf(c, "CONNECT_INVALID"),
      parseBody(WalletSignatureBody, c.get("jsonBody")),
    );
    return json(c, next, 200);
  });

  // QA only (the domain answers 404 elsewhere): test credentials, like a payment sandbox's test cards.
  api.post("/qa/test-credentials", async (c) => {
    const input = parseBody(TestCredentialsBody, c.get("jsonBody") ?? {});
    return json(c, await qaTestCredentials(hostedPageCtx(c), ticketOf(c, "CONNECT_INVALID"), input), 200);
  });

  return api;
}
