/**
 * Renewing a VENUE_B agent on the hosted connect page, in headless Chromium:
 * a client already connected (through the page API, as connect_fixture.ts
 * does) opens a new CONNECT link. The page says it renews, names the current
 * end in Brasília time (or that the previous one expired), never who the
 * client is, and a wallet whose fee is already approved signs once: the new
 * agent replaces the old one. Every state: screenshots and axe-core at desktop
 * and phone, the main action in sight at 390×844.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { providerAccounts } from "../../db/schema.ts";
import { assertCleanPage, openBrowser } from "../_helpers/browser.ts";
import { injectWallet } from "../_helpers/eip1193_wallet.ts";
import { START } from "../_helpers/env.ts";
import { expectJson, operator } from "../_helpers/http.ts";
import { heading, newTab, open, textOf, waitForText } from "../_helpers/page_tab.ts";
import {
  clickButton,
  createLink,
  fundWallet,
  screens,
  secretsStayed,
  type Service,
  sessionState,
  venueBView,
  watchTicket,
  withService,
} from "./browser_fixture.ts";
import { connectWallet, openPage } from "./connect_fixture.ts";

const DAY = 86_400_000;
const MONTHS = [
  "janeiro",
  "fevereiro",
  "março",
  "abril",
  "maio",
  "junho",
  "julho",
  "agosto",
  "setembro",
  "outubro",
  "novembro",
  "dezembro",
];

/**
 * How the page must write `epochMs` in Brasília (UTC−3 all year since 2019),
 * worked out here by hand rather than with the browser's own formatter.
 */
function brasilia(epochMs: number): { date: string; time: string } {
  const local = new Date(epochMs - 3 * 3_600_000);
  const two = (n: number) => String(n).padStart(2, "0");
  return {
    date: `${local.getUTCDate()} de ${MONTHS[local.getUTCMonth()]} de ${local.getUTCFullYear()}`,
    time: `${two(local.getUTCHours())}:${two(local.getUTCMinutes())} (horário de Brasília)`,
  };
}

function assertSays(text: string, wanted: string[], unwanted: string[] = []) {
  for (const phrase of wanted) assert.ok(text.includes(phrase), `the page says "${phrase}":\n${text}`);
  for (const phrase of unwanted) assert.ok(!text.includes(phrase), `the page does not say "${phrase}":\n${text}`);
}

/** A funded wallet connected through the page API: its stored account. */
async function connectedWallet(service: Service, privateKey: Hex) {
  const wallet = privateKeyToAccount(privateKey);
  await fundWallet(service, wallet.address);
  await connectWallet((await openPage(service.env, service.partner)).request, wallet);
  const [account] = await service.env.deps.db.read.select().from(providerAccounts);
  assert.equal(account.connection, "CONNECTED");
  assert.ok(account.accessExpiresAt, "the agent's end is stored");
  return { wallet, account };
}

