/**
 * The hosted connect page's VENUE_B flow in headless Chromium: a browser
 * wallet (EIP-1193, signing real EIP-712 typed data) shown what it will sign
 * before it opens (agent and its end, builder, fee on the notional, how to revoke),
 * cancels that cost nothing, a wrong wallet named, a wallet that never
 * deposited, and a phone with no wallet that carries a single-use handoff
 * link into a wallet's browser (deep links, copy, QR on a desktop). Every
 * state: screenshots and axe-core at desktop and phone, the main action in
 * sight at 390×844.
 */
import assert from "node:assert/strict";
import { getAddress } from "viem";
import { generatePrivateKey } from "viem/accounts";
import { assertCleanPage, openBrowser } from "../_helpers/browser.ts";
import { injectWallet } from "../_helpers/eip1193_wallet.ts";
import { assertOnlyExpectedErrors, heading, newTab, open, textOf, waitForText } from "../_helpers/page_tab.ts";
import {
  backLink,
  clickButton,
  createLink,
  fundWallet,
  pageSession,
  RETURN_URL,
  screens,
  secretsStayed,
  sessionState,
  venueBView,
  watchTicket,
  withService,
} from "./browser_fixture.ts";

/** The hrefs of the wallet buttons, by wallet name. */
async function walletLinks(page: import("puppeteer-core").Page): Promise<Record<string, string>> {
  const pairs = await page.$$eval(
    ".wallet-links a",
    (links) =>
      links.map((link) => [(link as unknown as { textContent: string }).textContent, link.getAttribute("href")]),
  );
  return Object.fromEntries(pairs);
}

