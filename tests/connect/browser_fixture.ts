/**
 * What the connect page's browser tests share: a service on a real HTTP
 * origin (CONNECT_URL pointing at it, so the page opens from the very link the
 * partner API answers), links, simulator keys and wallets, and the page
 * helpers: clicking by label, pasting, the ticket a tab holds, and a state
 * checked as a reviewer would (screenshot and axe-core at desktop and phone,
 * the main action in sight at 390×844 without scrolling).
 *
 * Where the link token goes is checked on every page (secretsStayed): never in
 * a request URL, a header or a console line, in a request body only in the
 * exchange, and never in the service's log (env.close() scans it for the
 * token, the page ticket and the API secrets).
 */
import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { checkState } from "../_helpers/axe.ts";
import { emulate, viewportOf } from "../_helpers/browser.ts";
import { startServedTestEnv, type TestEnv } from "../_helpers/env.ts";
import { call, createPartner, expectJson, type TestPartner } from "../_helpers/http.ts";
import { assertSecretsStayed, type Tab, textOf } from "../_helpers/page_tab.ts";

export const RETURN_URL = "https://app.partner.example/volta";

export interface Service {
  env: TestEnv;
  partner: TestPartner;
  origin: string;
  close(): Promise<void>;
}

/**
 * Partner "Corretora Exemplo" (overrides apply) with its client "ana", behind a
 * real HTTP server configured with `serviceEnv` (e.g. EGRESS_ADDRESSES).
 */
async function startService(
  partnerOverrides: Record<string, unknown> = {},
  serviceEnv: Record<string, string> = {},
): Promise<Service> {
  const { env, origin, close } = await startServedTestEnv({ env: serviceEnv });
  const partner = await createPartner(env, { name: "Corretora Exemplo", ...partnerOverrides });
  await expectJson(
    await partner.call("POST", "/v1/users", {
      body: { externalUserId: "ana" },
      headers: { "idempotency-key": "ana-00001" },
    }),
    201,
  );
  return { env, partner, origin, close };
}

export async function withService(
  work: (service: Service) => Promise<void>,
  partnerOverrides: Record<string, unknown> = {},
  serviceEnv: Record<string, string> = {},
): Promise<void> {
  const service = await startService(partnerOverrides, serviceEnv);
  try {
    await work(service);
  } finally {
    await service.close();
  }
}

export interface Link {
  url: string;
  token: string;
  sessionId: string;
}

/** A connect session through the partner API; its token is watched in the service's log. */
export async function createLink(
  service: Service,
  providerId: "VENUE_A" | "VENUE_B",
  { purpose = "CONNECT", returnUrl = RETURN_URL as string | null } = {},
): Promise<Link> {
  const body = { providerId, purpose, ...(returnUrl ? { returnUrl } : {}) };
  const session = await expectJson(await service.partner.call("POST", "/v1/users/ana/connect-sessions", { body }), 201);
  const url = session.connectUrl as string;
  assert.ok(url.startsWith(`${service.origin}/connect#t=`), url);
  const token = url.split("#t=")[1];
  service.env.watchedSecrets.add("connect token", token);
  return { url, token, sessionId: session.sessionId };
}

export async function sessionState(service: Service, link: Link) {
  return await expectJson(await service.partner.call("GET", `/v1/users/ana/connect-sessions/${link.sessionId}`), 200);
}

