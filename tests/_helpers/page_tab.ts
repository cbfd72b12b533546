/**
 * A browser tab for hosted-page tests: what it sent (URLs, bodies, headers)
 * and logged, opening a link as a client would, and reading the page.
 */
import type { HTTPRequest, Page } from "puppeteer-core";
import type { PageRecord, TestBrowser, ViewportName } from "./browser.ts";

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
