/**
 * A browser tab for hosted-page tests: what it sent (URLs, bodies, headers)
 * and logged, opening a link as a client would, and reading the page.
 */
import type { HTTPRequest, Page } from "puppeteer-core";
import assert from "node:assert/strict";
import { assertCleanPage, assertNotInUrls, type PageRecord, type TestBrowser, type ViewportName } from "./browser.ts";

/** A tab and everything it sent: URLs (the helper's record), plus bodies, headers and console lines. */
export interface Tab {
  page: Page;
  record: PageRecord;
  sent: { method: string; url: string; headers: Record<string, string>; body: string }[];
  console: string[];
}

export async function newTab(browser: TestBrowser, viewport: ViewportName = "desktop"): Promise<Tab> {
  const { page, record } = await browser.newPage(viewport);
  const tab: Tab = { page, record, sent: [], console: [] };
  page.on("request", (request: HTTPRequest) => {
    tab.sent.push({
      method: request.method(),
      url: request.url(),
      headers: request.headers(),
      body: request.postData() ?? "",
    });
  });
  page.on("console", (line) => tab.console.push(line.text()));
  return tab;
}

/** The link as the client opens it: typed or tapped anew, so the page loads (a fragment change alone would not). */
export async function open(tab: Tab, url: string) {
  // A background tab neither paints nor runs animation frames: the tab in use is the one in front.
  await tab.page.bringToFront();
  await tab.page.goto("about:blank");
  await tab.page.goto(url, { waitUntil: "domcontentloaded" });
  await tab.page.waitForFunction(`!document.querySelector("main")?.innerText.includes("Carregando")`, {
    polling: 50,
  });
}

export async function textOf(page: Page): Promise<string> {
  return await page.$eval("main", (main) => (main as unknown as { innerText: string }).innerText);
}

export async function waitForText(page: Page, text: string, timeout = 10_000) {
  try {
    await page.waitForFunction(
      `document.querySelector("main")?.innerText.includes(${JSON.stringify(text)})`,
      { timeout, polling: 50 },
    );
  } catch (error) {
    throw new Error(`Waited for "${text}"; the page shows:\n${await textOf(page)}`, { cause: error });
  }
}

export async function heading(page: Page): Promise<string> {
  return await page.$eval("h1", (h1) => (h1 as unknown as { innerText: string }).innerText);
}

/**
 * The token and the ticket went nowhere but where they belong: the token only
 * in the body of the exchange, the ticket only in Authorization headers;
 * neither in a URL, a Referer or a console line; and the page loaded nothing
 * from another origin.
 */
export function assertSecretsStayed(
  tab: Tab,
  page: { origin: string; exchangePath: string },
  token: string,
  ticket?: string,
) {
  assertNotInUrls(tab.record, token, "the link token");
  if (ticket) assertNotInUrls(tab.record, ticket, "the page ticket");
  for (const request of tab.sent) {
    // A blank page, or a `data:` image the page drew from an answer (a QR code): nothing leaves the browser.
    if (request.url.startsWith("about:") || request.url.startsWith("data:")) continue;
    assert.ok(request.url.startsWith(`${page.origin}/`), `the page reached another origin: ${request.url}`);
    assert.ok(!request.headers.referer, `a Referer went with ${request.url}`);
    const exchange = request.method === "POST" && request.url === `${page.origin}${page.exchangePath}`;
    if (!exchange) assert.ok(!request.body.includes(token), `the token went in the body of ${request.url}`);
    for (const [name, value] of Object.entries(request.headers)) {
      assert.ok(!value.includes(token), `the token went in the ${name} header of ${request.url}`);
      if (ticket && name !== "authorization") {
        assert.ok(!value.includes(ticket), `the ticket went in the ${name} header of ${request.url}`);
      }
    }
    if (ticket) assert.ok(!request.body.includes(ticket), `the ticket went in the body of ${request.url}`);
  }
  for (const line of tab.console) {
    assert.ok(!line.includes(token) && !(ticket && line.includes(ticket)), "a secret reached the console");
  }
}

/** The refusals a step provoked on purpose are the only error answers the page saw. */
export function assertOnlyExpectedErrors(tab: Tab, allow: RegExp[]) {
  assertCleanPage(tab.record, [...allow, /Failed to load resource: the server responded with a status of 4\d\d/]);
}
