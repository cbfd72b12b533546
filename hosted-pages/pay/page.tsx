/** @jsxImportSource hono/jsx */
/**
 * The payment page's HTML shell. Like the connect page, everything that
 * depends on the payment is filled in by pay.js after it exchanged the
 * fragment token, so the server-rendered HTML holds nothing secret and
 * nothing client-specific. The look is the connect page's own stylesheet
 * (the same file, served here too so the page stays under its own path and
 * headers) plus the few rules only this page needs.
 */
import type { Context } from "hono";
import type { AppEnv } from "../../routes/env.ts";

const ASSETS: Record<string, { type: string; body: string }> = {
  "pay.js": {
    type: "text/javascript; charset=utf-8",
    body: await Deno.readTextFile(new URL("./pay.js", import.meta.url)),
  },
  "connect.css": {
    type: "text/css; charset=utf-8",
    body: await Deno.readTextFile(new URL("../connect/connect.css", import.meta.url)),
  },
  "pay.css": {
    type: "text/css; charset=utf-8",
    body: await Deno.readTextFile(new URL("./pay.css", import.meta.url)),
  },
};

export function payAssets(c: Context<AppEnv>) {
  const asset = ASSETS[c.req.param("file") ?? ""];
  if (!asset) return c.notFound();
  return c.body(asset.body, 200, { "content-type": asset.type });
}

export function payPage(c: Context<AppEnv>) {
  const nonce = c.get("cspNonce");
  return c.html(
    "<!doctype html>" +
      (
        <html lang="pt-BR">
          <head>
            <meta charset="utf-8" />
            <meta name="viewport" content="width=device-width, initial-scale=1" />
            <meta name="referrer" content="no-referrer" />
            <link rel="icon" href="data:," />
            <title>Pagamento</title>
            <link rel="stylesheet" href="/pay/assets/connect.css" nonce={nonce} />
            <link rel="stylesheet" href="/pay/assets/pay.css" nonce={nonce} />
          </head>
          <body>
            {/* Each screen moves the focus to its heading; its own status region announces progress. */}
            <main id="app">
              <h1>Pagamento</h1>
              <p>Carregando…</p>
              <noscript>Esta página precisa de JavaScript para fazer o pagamento com segurança.</noscript>
            </main>
            <script src="/pay/assets/pay.js" nonce={nonce} defer></script>
          </body>
        </html>
      ).toString(),
  );
}