Deno.test("renewing a VENUE_B agent on the connect page in headless Chromium", async (t) => {
  const check = await screens("renewal");
  await using browser = await openBrowser();

  await t.step(
    "a connected client renews before the end: the current end in Brasília time, one signature, a new agent",
    () =>
      withService(async (service) => {
        const privateKey = generatePrivateKey();
        const { wallet, account } = await connectedWallet(service, privateKey);

        const tab = await newTab(browser, "phone");
        const { page } = tab;
        const browserWallet = await injectWallet(page, { privateKey });
        const link = await createLink(service, "VENUE_B");
        await open(tab, link.url);
        await waitForText(page, "Renove a autorização do agente");
        const ticket = await watchTicket(service, tab);
        assert.equal(await heading(page), "Renove a autorização do agente");
        assert.equal(await page.title(), "Renovar autorização do agente — Corretora Exemplo");
        const current = brasilia(account.accessExpiresAt!);
        const start = await textOf(page);
        assertSays(
          start,
          [
            `A autorização atual vale até ${current.date}`,
            current.time,
            "autoriza um novo agente, que substitui o atual",
            "Se a taxa da plataforma já estiver aprovada, é só uma assinatura",
          ],
          // Nothing about who the client is: a link forwarded to someone else tells them nothing.
          [wallet.address, wallet.address.toLowerCase(), "ana", "expirou"],
        );
        // A fresh QA test wallet would be another wallet, not a renewal of this one.
        assert.doesNotMatch(start, /Usar carteira de teste/);
        await check(page, "renewal-start");

        await clickButton(page, "Conectar carteira");
        await waitForText(page, "Confira antes de assinar");
        assert.equal(browserWallet.signed.length, 0);
        const review = await textOf(page);
        assertSays(review, ["Vale até", "(horário de Brasília)", "automation valid_until"], ["1 de 2"]);
        await check(page, "renewal-review");

        await clickButton(page, "Assinar na carteira");
        await waitForText(page, "Autorização renovada");
        assert.deepEqual(
          browserWallet.signed.map((entry) => entry.typedData.primaryType),
          ["HyperliquidTransaction:ApproveAgent"],
          "one signature: the fee approved at the first connection is not asked again",
        );
        const [renewed] = await service.env.deps.db.read.select().from(providerAccounts)
          .where(eq(providerAccounts.accountId, account.accountId));
        assert.notEqual(renewed.agentAddress, account.agentAddress, "a new agent");
        assert.equal(renewed.connection, "CONNECTED");
        const signedName = String(browserWallet.signed[0].typedData.message.agentName);
        assert.equal(signedName, `automation valid_until ${renewed.accessExpiresAt}`);
        const ended = brasilia(renewed.accessExpiresAt!);
        assertSays(await textOf(page), [
          "Sua conta Venue B continua conectada a Corretora Exemplo",
          `A autorização do agente vale até ${ended.date}`,
          ended.time,
        ]);
        assert.equal(await page.title(), "Autorização renovada — Corretora Exemplo");
        await check(page, "renewal-done");
        assert.equal((await sessionState(service, link)).status, "CONNECTED");
        assert.equal((await venueBView(service)).connection, "CONNECTED");
        secretsStayed(service, tab, link.token, ticket);
        assertCleanPage(tab.record);
      }),
  );

  await t.step(
    "an agent the venue already dropped: the page says the previous authorization expired, and one signature restores it",
    () =>
      withService(async (service) => {
        const privateKey = generatePrivateKey();
        const { account } = await connectedWallet(service, privateKey);
        // The venue prunes the agent at its end; the job, run past it, finds it gone: ACCESS_LOST.
        const removed = await fetch(`${service.env.venueUrls.venueB}/_control/agents/${account.agentAddress}`, {
          method: "DELETE",
        });
        assert.equal(removed.status, 200, await removed.text());
        service.env.clock.freeze(account.accessExpiresAt! + DAY);
        const run = await expectJson(await operator(service.env, "POST", "/operator/v1/jobs/access-expiry/run"), 200);
        assert.equal(run.summary.lapsed, 1);
        service.env.clock.freeze(START);
        assert.equal((await venueBView(service)).connection, "ACCESS_LOST");

        const tab = await newTab(browser);
        const { page } = tab;
        const browserWallet = await injectWallet(page, { privateKey });
        const link = await createLink(service, "VENUE_B");
        await open(tab, link.url);
        await waitForText(page, "Renove a autorização do agente");
        const ticket = await watchTicket(service, tab);
        assertSays(await textOf(page), ["A autorização anterior expirou"], ["A autorização atual vale até"]);
        await check(page, "renewal-lapsed-start");

        await clickButton(page, "Conectar carteira");
        await waitForText(page, "Confira antes de assinar");
        await clickButton(page, "Assinar na carteira");
        await waitForText(page, "Autorização renovada");
        assert.equal(browserWallet.signed.length, 1);
        await check(page, "renewal-lapsed-done");
        assert.equal((await venueBView(service)).connection, "CONNECTED");
        secretsStayed(service, tab, link.token, ticket);
        assertCleanPage(tab.record);
      }),
  );
});
