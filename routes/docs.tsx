/** @jsxImportSource hono/jsx */
/**
 * `/docs`: the interactive API reference (Scalar's, from its npm package) over
 * both OpenAPI documents the service serves, partner and operator, with search,
 * code samples and try-it against this same service.
 *
 * Everything the page loads comes from the service itself: Scalar's browser
 * bundle is read from node_modules at start and served, like the hosted pages'
 * files, under a content-hashed name cached for good; the page names no font,
 * proxy, telemetry or other Scalar service, and its CSP would refuse them.
 */
import { createRequire } from "node:module";
import { Hono } from "hono";
import { compress } from "hono/compress";
import { raw } from "hono/html";
import { type Asset, assetHref, assetsHandler, script } from "../hosted-pages/page_shell.tsx";
import { pageHeaders, type PagePolicy } from "../hosted-pages/security.ts";
import type { AppEnv } from "./env.ts";

// deno-lint-ignore no-explicit-any
type OpenApiDocument = any;

const BASE = "/docs";

/** Scalar's standalone browser bundle: one script with its styles inside (no chunk, no font, no CDN). */
const scalarBundle = new URL(
  "./browser/standalone.js",
  `file://${createRequire(import.meta.url).resolve("@scalar/api-reference/style.css")}`,
);

const DOCS_ASSETS: Record<string, Asset> = {
  "standalone.js": await script(scalarBundle),
  "docs.js": await script(new URL("../hosted-pages/docs/docs.js", import.meta.url)),
};

/**
 * Scalar's configuration (read by hosted-pages/docs/docs.js). Every switch that
 * would reach a Scalar service is off: fonts (the system's are used), the
 * request proxy (try-it calls this origin directly), telemetry, the agent and
 * MCP features, the "open in client" and developer-tools links to scalar.com.
 */
function scalarConfiguration(partner: OpenApiDocument, operator: OpenApiDocument) {
  return {
    sources: [
      { title: `Partner API ${partner.info.version}`, slug: "partner", url: "/v1/openapi.json", default: true },
      { title: `Operator API ${operator.info.version}`, slug: "operator", url: "/operator/v1/openapi.json" },
    ],
    withDefaultFonts: false,
    telemetry: false,
    hideClientButton: true,
    showDeveloperTools: "never",
    agent: { disabled: true },
    mcp: { disabled: true },
    documentDownloadType: "json",
    // The tabs shown first under each operation; every other language stays in the menu.
    featuredClients: ["shell/curl", "js/fetch", "python/requests"],
    defaultHttpClient: { targetKey: "shell", clientKey: "curl" },
    // Credentials typed into try-it stay in the tab's memory only.
    persistAuth: false,
  };
}

/**
 * The reference's headers: the hosted pages' (scripts by nonce, requests to
 * this origin only, no framing, no referrer), with what Scalar needs.
 */
const DOCS_POLICY: PagePolicy = {
  // Scalar's components set inline styles (`style` attributes and <style> elements with computed content: widths,
  // positions, the theme's colours), which neither a nonce nor a fixed hash can allow. A style runs no code, and what
  // it could fetch from elsewhere (a url()) default-src and img-src still refuse.
  styleSrc: "'unsafe-inline'",
  // The page's empty icon (`data:,`), so the browser asks for no /favicon.ico.
  imgSrc: "data:",
  // Public and the same for everyone: a browser may keep it, asking again each time.
  cacheControl: "no-cache",
  indexable: true,
};

/** JSON inside <script type="application/json">: no `<` may close the element early. */
const scriptJson = (value: unknown) => JSON.stringify(value).replaceAll("<", "\\u003c");

/** `/docs` and its assets, for `app.route("/docs", …)`. Needs no credential: the documents are public. */
export function docsRoutes(documents: { partner: OpenApiDocument; operator: OpenApiDocument }) {
  const { partner, operator } = documents;
  const configuration = scriptJson(scalarConfiguration(partner, operator));
  const routes = new Hono<AppEnv>();
  routes.use("*", pageHeaders(DOCS_POLICY));
  // Scalar's bundle is 4.9 MB as is, 1.4 MB gzipped: compressed for each browser that accepts it (once per
  // browser: the hashed name is cached for good).
  routes.get("/assets/:file", compress(), assetsHandler(DOCS_ASSETS));
  routes.get("/", (c) => {
    const nonce = c.get("cspNonce");
    return c.html(
      "<!doctype html>" +
        (
          <html lang="en">
            <head>
              <meta charset="utf-8" />
              <meta name="viewport" content="width=device-width, initial-scale=1" />
              <meta name="referrer" content="no-referrer" />
              <link rel="icon" href="data:," />
              <title>{`${partner.info.title} ${partner.info.version} — reference`}</title>
            </head>
            <body>
              <div id="reference"></div>
              <noscript>
                The reference needs JavaScript. The documents themselves: <a href="/v1/openapi.json">partner</a>,{" "}
                <a href="/operator/v1/openapi.json">operator</a>.
              </noscript>
              <script type="application/json" id="docs-config">
                {/* Data, never run (no nonce needed); raw, as hono would escape the JSON's quotes. */}
                {raw(configuration)}
              </script>
              <script src={assetHref(BASE, "standalone.js")} nonce={nonce}></script>
              <script src={assetHref(BASE, "docs.js")} nonce={nonce}></script>
            </body>
          </html>
        ).toString(),
    );
  });
  return routes;
}
