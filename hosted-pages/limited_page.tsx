/** @jsxImportSource hono/jsx */
/**
 * What a page load refused by the per-IP limit shows: a styled pt-BR page
 * that says how long to wait, instead of the API's JSON. Its script
 * (limited.js) takes the link's token out of the address bar first, like the
 * pages do, and opens the same link again once the wait is over.
 */
import type { Context } from "hono";
import type { AppEnv } from "../routes/env.ts";
import { renderShell } from "./page_shell.tsx";

export function renderLimitedPage(c: Context<AppEnv>, base: string, retryAfterSeconds: number) {
  c.header("Retry-After", String(retryAfterSeconds));
  return renderShell(c, {
    base,
    title: "Aguarde um instante",
    stylesheets: ["connect.css"],
    scripts: ["limited.js"],
    noscript: "Depois desse tempo, recarregue esta página.",
    status: 429,
    content: (
      <>
        <h1>Muitas tentativas em pouco tempo</h1>
        <div class="message warning">
          <p>
            Esta página recebeu pedidos demais a partir da sua conexão. Para proteger o seu link, pausamos por{" "}
            <strong data-retry-after={String(retryAfterSeconds)}>{retryAfterSeconds} segundos</strong>.
          </p>
        </div>
        <p class="muted">
          Seu link continua valendo enquanto não expirar: nada foi alterado. Aguarde e a página abre de novo sozinha.
        </p>
      </>
    ),
  });
}
