/**
 * The connect page's link states in headless Chromium: the countdown that
 * ends the screen by itself, a link that expired while open or before, an
 * unknown, malformed or incomplete link, the same link in two tabs, a link
 * replaced by a newer one, and a reload after each end. Every state:
 * screenshots and axe-core at desktop and phone, the main action in sight at
 * 390×844.
 */
import assert from "node:assert/strict";
import { openBrowser } from "../_helpers/browser.ts";
import { assertOnlyExpectedErrors, heading, newTab, open, textOf, waitForText } from "../_helpers/page_tab.ts";
import {
  backLink,
  createLink,
  RETURN_URL,
  screens,
  secretsStayed,
  simulatorKey,
  submitKey,
  watchTicket,
  withService,
} from "./browser_fixture.ts";

const MINUTE = 60_000;

Deno.test("the connect page's link states in headless Chromium", async (t) => {
  const check = await screens("states");
  await using browser = await openBrowser();

  await t.step(
    "the countdown reaches zero: the page ends by itself; a reload shows the expiry again",
    () =>
      withService(async (service) => {
        const tab = await newTab(browser, "phone");
        const { page } = tab;
        const link = await createLink(service, "VENUE_A");
        service.env.clock.freeze(service.env.clock.now() + 15 * MINUTE - 3_000);
        await open(tab, link.url);
        await waitForText(page, "Este link vale por mais 0:0");
        const ticket = await watchTicket(service, tab);
        await waitForText(page, "passou dos 15 minutos");
        assert.equal(await heading(page), "Link expirado");
        assert.equal(await backLink(page), RETURN_URL);
        assert.equal(await page.title(), "Link expirado — Corretora Exemplo");
        await check(page, "link-expired-by-countdown");

        service.env.clock.freeze(service.env.clock.now() + 3_000);
        await page.reload({ waitUntil: "domcontentloaded" });
        await waitForText(page, "passou dos 15 minutos");
        assert.equal(await backLink(page), RETURN_URL, "the session's read still names the way back");
        secretsStayed(service, tab, link.token, ticket);
        assertOnlyExpectedErrors(tab, []);
      }),
  );

  await t.step(
    "expired while open, expired before opening, unknown, malformed, incomplete",
    () =>
      withService(async (service) => {
        const tab = await newTab(browser);
        const { page } = tab;
        const link = await createLink(service, "VENUE_A");
        await open(tab, link.url);
        await waitForText(page, "Conecte sua conta");
        const ticket = await watchTicket(service, tab);
        service.env.clock.freeze(service.env.clock.now() + 15 * MINUTE);
        await submitKey(page, await simulatorKey(service));
        await waitForText(page, "A sessão de conexão expirou");
        assert.equal(await heading(page), "Link expirado");
        assert.equal(await backLink(page), RETURN_URL);
        await check(page, "link-expired-while-open");

        const late = await createLink(service, "VENUE_A");
        service.env.clock.freeze(service.env.clock.now() + 15 * MINUTE);
        await open(tab, late.url);
        await waitForText(page, "A sessão de conexão expirou");
        assert.equal(await heading(page), "Link expirado");
        await check(page, "link-expired");

        await open(tab, `${service.origin}/connect#t=${"A".repeat(43)}`);
        await waitForText(page, "Este link de conexão não é válido");
        assert.equal(await heading(page), "Link inválido");
        assert.equal(await page.title(), "Link inválido");
        await check(page, "link-invalid");

        await open(tab, `${service.origin}/connect#t=short`);
        await waitForText(page, "incompleto ou foi alterado");
        assert.equal(await heading(page), "Link inválido");
        await check(page, "link-malformed");

        await open(tab, `${service.origin}/connect`);
        await waitForText(page, "Abra o link completo");
        assert.equal(await heading(page), "Link incompleto");
        await check(page, "link-incomplete");

        secretsStayed(service, tab, link.token, ticket);
        secretsStayed(service, tab, late.token);
        assertOnlyExpectedErrors(tab, [
          /409 POST .*\/connect\/api\/(api-key|session)/,
          /404 POST .*\/connect\/api\/session/,
        ]);
      }),
  );

  await t.step(
    "the same link in two tabs: the first says it was opened elsewhere; a newer link replaces this one",
    () =>
      withService(async (service) => {
        const first = await newTab(browser, "phone");
        const link = await createLink(service, "VENUE_A");
        await open(first, link.url);
        await waitForText(first.page, "Conecte sua conta");
        const firstTicket = await watchTicket(service, first);

        const second = await newTab(browser, "phone");
        await open(second, link.url);
        await waitForText(second.page, "Conecte sua conta");
        const secondTicket = await watchTicket(service, second);

        await first.page.bringToFront();
        await submitKey(first.page, await simulatorKey(service));
        await waitForText(first.page, "Este link foi aberto em outra aba ou aparelho");
        assert.equal(await heading(first.page), "Link aberto em outra aba");
        const text = await textOf(first.page);
        assert.match(text, /Continue por lá/);
        assert.match(text, /abra de novo o link que você recebeu/);
        assert.doesNotMatch(text, /inválido/);
        assert.equal(await backLink(first.page), RETURN_URL);
        await check(first.page, "link-opened-elsewhere");

        // The partner creates a newer link: this one is replaced, and a reload says so.
        await createLink(service, "VENUE_A");
        await second.page.bringToFront();
        await second.page.reload({ waitUntil: "domcontentloaded" });
        await waitForText(second.page, "Um link de conexão mais novo foi criado");
        assert.equal(await heading(second.page), "Link substituído ou encerrado");
        await check(second.page, "link-replaced");

        secretsStayed(service, first, link.token, firstTicket);
        secretsStayed(service, second, link.token, secondTicket);
        assertOnlyExpectedErrors(first, [/409 POST .*\/connect\/api\/api-key/]);
        assertOnlyExpectedErrors(second, []);
      }),
  );
});
