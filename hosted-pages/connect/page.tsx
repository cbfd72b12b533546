/** @jsxImportSource hono/jsx */
/**
 * The connect page's HTML shell. Everything that depends on the session is
 * filled in by connect.js after it exchanged the fragment token, so the
 * server-rendered HTML holds nothing secret and nothing client-specific.
 */
import type { Context } from "hono";
import type { AppEnv } from "../../routes/env.ts";

const ASSETS: Record<string, { type: string; body: string; qaOnly?: boolean }> = {
  "connect.js": {
    type: "text/javascript; charset=utf-8",
    body: await Deno.readTextFile(new URL("./connect.js", import.meta.url)),
  },
  // The in-page test wallet exists only where the venues are simulators.
  "test_wallet.js": {
    type: "text/javascript; charset=utf-8",
    body: await Deno.readTextFile(new URL("./test_wallet.js", import.meta.url)),
    qaOnly: true,
  },
  "connect.css": {
    type: "text/css; charset=utf-8",
    body: await Deno.readTextFile(new URL("./connect.css", import.meta.url)),
  },
};

export function connectAssets(c: Context<AppEnv>) {
  const asset = ASSETS[c.req.param("file") ?? ""];
  if (!asset || (asset.qaOnly && !isQa(c))) return c.notFound();
  return c.body(asset.body, 200, { "content-type": asset.type });
}

function isQa(c: Context<AppEnv>): boolean {
  return c.get("deps").config.serviceEnv === "qa";
}

export function connectPage(c: Context<AppEnv>) {
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
            <title>Conectar conta</title>
            <link rel="stylesheet" href="/connect/assets/connect.css" nonce={nonce} />
          </head>
          <body>
            {/* Each screen moves the focus to its heading; its own status region announces progress. */}
            <main id="app">
              <h1>Conectar conta</h1>
              <p>Carregando…</p>
              <noscript>Esta página precisa de JavaScript para conectar sua conta com segurança.</noscript>
            </main>
            {isQa(c) && <script src="/connect/assets/test_wallet.js" nonce={nonce} defer></script>}
            <script src="/connect/assets/connect.js" nonce={nonce} defer></script>
          </body>
        </html>
      ).toString(),
  );
}
