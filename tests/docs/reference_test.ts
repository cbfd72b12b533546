/**
 * `/docs`, Scalar's API reference, in headless Chromium against a served QA
 * service: both documents render, search finds an operation, the code samples
 * come in curl, JavaScript and Python, a try-it with a partner's credentials
 * reaches this service, and no request ever leaves its origin.
 */
import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { assertCleanPage, assertNotInUrls, openBrowser, screenshots } from "../_helpers/browser.ts";
import { startServedTestEnv, startTestEnv } from "../_helpers/env.ts";
import { call, createPartner, expectJson } from "../_helpers/http.ts";

const GROUP = "docs";

async function waitForText(page: Page, text: string): Promise<void> {
  await page.waitForFunction(`document.body.innerText.includes(${JSON.stringify(text)})`);
}

Deno.test("/docs: both references render, search, code samples and a try-it answered by this service, nothing leaves the origin", async () => {
  const served = await startServedTestEnv();
  const { env, origin } = served;
  try {
    const partnerDoc = await expectJson(await call(env, "GET", "/v1/openapi.json"), 200);
    const operatorDoc = await expectJson(await call(env, "GET", "/operator/v1/openapi.json"), 200);
    const partner = await createPartner(env);

    await using browser = await openBrowser();
    const { page, record } = await browser.newPage("desktop");
    const response = await page.goto(`${origin}/docs`, { waitUntil: "networkidle0" });
    assert.equal(response?.status(), 200);
    // The title names the version the document declares, whatever it is.
    assert.equal(await page.title(), `${partnerDoc.info.title} ${partnerDoc.info.version} — reference`);

    // The partner reference opens first: one of its operation headings.
    await waitForText(page, partnerDoc.paths["/v1/health"].get.summary);
    await screenshots(page, GROUP, "partner", { fullPage: false });

    // Try-it: the partner's Basic credentials typed into the reference, sent from the page to this service.
    await page.locator("::-p-aria(Username)").click();
    await page.keyboard.type(partner.clientId);
    await page.locator("::-p-aria(Password)").fill(partner.clientSecret);
    await page.locator("::-p-text(Test Request)").click();
    const answered = page.waitForResponse((answer) => answer.url() === `${origin}/v1/health`);
    await page.locator("::-p-text(Send)").click();
    const health = await answered;
    assert.equal(health.status(), 200);
    assert.equal(health.request().headers().authorization, partner.headers.authorization);
    await waitForText(page, "200 OK");
    await waitForText(page, (await health.json()).requestId);
    await screenshots(page, GROUP, "try-it", { fullPage: false });
    await page.keyboard.press("Escape");

    // Code samples: curl, JavaScript's fetch and Python's requests, each a tab of its own.
    for (const [tab, sample] of [["Shell", "curl "], ["JavaScript", "fetch("], ["Python", "requests."]]) {
      await page.locator(`::-p-text(${tab})`).click();
      await waitForText(page, sample);
    }

    // Search (Ctrl+K, the shortcut the sidebar's search box shows) finds the operations by their path.
    await page.keyboard.down("Control");
    await page.keyboard.press("k");
    await page.keyboard.up("Control");
    await page.keyboard.type("connect-sessions");
    await waitForText(page, "/v1/users/{id}/connect-sessions");
    await screenshots(page, GROUP, "search", { fullPage: false });
    await page.keyboard.press("Escape");

    // The operator reference, one switch away.
    await page.locator(`::-p-text(Partner API ${partnerDoc.info.version})`).click();
    await page.locator(`::-p-text(Operator API ${operatorDoc.info.version})`).click();
    await waitForText(page, operatorDoc.paths["/operator/v1/partners"].post.summary);
    await screenshots(page, GROUP, "operator", { fullPage: false });

    assertCleanPage(record);
    assertNotInUrls(record, partner.clientSecret, "the partner's secret");
    for (const url of record.requests) {
      assert.ok(url.startsWith(`${origin}/`), `the page requested ${url}, outside ${origin}`);
    }
  } finally {
    await served.close();
  }
});

Deno.test("/docs needs no credential, answers with its own headers and serves Scalar from hashed, immutable, gzipped names", async () => {
  const env = await startTestEnv();
  try {
    const partnerDoc = await expectJson(await call(env, "GET", "/v1/openapi.json"), 200);
    const response = await call(env, "GET", "/docs");
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /text\/html/);
    const csp = new Map(
      (response.headers.get("content-security-policy") ?? "").split("; ").map((directive) => {
        const [name, ...values] = directive.split(" ");
        return [name, values.join(" ")];
      }),
    );
    assert.equal(csp.get("default-src"), "'none'");
    assert.match(csp.get("script-src") ?? "", /^'nonce-[A-Za-z0-9_-]+'$/);
    assert.equal(csp.get("connect-src"), "'self'");
    // Scalar's inline styles are the one relaxation (routes/docs.tsx says why); no other origin, no wildcard.
    assert.equal(csp.get("style-src"), "'unsafe-inline'");
    assert.doesNotMatch(response.headers.get("content-security-policy")!, /https?:|\*|unsafe-eval/);
    assert.equal(csp.get("frame-ancestors"), "'none'");
    assert.equal(response.headers.get("referrer-policy"), "no-referrer");
    assert.equal(response.headers.get("x-content-type-options"), "nosniff");
    const permissions = response.headers.get("permissions-policy") ?? "";
    assert.match(permissions, /(^|, )clipboard-write=\(self\)/);
    for (const feature of ["camera", "microphone", "geolocation", "payment", "fullscreen"]) {
      assert.match(permissions, new RegExp(`(^|, )${feature}=\\(\\)`));
    }

    const html = await response.text();
    assert.ok(html.includes(`<title>${partnerDoc.info.title} ${partnerDoc.info.version} — reference</title>`));
    assert.doesNotMatch(html, /https?:\/\//, "the page names no other origin");
    const nonce = csp.get("script-src")!.slice("'nonce-".length, -1);
    const scripts = [...html.matchAll(/<script src="([^"]+)" nonce="([^"]+)"/g)];
    assert.deepEqual(scripts.map(([, src]) => src.replace(/\.[0-9a-f]{12}\.js$/, ".js")), [
      "/docs/assets/standalone.js",
      "/docs/assets/docs.js",
    ]);
    for (const [, src, scriptNonce] of scripts) {
      assert.equal(scriptNonce, nonce);
      const asset = await call(env, "GET", src, { headers: { "accept-encoding": "gzip" } });
      assert.equal(asset.status, 200);
      assert.equal(asset.headers.get("content-encoding"), "gzip");
      assert.match(asset.headers.get("content-type") ?? "", /^text\/javascript/);
      assert.equal(asset.headers.get("cache-control"), "public, max-age=31536000, immutable");
      await asset.body?.cancel();
    }
    // A name whose hash is not the content's answers nothing.
    const stale = await call(env, "GET", "/docs/assets/standalone.000000000000.js");
    assert.equal(stale.status, 404);
    await stale.body?.cancel();
  } finally {
    await env.close();
  }
});
