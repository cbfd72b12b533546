/**
 * What every hosted page and its API answer with: no referrer (the page's URL
 * carried a token in its fragment), no framing, a strict CSP whose only
 * scripts and styles are ours (by nonce), no powerful browser feature, no
 * search-engine indexing, nothing cached, and a per-IP limit. The API
 * reference (`/docs`) answers with the same headers under its own PagePolicy.
 */
import type { Context, MiddlewareHandler } from "hono";
import { ApiError } from "../domain/errors.ts";
import { randomSecret } from "../domain/ids.ts";
import { createMemoryRateLimiter } from "../domain/usage/rate_limiter.ts";
import type { AppEnv } from "../routes/env.ts";
import { renderLimitedPage } from "./limited_page.tsx";

/** Requests a minute from one IP address across the hosted pages and their API. */
export const PAGE_REQUESTS_PER_MINUTE = 60;

/**
 * Browser features no hosted page may use, for itself or anything it embeds.
 * The pages read a form, call their own API, talk to the wallet extension
 * through `window.ethereum` (the extension's own channel, which no policy here
 * governs) and copy addresses and links to the clipboard (`self` only); there
 * is no Payment Request (a payment is a wallet signature or a transfer). A
 * feature a page comes to need must be allowed for `self` only. Only names
 * Chromium recognises: an unknown one costs a console warning on every load.
 */
const SELF_FEATURES = ["clipboard-write"];
const DENIED_FEATURES = [
  "camera",
  "microphone",
  "geolocation",
  "payment",
  "usb",
  "serial",
  "hid",
  "midi",
  "clipboard-read",
  "display-capture",
  "screen-wake-lock",
  "idle-detection",
  "local-fonts",
  "accelerometer",
  "gyroscope",
  "magnetometer",
  "xr-spatial-tracking",
  "publickey-credentials-create",
  "publickey-credentials-get",
  "identity-credentials-get",
  "otp-credentials",
  "window-management",
  "compute-pressure",
  "fullscreen",
  "picture-in-picture",
  "autoplay",
  "encrypted-media",
  "browsing-topics",
];
const PERMISSIONS_POLICY = [
  ...SELF_FEATURES.map((feature) => `${feature}=(self)`),
  ...DENIED_FEATURES.map((feature) => `${feature}=()`),
].join(", ");

/**
 * What a page of this service may load, beyond its own nonce'd scripts. The
 * hosted pages' own: styles by nonce, images from here, never cached (their
 * answers hold session data), never indexed (a link holds a live token). The
 * API reference (`/docs`) relaxes some of it, saying why where it does.
 */
export interface PagePolicy {
  styleSrc: string;
  imgSrc: string;
  /** Cache-Control of answers that set none (hashed assets set their own). */
  cacheControl: string;
  indexable: boolean;
}

const HOSTED_PAGE_POLICY: PagePolicy = {
  styleSrc: "'nonce'",
  imgSrc: "'self' data:",
  cacheControl: "no-store",
  indexable: false,
};

export function pageHeaders(policy: PagePolicy = HOSTED_PAGE_POLICY): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const nonce = randomSecret(16);
    c.set("cspNonce", nonce);
    await next();
    c.header(
      "Content-Security-Policy",
      [
        "default-src 'none'",
        `script-src 'nonce-${nonce}'`,
        `style-src ${policy.styleSrc === "'nonce'" ? `'nonce-${nonce}'` : policy.styleSrc}`,
        `img-src ${policy.imgSrc}`,
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
      ].join("; "),
    );
    c.header("Referrer-Policy", "no-referrer");
    c.header("X-Frame-Options", "DENY");
    c.header("X-Content-Type-Options", "nosniff");
    if (!c.res.headers.has("Cache-Control")) c.header("Cache-Control", policy.cacheControl);
    c.header("Cross-Origin-Opener-Policy", "same-origin");
    c.header("Permissions-Policy", PERMISSIONS_POLICY);
    if (!policy.indexable) c.header("X-Robots-Tag", "noindex, nofollow");
  };
}

/**
 * `429 TOO_MANY_REQUESTS` beyond PAGE_REQUESTS_PER_MINUTE from one address.
 * The address is the TCP peer's: behind a proxy every client would share its
 * address, so such a deployment must put the limit at the proxy instead.
 *
 * The pages' own static files are not counted: a load is the page and its
 * 4-5 files, and a page whose files were refused would hang on "Carregando…".
 * They are fixed strings in memory, cheap to serve and no use to an attacker.
 * A refused page load answers the styled page that says how long to wait
 * (limited_page.tsx); a refused API call the API's JSON envelope.
 *
 * Counted per instance, in memory (N instances let an address make N times
 * the limit): it bounds the load one address puts on the pages and grants
 * nothing. Every page API call still needs its live token or ticket (random,
 * single-purpose, expiring) and, for a wallet, the owner's signature, so more
 * attempts buy no access and move no money.
 */
export function perIpLimit(): MiddlewareHandler<AppEnv> {
  const limiter = createMemoryRateLimiter();
  return async (c, next) => {
    const [, base, section] = c.req.path.split("/");
    if (section === "assets") return await next();
    const decision = limiter.consume(
      `ip:${peerAddress(c)}`,
      { REQUEST: PAGE_REQUESTS_PER_MINUTE },
      c.get("deps").clock.now(),
    );
    if (decision.allowed) return await next();
    if (section === "api" || c.req.method !== "GET") {
      throw new ApiError("TOO_MANY_REQUESTS", { retryAfterSeconds: decision.retryAfterSeconds });
    }
    return renderLimitedPage(c, `/${base}`, decision.retryAfterSeconds);
  };
}

function peerAddress(c: Context): string {
  const info = c.env as Deno.ServeHandlerInfo<Deno.NetAddr> | undefined;
  return info?.remoteAddr?.hostname ?? "local";
}