Deno.test("the connect page's VENUE_B flow in headless Chromium", async (t) => {
  const check = await screens("wallet");
  await using browser = await openBrowser();

  await t.step(
    "the wallet is shown what it signs before it opens; cancels are no attempt; a reload shows the connection; a wrong wallet is named",
    () =>
      withService(async (service) => {
        const tab = await newTab(browser);
        const { page } = tab;
        const wallet = await injectWallet(page, { privateKey: generatePrivateKey() });
        await fundWallet(service, wallet.address);
        const link = await createLink(service, "VENUE_B");
        await open(tab, link.url);
        await waitForText(page, "Conectar carteira");
        const ticket = await watchTicket(service, tab);
        assert.equal(await page.title(), "Conectar carteira Venue B — Corretora Exemplo");
        const builder = getAddress(service.env.deps.config.venueBBuilderAddress);
        const start = await textOf(page);
        for (
          const wanted of [
            "Este link vale por mais",
            "não pode sacar nem transferir",
            "até 0,025% do valor de cada operação (o notional: tamanho × preço)",
            "builder: quem envia suas ordens",
            "agente",
            "Para revogar depois",
            builder,
          ]
        ) assert.ok(start.includes(wanted), `the page says "${wanted}":\n${start}`);
        await check(page, "b-start");

        wallet.rejectNext("accounts");
        await clickButton(page, "Conectar carteira");
        await waitForText(page, "Conexão cancelada na carteira");
        await check(page, "b-connection-cancelled");

        // Connected: the page shows the agent and the builder first; the wallet has signed nothing yet.
        await clickButton(page, "Conectar carteira");
        await waitForText(page, "Confira antes de assinar");
        assert.equal(wallet.signed.length, 0);
        const review = await textOf(page);
        assert.match(review, /Agente “automation”/);
        assert.ok(review.includes(wallet.address), "the wallet, in checksum casing");
        assert.ok(review.includes(builder));
        assert.match(review, /Taxa máxima: 0,025% do valor \(notional\) de cada operação/);
        assert.match(review, /remova o agente “automation”/);
        // The agent's end, in Brasília time, and the name the wallet will show, whose number is that end.
        assert.match(review, /Vale até \d{1,2} de [a-zç]+ de \d{4}.*\d{2}:\d{2} \(horário de Brasília\)/);
        assert.match(review, /a Venue B remove o agente e Corretora Exemplo envia um novo link para renovar/);
        const shownName = await page.$eval(
          ".review .agent-name",
          (code) => (code as unknown as { textContent: string }).textContent,
        );
        const agentAddress = await page.$$eval(
          ".review code",
          (codes) => codes.map((code) => (code as unknown as { textContent: string }).textContent),
        );
        await check(page, "b-review-agent");

        wallet.rejectNext("signature");
        await clickButton(page, "Assinar na carteira (1 de 2)");
        await waitForText(page, "Assinatura cancelada na carteira");
        assert.match(await textOf(page), /não conta como tentativa/);
        await check(page, "b-signature-cancelled");
        assert.equal((await pageSession(service, ticket)).attemptsLeft, 5, "a cancel in the wallet is not an attempt");

        await clickButton(page, "Assinar na carteira (1 de 2)");
        await waitForText(page, "Assinar na carteira (2 de 2)");
        assert.equal(wallet.signed[0].typedData.primaryType, "HyperliquidTransaction:ApproveAgent");
        assert.equal(
          getAddress(String(wallet.signed[0].typedData.message.agentAddress)),
          agentAddress[1],
          "the agent shown is the agent signed",
        );
        assert.equal(wallet.signed[0].typedData.message.agentName, shownName, "the name shown is the name signed");
        assert.match(String(shownName), /^automation valid_until \d{13}$/);
        assert.match(await textOf(page), /Aprove a taxa da plataforma de até 0,025% por operação/);
        await check(page, "b-review-builder");

        await clickButton(page, "Assinar na carteira (2 de 2)");
        await waitForText(page, "Conta conectada");
        assert.equal(wallet.signed[1].typedData.message.maxFeeRate, "0.025%");
        assert.ok((await textOf(page)).includes(wallet.address));
        assert.equal(await page.title(), "Conta conectada — Corretora Exemplo");
        await check(page, "b-connected");
        const state = await sessionState(service, link);
        assert.equal(state.status, "CONNECTED");
        assert.equal(state.failureCode, null, "a cancel in the wallet is not a refusal");
        assert.equal((await venueBView(service)).builder.approvalStatus, "APPROVED");

        await page.reload({ waitUntil: "domcontentloaded" });
        await waitForText(page, "Conta conectada");
        assert.equal(await backLink(page), RETURN_URL);
        secretsStayed(service, tab, link.token, ticket);
        assertCleanPage(tab.record);

        // BUILDER_APPROVAL with another wallet than the connected one: named, and no attempt.
        const strangerTab = await newTab(browser, "phone");
        await injectWallet(strangerTab.page, { privateKey: generatePrivateKey() });
        const builderLink = await createLink(service, "VENUE_B", { purpose: "BUILDER_APPROVAL" });
        await open(strangerTab, builderLink.url);
        await waitForText(strangerTab.page, "Aprove a taxa da plataforma");
        assert.doesNotMatch(await textOf(strangerTab.page), /Usar carteira de teste/);
        assert.equal(await strangerTab.page.title(), "Aprovar taxa da plataforma — Corretora Exemplo");
        await check(strangerTab.page, "b-builder-approval-start");
        await clickButton(strangerTab.page, "Conectar carteira e aprovar");
        await waitForText(strangerTab.page, `Conecte a carteira ${wallet.address}`);
        assert.doesNotMatch(await textOf(strangerTab.page), /Restam/);
        await check(strangerTab.page, "b-wallet-mismatch");
        const mismatch = await sessionState(service, builderLink);
        assert.equal(mismatch.failureCode, "WALLET_MISMATCH");
        const strangerTicket = await watchTicket(service, strangerTab);
        assert.equal((await pageSession(service, strangerTicket)).attemptsLeft, 5);
        secretsStayed(service, strangerTab, builderLink.token, strangerTicket);
        assertOnlyExpectedErrors(strangerTab, [/403 POST .*\/connect\/api\/wallet\/start/]);

        // The connected wallet, whose approval already covers the fee: nothing to sign.
        await open(tab, builderLink.url);
        await clickButton(page, "Conectar carteira e aprovar");
        await waitForText(page, "Taxa aprovada");
        assert.equal(wallet.signed.length, 2);
        await check(page, "b-builder-fee-approved");
        await page.reload({ waitUntil: "domcontentloaded" });
        await waitForText(page, "A taxa da plataforma foi aprovada");
        await check(page, "b-builder-fee-approved-reloaded");
      }),
  );

  await t.step(
    "a wallet that never deposited is told to deposit first, costing no attempt",
    () =>
      withService(async (service) => {
        const tab = await newTab(browser, "phone");
        const { page } = tab;
        const wallet = await injectWallet(page, { privateKey: generatePrivateKey() });
        const link = await createLink(service, "VENUE_B");
        await open(tab, link.url);
        await clickButton(page, "Conectar carteira");
        await waitForText(page, "Assinar na carteira (1 de 2)");
        await clickButton(page, "Assinar na carteira (1 de 2)");
        await waitForText(page, "Deposite USDC na Venue B com esta carteira");
        const text = await textOf(page);
        assert.match(text, /Carteira sem conta na corretora/);
        assert.ok(text.includes(wallet.address));
        assert.doesNotMatch(text, /Restam/);
        await check(page, "b-wallet-not-on-venue");
        const ticket = await watchTicket(service, tab);
        assert.equal((await pageSession(service, ticket)).attemptsLeft, 5);

        // Deposited, the same link connects.
        await fundWallet(service, wallet.address);
        await clickButton(page, "Conectar carteira");
        await waitForText(page, "Assinar na carteira (1 de 2)");
        await clickButton(page, "Assinar na carteira (1 de 2)");
        await waitForText(page, "Assinar na carteira (2 de 2)");
        await clickButton(page, "Assinar na carteira (2 de 2)");
        await waitForText(page, "Conta conectada");
        secretsStayed(service, tab, link.token, ticket);
        assertOnlyExpectedErrors(tab, [/422 POST .*\/connect\/api\/wallet\/sign/]);
      }),
  );

  await t.step(
    "a phone with no wallet carries a single-use link into a wallet's browser; this tab then says it was opened elsewhere",
    () =>
      withService(async (service) => {
        const tab = await newTab(browser, "phone");
        const { page } = tab;
        const link = await createLink(service, "VENUE_B");
        await open(tab, link.url);
        await waitForText(page, "Abra este link na sua carteira");
        const ticket = await watchTicket(service, tab);
        const links = await walletLinks(page);
        assert.deepEqual(Object.keys(links), ["MetaMask", "Trust Wallet", "Coinbase Wallet", "OKX Wallet"]);
        const host = new URL(service.origin).host;
        const metamask = links["MetaMask"];
        assert.ok(metamask.startsWith(`https://link.metamask.io/dapp/${host}/connect#t=`), metamask);
        const handoff = `${service.origin}/connect#t=${metamask.split("#t=")[1]}`;
        const handoffToken = handoff.split("#t=")[1];
        service.env.watchedSecrets.add("handoff token", handoffToken);
        assert.notEqual(handoffToken, link.token, "never the partner's link token");
        assert.equal(links["Trust Wallet"], `trust://open_url?coin_id=60&url=${encodeURIComponent(handoff)}`);
        assert.equal(links["Coinbase Wallet"], `https://go.cb-w.com/dapp?cb_url=${encodeURIComponent(handoff)}`);
        assert.equal(links["OKX Wallet"], `okx://wallet/dapp/url?dappUrl=${encodeURIComponent(handoff)}`);
        const text = await textOf(page);
        assert.match(text, /toque em Navegador/);
        assert.match(text, /vale uma vez/);
        assert.ok(await page.$("::-p-aria(Copiar link para a carteira)"), "a copy button");
        await check(page, "b-no-wallet-phone", ".wallet-links a");

        // The wallet's browser opens the handoff link: the flow goes on there.
        const walletTab = await newTab(browser, "phone");
        const wallet = await injectWallet(walletTab.page, { privateKey: generatePrivateKey() });
        await fundWallet(service, wallet.address);
        await open(walletTab, handoff);
        await waitForText(walletTab.page, "Conectar carteira");
        const walletTicket = await watchTicket(service, walletTab);

        // This tab's next step says where the link went, not "invalid".
        await open(tab, `${service.origin}/connect`);
        await waitForText(page, "Este link foi aberto em outra aba ou aparelho");
        assert.equal(await heading(page), "Link aberto em outra aba");
        assert.match(await textOf(page), /abra de novo o link que você recebeu/);
        assert.equal(await page.title(), "Link aberto em outra aba");
        await check(page, "b-opened-elsewhere");

        // Back to the wallet's browser (a tab in the background does not run).
        await walletTab.page.bringToFront();
        await clickButton(walletTab.page, "Conectar carteira");
        await waitForText(walletTab.page, "Assinar na carteira (1 de 2)");
        await clickButton(walletTab.page, "Assinar na carteira (1 de 2)");
        await waitForText(walletTab.page, "Assinar na carteira (2 de 2)");
        await clickButton(walletTab.page, "Assinar na carteira (2 de 2)");
        await waitForText(walletTab.page, "Conta conectada");
        assert.equal((await venueBView(service)).connection, "CONNECTED");

        // The handoff link is spent.
        const again = await newTab(browser, "phone");
        await open(again, handoff);
        await waitForText(again.page, "Link inválido");
        await check(again.page, "b-handoff-spent");

        secretsStayed(service, tab, link.token, ticket);
        secretsStayed(service, walletTab, handoffToken, walletTicket);
        assertOnlyExpectedErrors(tab, [/409 GET .*\/connect\/api\/session/]);
        assertOnlyExpectedErrors(again, [/404 POST .*\/connect\/api\/session/]);
      }),
  );

  await t.step(
    "a desktop with no wallet: install an extension, or a QR code drawn by the service for the phone",
    () =>
      withService(async (service) => {
        const tab = await newTab(browser);
        const { page } = tab;
        const link = await createLink(service, "VENUE_B");
        await open(tab, link.url);
        await waitForText(page, "Conecte com a sua carteira");
        const text = await textOf(page);
        assert.match(text, /Instale uma extensão de carteira/);
        assert.doesNotMatch(text, /toque/i, "no touching on a desktop");
        assert.ok(await page.$("svg.qr path"), "a QR code drawn by the service, inlined: no request");
        // A desktop's screen has no main action to keep in sight (a wallet must be installed, or a phone used).
        await check(page, "b-no-wallet-desktop", "none");
        secretsStayed(service, tab, link.token, await watchTicket(service, tab));
        assertCleanPage(tab.record);
      }),
  );

  await t.step(
    "no builder fee: the agent is the one signature, nothing to approve",
    () =>
      withService(async (service) => {
        const tab = await newTab(browser, "phone");
        const wallet = await injectWallet(tab.page, { privateKey: generatePrivateKey() });
        await fundWallet(service, wallet.address);
        const link = await createLink(service, "VENUE_B");
        await open(tab, link.url);
        // On a phone the explanation is folded: the client opens it.
        await tab.page.click("details.card summary");
        assert.match(await textOf(tab.page), /nenhuma para este parceiro/);
        await clickButton(tab.page, "Conectar carteira");
        await waitForText(tab.page, "Assinar na carteira");
        assert.doesNotMatch(await textOf(tab.page), /Taxa máxima/);
        await check(tab.page, "b-review-no-fee");
        await clickButton(tab.page, "Assinar na carteira");
        await waitForText(tab.page, "Conta conectada");
        assert.deepEqual(wallet.signed.map((entry) => entry.typedData.primaryType), [
          "HyperliquidTransaction:ApproveAgent",
        ]);
        secretsStayed(service, tab, link.token);
        assertCleanPage(tab.record);
      }, { builder: { feeTenthsBps: 0 } }),
  );

  await t.step(
    "QA: a test wallet made in the page connects a browser that has none",
    () =>
      withService(async (service) => {
        const tab = await newTab(browser);
        const link = await createLink(service, "VENUE_B");
        await open(tab, link.url);
        await waitForText(tab.page, "Usar carteira de teste");
        await clickButton(tab.page, "Usar carteira de teste");
        await waitForText(tab.page, "Conta conectada");
        await check(tab.page, "b-test-wallet-connected");
        const venueB = await venueBView(service);
        assert.equal(venueB.connection, "CONNECTED");
        assert.equal(venueB.builder.approvalStatus, "APPROVED");
        secretsStayed(service, tab, link.token);
        assertCleanPage(tab.record);
      }),
  );
});
