/**
 * The hosted connect page's VENUE_A flow in headless Chromium, against the
 * real service and the venue simulator: the instructions with the service's
 * IPs, field errors, a key the venue rejects (an attempt), a settings refusal
 * fixed at the exchange (no attempt, the key kept), the warnings after
 * connecting, a reload and the spent link, the QA test account on a phone,
 * and the fifth refusal. Every state: screenshots and axe-core at desktop and
 * phone, the main action in sight at 390×844.
 */
import assert from "node:assert/strict";
import { assertCleanPage, openBrowser } from "../_helpers/browser.ts";
import { assertOnlyExpectedErrors, heading, newTab, open, textOf, waitForText } from "../_helpers/page_tab.ts";
import { switchToOneWay } from "./connect_fixture.ts";
import {
  backLink,
  clickButton,
  createLink,
  fieldError,
  focused,
  paste,
  RETURN_URL,
  screens,
  secretsStayed,
  sessionState,
  simulatorKey,
  submitKey,
  watchTicket,
  withService,
} from "./browser_fixture.ts";

const EGRESS = ["203.0.113.7", "2001:db8::7"];

Deno.test("the connect page's VENUE_A flow in headless Chromium", async (t) => {
  const check = await screens("api_key");
  await using browser = await openBrowser();

  await t.step(
    "instructions with the service's IPs, field errors, a rejected key, a settings refusal fixed, the warnings, reload, the spent link",
    () =>
      withService(
        async (service) => {
          const tab = await newTab(browser);
          const { page } = tab;
          const link = await createLink(service, "VENUE_A");
          await open(tab, link.url);
          assert.equal(new URL(page.url()).hash, "", "the fragment left the address bar");
          await waitForText(page, "Conecte sua conta");
          const ticket = await watchTicket(service, tab);
          assert.equal(await page.title(), "Conectar conta Venue A — Corretora Exemplo");
          const text = await textOf(page);
          for (
            const wanted of [
              "Solicitado por Corretora Exemplo",
              "Este link vale por mais 15:00",
              "HMAC (o tipo comum",
              "saques desativados",
              "IPs do serviço",
              ...EGRESS,
              "One-way) (uma só posição por moeda",
              "Multi-Assets (margem compartilhada",
              "margem isolada",
            ]
          ) assert.ok(text.includes(wanted), `the page says "${wanted}":\n${text}`);
          assert.equal((await page.$$("::-p-aria(Copiar IP do serviço)")).length, 2);
          assert.equal(await focused(page), "h1", "the screen's heading has the focus");
          // The countdown runs.
          await waitForText(page, "14:5");
          await check(page, "a-form");

          await clickButton(page, "Conectar conta");
          assert.equal(await fieldError(page, "api-key"), "Cole a API Key.");
          assert.equal(await fieldError(page, "api-secret"), "Cole a Secret Key.");
          assert.equal(await focused(page), "input#api-key");
          await check(page, "a-fields-empty");

          // The server's check, next to its field, in plain words.
          await submitKey(page, { apiKey: "abc", apiSecret: "s".repeat(20) });
          await page.waitForSelector("#api-key-error");
          assert.equal(
            await fieldError(page, "api-key"),
            "A API Key parece incompleta. Copie de novo a API Key inteira na corretora e cole aqui.",
          );
          assert.equal(await fieldError(page, "api-secret"), null);
          await check(page, "a-field-refused");
          // Typing clears the field's error.
          await paste(page, "#api-key", "abcd");
          assert.equal(await fieldError(page, "api-key"), null);

          const wrong = await simulatorKey(service);
          await submitKey(page, { apiKey: wrong.apiKey, apiSecret: "x".repeat(64) });
          await waitForText(page, "Restam 4 tentativas");
          assert.match(
            await textOf(page),
            /A Venue A recusou a chave. Confira se copiou a API Key e a Secret Key inteiras/,
          );
          assert.equal(await page.$eval("#api-secret", (input) => (input as unknown as { value: string }).value), "");
          await check(page, "a-refused-wrong-key");

          // Hedge mode: the exact fix, the key kept, no attempt; fixed at the exchange, the same key connects.
          const hedge = await simulatorKey(service, { dualSidePosition: true, canWithdraw: true, ipRestrict: false });
          await submitKey(page, hedge);
          await waitForText(page, "A chave está certa, mas a conta ainda não pode operar");
          const refusal = await textOf(page);
          assert.match(refusal, /Modo unidirecional \(One-way\)/);
          assert.match(refusal, /isso não gasta tentativa/);
          assert.match(refusal, /clique em “Testar de novo”/, "a desktop is clicked, not touched");
          assert.doesNotMatch(refusal, /Restam/);
          assert.equal(
            await page.$eval("#api-secret", (input) => (input as unknown as { value: string }).value),
            hedge.apiSecret,
          );
          await check(page, "a-refused-settings");
          const pending = await sessionState(service, link);
          assert.equal(pending.failureCode, "ACCOUNT_SETTINGS_INVALID");
          await switchToOneWay(service.env, hedge);
          await clickButton(page, "Testar de novo");
          await waitForText(page, "Conta conectada");
          const connected = await textOf(page);
          assert.match(connected, /Esta chave permite saques/);
          assert.match(connected, /Esta chave não está restrita a um IP/);
          for (const address of EGRESS) assert.ok(connected.includes(address), "the warning shows the IPs");
          assert.equal(await backLink(page), RETURN_URL);
          assert.equal(await page.title(), "Conta conectada — Corretora Exemplo");
          await check(page, "a-connected-warnings");
          const state = await sessionState(service, link);
          assert.equal(state.status, "CONNECTED");

          // A reload (or Back) shows the outcome again, with the way back.
          await page.reload({ waitUntil: "domcontentloaded" });
          await waitForText(page, "Conta conectada");
          assert.equal(await backLink(page), RETURN_URL);
          await check(page, "a-connected-reloaded");

          // The partner's link again, in a fresh load: the account is already connected.
          await open(tab, link.url);
          await waitForText(page, "sua conta Venue A já está conectada a Corretora Exemplo");
          assert.equal(await heading(page), "Conta já conectada");
          assert.equal(await backLink(page), RETURN_URL);
          await check(page, "a-link-already-used");

          secretsStayed(service, tab, link.token, ticket);
          assertOnlyExpectedErrors(tab, [
            /400 POST .*\/connect\/api\/api-key/,
            /422 POST .*\/connect\/api\/api-key/,
            /409 POST .*\/connect\/api\/session/,
          ]);
        },
        {},
        { EGRESS_ADDRESSES: EGRESS.join(",") },
      ),
  );

  await t.step(
    "on a phone: no IPs configured (no IP step, a warning without one), the QA test account fills the form, no returnUrl",
    () =>
      withService(async (service) => {
        const tab = await newTab(browser, "phone");
        const { page } = tab;
        const link = await createLink(service, "VENUE_A", { returnUrl: null });
        await open(tab, link.url);
        await waitForText(page, "Usar conta de teste");
        const ticket = await watchTicket(service, tab);
        const text = await textOf(page);
        assert.doesNotMatch(text, /IP do serviço|IPs do serviço/);
        assert.equal(await page.$eval("details.card", (node) => (node as unknown as { open: boolean }).open), false);
        assert.equal(await backLink(page), null);
        await check(page, "a-phone-form");
        await clickButton(page, "Usar conta de teste");
        await waitForText(page, "Conta de teste criada");
        assert.match(await textOf(page), /Toque em Conectar conta/, "a phone is touched");
        const filled = await page.$$eval(
          "input",
          (inputs) => inputs.map((i) => (i as unknown as { value: string }).value),
        );
        assert.ok(filled.every((value) => value.length >= 16), "both fields are filled");
        service.env.watchedSecrets.add("apiSecret", filled[1]);
        await check(page, "a-test-account-filled");
        // The test account's key is restricted to an IP; a key that is not gets the warning, here without an IP.
        await submitKey(page, await simulatorKey(service, { ipRestrict: false }));
        await waitForText(page, "Conta conectada");
        assert.match(await textOf(page), /Você já pode fechar esta página/);
        assert.match(await textOf(page), /Quem tiver a chave e o segredo/, "no IP to name: the warning says so");
        await check(page, "a-phone-connected");
        assert.equal(await page.evaluate("document.documentElement.scrollWidth <= innerWidth"), true);
        secretsStayed(service, tab, link.token, ticket);
        assertCleanPage(tab.record);
      }),
  );

  await t.step(
    "the fifth refusal ends the link; the link again says the attempts are over",
    () =>
      withService(async (service) => {
        const tab = await newTab(browser);
        const { page } = tab;
        const link = await createLink(service, "VENUE_A");
        await open(tab, link.url);
        await waitForText(page, "Conecte sua conta");
        const ticket = await watchTicket(service, tab);
        const wrong = await simulatorKey(service);
        for (let attempt = 1; attempt <= 4; attempt++) {
          await submitKey(page, { apiKey: wrong.apiKey, apiSecret: `${attempt}`.repeat(64) });
          await waitForText(page, attempt === 4 ? "Resta 1 tentativa." : `Restam ${5 - attempt} tentativas.`);
        }
        await check(page, "a-last-attempt");
        await submitKey(page, { apiKey: wrong.apiKey, apiSecret: "5".repeat(64) });
        await waitForText(page, "As tentativas deste link acabaram");
        assert.equal(await heading(page), "Tentativas esgotadas");
        assert.equal(await page.$("form"), null, "no form to try again");
        assert.equal(await backLink(page), RETURN_URL);
        await check(page, "a-fifth-refusal");
        assert.equal((await sessionState(service, link)).status, "FAILED");
        await page.reload({ waitUntil: "domcontentloaded" });
        await waitForText(page, "As tentativas deste link acabaram");
        assert.equal(await backLink(page), RETURN_URL);
        await check(page, "a-failed-reloaded");

        await open(tab, link.url);
        await waitForText(page, "Tentativas esgotadas para este link");
        assert.equal(await heading(page), "Tentativas esgotadas");
        await check(page, "a-sixth-attempt");
        secretsStayed(service, tab, link.token, ticket);
        assertOnlyExpectedErrors(tab, [/400 POST .*\/connect\/api\/api-key/, /409 POST .*\/connect\/api\/session/]);
      }),
  );
});
