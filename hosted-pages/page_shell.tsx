/** @jsxImportSource hono/jsx */
/**
 * What the hosted pages (connect, pay) share on the server: their static
 * assets, read once at start and served from the page's own path (so every
 * answer keeps that page's headers), and the HTML shell. Everything that
 * depends on a session is filled in by the page's script after it exchanged
 * the fragment token, so the server-rendered HTML holds nothing secret and
 * nothing client-specific.
 */
import type { Context } from "hono";
import type { AppEnv } from "../routes/env.ts";

export interface Asset {
  type: string;
  body: string;
  /** Served only where the venues are simulators (the in-page test wallet). */
  qaOnly?: boolean;
}

const readAsset = async (url: URL, type: string): Promise<Asset> => ({ type, body: await Deno.readTextFile(url) });
export const script = (url: URL) => readAsset(url, "text/javascript; charset=utf-8");
export const stylesheet = (url: URL) => readAsset(url, "text/css; charset=utf-8");

/** The DOM helpers every page's script uses (page_kit.js), and the stylesheet every page starts from. */
export const SHARED_ASSETS: Record<string, Asset> = {
  "page_kit.js": await script(new URL("./page_kit.js", import.meta.url)),
  "connect.css": await stylesheet(new URL("./connect/connect.css", import.meta.url)),
};

export function isQa(c: Context<AppEnv>): boolean {
  return c.get("deps").config.serviceEnv === "qa";
}

/** `GET <base>/assets/:file` over `assets`. */
export function assetsHandler(assets: Record<string, Asset>) {
  return (c: Context<AppEnv>) => {
    const asset = assets[c.req.param("file") ?? ""];
    if (!asset || (asset.qaOnly && !isQa(c))) return c.notFound();
    return c.body(asset.body, 200, { "content-type": asset.type });
  };
}

export interface Shell {
  /** The page's path, e.g. `/connect`. */
  base: string;
  title: string;
  stylesheets: string[];
  /** The page's scripts after page_kit.js, in order. */
  scripts: string[];
  noscript: string;
}

export function renderShell(c: Context<AppEnv>, shell: Shell) {
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
            <title>{shell.title}</title>
            {shell.stylesheets.map((file) => (
              <link rel="stylesheet" href={`${shell.base}/assets/${file}`} nonce={nonce} />
            ))}
          </head>
          <body>
            {/* Each screen moves the focus to its heading; its own status region announces progress. */}
            <main id="app">
              <h1>{shell.title}</h1>
              <p>Carregando…</p>
              <noscript>{shell.noscript}</noscript>
            </main>
            {["page_kit.js", ...shell.scripts].map((file) => (
              <script src={`${shell.base}/assets/${file}`} nonce={nonce} defer></script>
            ))}
          </body>
        </html>
      ).toString(),
  );
}
