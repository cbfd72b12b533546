/**
 * What the payment page's browser tests share (browser_pay_test.ts for the
 * VENUE_B send, browser_checkout_test.ts for the on-chain checkout): each
 * state checked as a reviewer sees it, the ticket the tab keeps, a reload and
 * a Back onto the page, and where the secrets went.
 */
import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { checkState } from "../_helpers/axe.ts";
import { assertSecretsStayed, type Tab } from "../_helpers/page_tab.ts";
import type { TestEnv } from "../_helpers/env.ts";
import { assertActionInSight } from "../connect/browser_fixture.ts";

/**
 * The states one test file reaches, under tests/.screenshots/pay/<part>/
 * (emptied first, so a run leaves exactly the states it saw). `check` is a
 * state as a reviewer sees it: screenshots and axe at both widths, the main
 * action (else `fallback`, e.g. the way back) in sight on a 390×844 phone.
 */
export async function payScreens(part: string) {
  const group = `pay/${part}`;
  await Deno.remove(new URL(`../.screenshots/${group}/`, import.meta.url), { recursive: true }).catch(() => {});
  return async (page: Page, name: string, fallback?: string) => {
    await checkState(page, group, name);
    await assertActionInSight(page, name, fallback);
  };
}

/** The page ticket this tab holds (sessionStorage), watched in the service's log from now on. */
export async function watchTicket(env: TestEnv, tab: Tab): Promise<string> {
  const ticket = await storedTicket(tab);
  assert.ok(ticket, "the page keeps its ticket for a reload");
  env.watchedSecrets.add("page ticket", ticket);
  return ticket;
}

export async function storedTicket(tab: Tab): Promise<string | null> {
  return await tab.page.evaluate(`sessionStorage.getItem("pay-ticket")`) as string | null;
}

/** The link token and page ticket went only where they belong (tests/_helpers/page_tab.ts). */
export function secretsStayed(origin: string, tab: Tab, token: string, ticket?: string) {
  assertSecretsStayed(tab, { origin, exchangePath: "/pay/api/session" }, token, ticket);
}

async function loaded(page: Page) {
  await page.waitForFunction(`!document.querySelector("main")?.innerText.includes("Carregando")`, { polling: 50 });
}

/** The client reloads the page (the fragment is long gone from the address bar). */
export async function reload(tab: Tab) {
  await tab.page.reload({ waitUntil: "domcontentloaded" });
  await loaded(tab.page);
}

/** The client leaves the page (here for a blank one: the partner's site is not reachable in tests) and comes Back. */
export async function leaveAndComeBack(tab: Tab) {
  await tab.page.goto("about:blank");
  await tab.page.goBack({ waitUntil: "domcontentloaded" });
  await loaded(tab.page);
}
