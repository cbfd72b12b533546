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
import type { Child } from "hono/jsx";
import { sha256Hex } from "../domain/ids.ts";
import type { AppEnv } from "../routes/env.ts";

export interface Asset {
  type: string;
  body: string;
  /** The first hex digits of the body's SHA-256: the name the shell links to changes with the content. */
  hash: string;
  /** Served only where the venues are simulators (the in-page test wallet). */
  qaOnly?: boolean;
}

/** Each asset's hash by its file name, for the shell's links (file names are unique across the pages). */
const HASHES = new Map<string, string>();

async function readAsset(url: URL, type: string): Promise<Asset> {
  const body = await Deno.readTextFile(url);
  const hash = sha256Hex(body).slice(0, 12);
  HASHES.set(url.pathname.split("/").pop()!, hash);
  return { type, body, hash };
}
export const script = (url: URL) => readAsset(url, "text/javascript; charset=utf-8");
export const stylesheet = (url: URL) => readAsset(url, "text/css; charset=utf-8");

/** `connect.js` -> `connect.<hash>.js`: a name that never answers with other content, so it may be cached for good. */
function hashedName(file: string): string {
  const hash = HASHES.get(file);
  if (!hash) throw new Error(`${file} is not a hosted-page asset`);
  const dot = file.lastIndexOf(".");
  return `${file.slice(0, dot)}.${hash}${file.slice(dot)}`;
}

/** The DOM helpers every page's script uses (page_kit.js), and the stylesheets every page starts from. */
export const SHARED_ASSETS: Record<string, Asset> = {
  "page_kit.js": await script(new URL("./page_kit.js", import.meta.url)),
  "connect.css": await stylesheet(new URL("./connect/connect.css", import.meta.url)),
  "page_kit.css": await stylesheet(new URL("./page_kit.css", import.meta.url)),
  "limited.js": await script(new URL("./limited.js", import.meta.url)),
};

export function isQa(c: Context<AppEnv>): boolean {
  return c.get("deps").config.serviceEnv === "qa";
}

const IMMUTABLE = "public, max-age=31536000, immutable";

/**
 * `GET <base>/assets/:file` over `assets`. The shell links to hashed names,
 * cached for a year (a phone on a slow line loads the page's files once);
 * the plain name still answers, revalidated at every use.
 */
export function assetsHandler(assets: Record<string, Asset>) {
  return (c: Context<AppEnv>) => {
    const requested = c.req.param("file") ?? "";
    const hashed = /^(.+)\.([0-9a-f]{12})(\.[a-z]+)$/.exec(requested);
    const file = hashed ? hashed[1] + hashed[3] : requested;
    const asset = Object.hasOwn(assets, file) ? assets[file] : undefined;
    if (!asset || (asset.qaOnly && !isQa(c)) || (hashed && hashed[2] !== asset.hash)) return c.notFound();
    return c.body(asset.body, 200, { "content-type": asset.type, "cache-control": hashed ? IMMUTABLE : "no-cache" });
  };
}

/** Where a page's asset is linked from: `/connect/assets/connect.<hash>.js`. */
export const assetHref = (base: string, file: string) => `${base}/assets/${hashedName(file)}`;

export interface Shell {
  /** The page's path, e.g. `/connect`. */
  base: string;
  title: string;
  stylesheets: string[];
  /** The page's scripts after page_kit.js, in order. */
  scripts: string[];
  noscript: string;
  /** What the page shows before its script runs (default: a heading and "Carregando…"). */
  content?: Child;
  /** Default 200. */
  status?: 200 | 429;
}

export function renderShell(c: Context<AppEnv>, shell: Shell) {
  const nonce = c.get("cspNonce");
  return c.html(
    "<!doctype html>" +
      (
        <html lang="pt-BR">
          <head>
            <meta charset="utf-8" />
            <meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover" />
            <meta name="referrer" content="no-referrer" />
            <link rel="icon" href="data:," />
            <title>{shell.title}</title>
            {[...shell.stylesheets, "page_kit.css"].map((file) => (
              <link rel="stylesheet" href={assetHref(shell.base, file)} nonce={nonce} />
            ))}
          </head>
          <body>
            {/* Each screen moves the focus to its heading; its own status region announces progress. */}
            <main id="app">
              {shell.content ?? (
                <>
                  <h1>{shell.title}</h1>
                  <p>Carregando…</p>
                </>
              )}
              <noscript>{shell.noscript}</noscript>
            </main>
            {["page_kit.js", ...shell.scripts].map((file) => (
              <script src={assetHref(shell.base, file)} nonce={nonce} defer></script>
            ))}
          </body>
        </html>
      ).toString(),
    shell.status ?? 200,
  );
}