export async function simulatorKey(service: Service, options: Record<string, unknown> = {}) {
  const response = await fetch(`${service.env.venueUrls.venueA}/_control/accounts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ balances: { USDT: "1000" }, ...options }),
  });
  assert.equal(response.status, 200);
  const keys = await response.json() as { apiKey: string; apiSecret: string };
  service.env.watchedSecrets.add("apiSecret", keys.apiSecret);
  return keys;
}

export async function fundWallet(service: Service, address: string) {
  const response = await fetch(`${service.env.venueUrls.venueB}/_control/wallets`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ address, usdc: "10000" }),
  });
  assert.equal(response.status, 200);
  await response.body?.cancel();
}

export async function venueBView(service: Service) {
  const body = await expectJson(await service.partner.call("GET", "/v1/users/ana/providers"), 200);
  return body.providers.find((provider: { providerId: string }) => provider.providerId === "VENUE_B");
}

/** The session as the page's ticket reads it. */
export async function pageSession(service: Service, ticket: string) {
  const body = await expectJson(
    await call(service.env, "GET", "/connect/api/session", { headers: { authorization: `Bearer ${ticket}` } }),
    200,
  );
  return body.session;
}

// ------------------------------------------------------------------ the page

/** The element with the focus, as `tag#id` or `tag`. */
export async function focused(page: Page): Promise<string> {
  return await page.evaluate(
    `(() => { const e = document.activeElement; return e.tagName.toLowerCase() + (e.id ? "#" + e.id : ""); })()`,
  ) as string;
}

export async function backLink(page: Page): Promise<string | null> {
  return await page.$eval("main", (main) => {
    const link = (main as unknown as { querySelector(s: string): { href: string } | null }).querySelector("a.back");
    return link?.href ?? null;
  });
}

export async function clickButton(page: Page, label: string) {
  const buttons = await page.$$("main button");
  for (const button of buttons) {
    const text = await button.evaluate((node) => (node as unknown as { textContent: string }).textContent);
    if (text.trim() === label) return await button.click();
  }
  throw new Error(`No button "${label}"; the page shows:\n${await textOf(page)}`);
}

/** Pastes `value` into a field, as a client pastes a key copied from the exchange. */
export async function paste(page: Page, selector: string, value: string) {
  await page.focus(selector);
  await page.$eval(selector, (input, text) => {
    const field = input as unknown as { value: string; dispatchEvent(event: unknown): void };
    field.value = text as string;
    field.dispatchEvent(new (globalThis as unknown as { Event: new (type: string) => unknown }).Event("input"));
  }, value);
}

export async function submitKey(page: Page, keys: { apiKey: string; apiSecret: string }, label = "Conectar conta") {
  await paste(page, "#api-key", keys.apiKey);
  await paste(page, "#api-secret", keys.apiSecret);
  await clickButton(page, label);
}

/** The page ticket this tab holds (sessionStorage), watched in the service's log from now on. */
export async function watchTicket(service: Service, tab: Tab): Promise<string> {
  const ticket = await tab.page.evaluate(`sessionStorage.getItem("connect-ticket")`) as string | null;
  assert.ok(ticket, "the page keeps its ticket for a reload");
  service.env.watchedSecrets.add("page ticket", ticket);
  return ticket;
}

/** A field's error: its text, and that the field points to it (aria-invalid, aria-describedby). */
export async function fieldError(page: Page, id: string): Promise<string | null> {
  return await page.evaluate((fieldId: string) => {
    const doc = (globalThis as unknown as {
      document: { getElementById(id: string): { getAttribute(n: string): string | null; textContent: string } | null };
    }).document;
    const input = doc.getElementById(fieldId)!;
    const error = doc.getElementById(`${fieldId}-error`);
    if (!error) return null;
    if (input.getAttribute("aria-invalid") !== "true") return "aria-invalid missing";
    if (!(input.getAttribute("aria-describedby") ?? "").split(" ").includes(`${fieldId}-error`)) {
      return "aria-describedby missing";
    }
    return error.textContent;
  }, id);
}

/**
 * The screen fits a 390×844 phone: nothing wider than the screen, and its
 * main action in sight with the page scrolled to the top: the primary button
 * of the action bar, else `fallback` (a final screen's way back, the wallet
 * links).
 */
export async function assertActionInSight(page: Page, name: string, fallback = "a.back") {
  const before = viewportOf(page);
  await emulate(page, "phone");
  await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
  const width = await page.evaluate("document.documentElement.scrollWidth") as number;
  const box = await page.evaluate((other: string) => {
    const doc = (globalThis as unknown as {
      document: {
        querySelector(s: string): { getBoundingClientRect(): { top: number; bottom: number } } | null;
      };
    }).document;
    const action = doc.querySelector(".action-bar .button") ?? doc.querySelector(other);
    if (!action) return null;
    const rect = action.getBoundingClientRect();
    return { top: rect.top, bottom: rect.bottom };
  }, fallback);
  if (before !== "phone") await emulate(page, before);
  assert.ok(width <= 390, `${name}: the page is ${width} px wide on a 390 px phone`);
  if (!box) return;
  assert.ok(
    box.top >= 0 && box.bottom <= 844,
    `${name}: the main action is at ${box.top}-${box.bottom} px of 844`,
  );
}

/**
 * The states one test file reaches, under tests/.screenshots/connect/<part>/
 * (emptied first, so a run leaves exactly the states it saw). `check` is a
 * state as a reviewer sees it: screenshots and axe at both widths, the main
 * action in sight on the phone.
 */
export async function screens(part: string) {
  const group = `connect/${part}`;
  await Deno.remove(new URL(`../.screenshots/${group}/`, import.meta.url), { recursive: true }).catch(() => {});
  return async (page: Page, name: string, fallback?: string) => {
    await checkState(page, group, name);
    await assertActionInSight(page, name, fallback);
  };
}

/** The link token and page ticket went only where they belong (tests/_helpers/page_tab.ts). */
export const secretsStayed = (service: Service, tab: Tab, token: string, ticket?: string) =>
  assertSecretsStayed(tab, { origin: service.origin, exchangePath: "/connect/api/session" }, token, ticket);
