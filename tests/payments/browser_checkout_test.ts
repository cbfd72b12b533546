/**
 * The hosted checkout of on-chain payments (EVM_TRANSFER, DEPOSIT_INVOICE) in
 * headless Chromium, against the real service on a real HTTP origin and a
 * real EVM node (anvil with Arbitrum One's chain id, a 6-decimal test USDT):
 * the client pays by clicking "Pagar com minha carteira" with the test wallet
 * (which first adds and switches to the network, then sends the ERC-20
 * transfer the page encoded), and the page follows the transfer as the
 * service sees it (sent, confirming N of M, paid with its receipt, again
 * after a reload). A wrong wallet is named and sends nothing; a phone
 * without a wallet gets the QR code, copy buttons and instructions; an
 * expired link, a tab opened elsewhere, a charge paid through another link,
 * an invoice paid from any wallet and an overpaid one, a node that stops
 * answering say so. Every state:
 * screenshots and axe-core (WCAG 2.2 AA) at desktop and phone (390×844,
 * touch) under tests/.screenshots/pay/checkout/, the main action in sight on
 * the phone; every request the page makes goes to the service itself.
 */
import assert from "node:assert/strict";
import { encodeFunctionData, type Hex, parseAbi } from "viem";
import { HOUR_MS, MINUTE_MS } from "../../domain/clock.ts";
import { formatDec } from "../../venues/decimal.ts";
import { assertCleanPage, openBrowser, type TestBrowser } from "../_helpers/browser.ts";
import { injectWallet, type TestWalletOptions } from "../_helpers/eip1193_wallet.ts";
import { DEV_KEYS } from "../_helpers/evm/anvil.ts";
import { expectJson } from "../_helpers/http.ts";
import {
  assertOnlyExpectedErrors,
  heading,
  newTab,
  open,
  type Tab,
  textOf,
  waitForText,
} from "../_helpers/page_tab.ts";
import { backLink, clickButton } from "../connect/browser_fixture.ts";
import {
  instruct,
  later,
  obligation,
  RECIPIENT,
  REQUIRED,
  RETURN_URL,
  runPayments,
  stop,
  STRANGER,
  tokenOf,
  type World,
  world,
} from "./checkout_fixture.ts";
import { leaveAndComeBack, payScreens, reload, secretsStayed, storedTicket, watchTicket } from "./pay_page_fixture.ts";

const ARBITRUM = "0xa4b1";
const PAY = "Pagar com minha carteira";

interface Link {
  url: string;
  token: string;
  payment: { paymentId: string; tokenAmount: string };
  /** The transfer's recipient, or the invoice's own address. */
  recipient: Hex;
}

/**
 * The partner asks for an instruction for the obligation `reference` (opened
 * now, or the one given): an EVM transfer from the payer, unless `body` says otherwise.
 */
async function payLink(
  w: World,
  reference: string | { obligationId: string },
  body: Record<string, unknown> = {},
): Promise<Link> {
  const owed = typeof reference === "string" ? await obligation(w, reference) : reference;
  const issued = await expectJson(await instruct(w, owed.obligationId, body), 200);
  const token = tokenOf(issued.paymentUrl);
  w.env.watchedSecrets.add("payment token", token);
  assert.ok(issued.paymentUrl.startsWith(`${w.origin}/pay#`));
  const payment = issued.payment ?? issued.invoice;
  return { url: issued.paymentUrl, token, payment, recipient: payment.recipient ?? payment.address };
}

const invoiceLink = (w: World, reference: string) =>
  payLink(w, reference, { method: "DEPOSIT_INVOICE", token: undefined, payerAddress: undefined });

/** A wallet in the page with a node for Arbitrum One (`options` may start it elsewhere, on a network it knows). */
function wallet(w: World, tab: Tab, privateKey: Hex, options: TestWalletOptions = {}) {
  return injectWallet(tab.page, { privateKey, nodes: { [ARBITRUM]: w.chain.url }, ...options });
}

/** The node keeps sent transactions pending until `mine` (so the page's "sent" state can be seen), or mines at once. */
async function automine(w: World, on: boolean) {
  const response = await fetch(w.chain.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "evm_setAutomine", params: [on] }),
  });
  assert.equal((await response.json()).error, undefined);
}

async function assertSays(tab: Tab, wanted: (string | RegExp)[]) {
  const text = await textOf(tab.page);
  for (const line of wanted) {
    if (typeof line === "string") assert.ok(text.includes(line), `the page says "${line}":\n${text}`);
    else assert.match(text, line);
  }
}

/** The amount as the page writes it: "49.900317" -> "49,900317". */
const ptBr = (tokenAmount: string) => formatDec({ units: BigInt(tokenAmount), scale: 6 }).replace(".", ",");

const copyLabels = (tab: Tab) => tab.page.$$eval("main button.copy", (nodes) => nodes.map((node) => node.textContent));

const transferAbi = parseAbi(["function transfer(address to, uint256 value) returns (bool)"]);

async function closeTabs(...tabs: Tab[]) {
  for (const tab of tabs) await tab.page.close();
}

Deno.test("the hosted checkout (EVM_TRANSFER, DEPOSIT_INVOICE) in headless Chromium", async (t) => {
  const check = await payScreens("checkout");
  await using browser: TestBrowser = await openBrowser();
  const w = await world({ served: true });
  // The service's clock on the browser's: the page counts the link's time down on the device's clock.
  w.env.clock.freeze(Date.now());
  const origin = w.origin!;
  const stayed = (tab: Tab, token: string, ticket?: string) => secretsStayed(origin, tab, token, ticket);
  /** The pages' per-address request budget counts by the minute of the service's clock: a step starts a new one. */
  const nextMinute = () => later(w, MINUTE_MS);
  let chainStopped = false;

  try {
    await t.step(
      "EVM_TRANSFER on a desktop: paid by clicking with the wallet (network added), sent, confirming 1-3 of 3, paid with its receipt, again after a reload and Back; the older link's tab and the older link say it is paid",
      async () => {
        const owed = await obligation(w, "evm-click");
        const older = await payLink(w, owed);
        const link = await payLink(w, owed);
        const exact = ptBr(link.payment.tokenAmount);
        // The obligation's older link stays open in another tab meanwhile.
        const olderTab = await newTab(browser);
        await open(olderTab, older.url);
        await waitForText(olderTab.page, "Aguardando o pagamento.");
        const olderTicket = await watchTicket(w.env, olderTab);
        const tab = await newTab(browser);
        const { page } = tab;
        // The wallet is on Ethereum and has never heard of Arbitrum One.
        const payer = await wallet(w, tab, w.payerKey, { chainId: "0x1", knownChains: ["0x1"] });
        await open(tab, link.url);
        assert.equal(new URL(page.url()).hash, "", "the fragment left the address bar");
        await waitForText(page, PAY);
        const ticket = await watchTicket(w.env, tab);
        assert.equal(await heading(page), `Pagar ${exact} USDT`);
        assert.equal(await page.title(), `Pagar ${exact} USDT · ${await partnerName(tab)}`);
        await assertSays(tab, [
          "Pagamento em USDT na rede Arbitrum One",
          /Este link vale por mais (1:00:00|59:\d\d)/,
          "Valor a enviar (exato: os últimos dígitos identificam o seu pagamento)",
          /Valor da cobrança\s+US\$ 49,90/,
          /Rede \(a blockchain em que o envio é feito.*\)\s+Arbitrum One/,
          w.payer,
          RECIPIENT,
          w.usdt.toLowerCase(),
          link.payment.paymentId,
          "Aguardando o pagamento.",
          "Um envio de outra carteira ou de uma corretora (exchange) não é reconhecido.",
        ]);
        assert.ok(!(await textOf(page)).includes("toque"), "a desktop is clicked");
        const qr = await page.$eval(
          ".qr img",
          (img) => ({ src: img.getAttribute("src")!, alt: img.getAttribute("alt")! }),
        );
        assert.match(qr.src, /^data:image\/svg\+xml;base64,/);
        assert.match(qr.alt, /^QR code do pagamento: /);
        assert.deepEqual(await copyLabels(tab), [
          "Copiar Endereço de destino",
          `Copiar Contrato do token USDT`,
          "Copiar Valor exato, para colar na carteira",
        ]);
        assert.equal(await backLink(page), RETURN_URL);
        await check(page, "evm-start");

        // The user refuses the transaction once: the network was added and switched to, nothing was sent.
        payer.rejectNext("transaction");
        await clickButton(page, PAY);
        await waitForText(page, "Você cancelou na carteira. Nada foi enviado");
        assert.equal(payer.chainId, ARBITRUM, "the wallet switched to the payment's network");
        assert.deepEqual(
          [payer.addedChains.length, payer.addedChains[0]?.chainId, payer.addedChains[0]?.chainName],
          [1, ARBITRUM, "Arbitrum One"],
        );
        assert.equal(payer.sent.length, 0);
        await check(page, "evm-wallet-cancelled");

        // Paid by clicking: the transfer is pending at the node (sent), then mined and confirmed.
        await automine(w, false);
        try {
          await clickButton(page, PAY);
          await waitForText(page, "Pagamento enviado");
          await assertSays(tab, [/Sua carteira enviou [\d,]+ USDT\./, "Não envie de novo.", payer.sent[0].hash]);
          await check(page, "evm-sent", "h1");
          await w.chain.mine(1);
          await waitForText(page, "Confirmações: 1 de 3");
        } finally {
          await automine(w, true);
        }
        assert.equal(payer.sent.length, 1);
        const sent = payer.sent[0];
        assert.deepEqual(
          [sent.from.toLowerCase(), sent.to.toLowerCase(), sent.value, sent.chainId],
          [w.payer, w.usdt.toLowerCase(), 0n, ARBITRUM],
        );
        assert.equal(
          sent.data,
          encodeFunctionData({
            abi: transferAbi,
            functionName: "transfer",
            args: [RECIPIENT, BigInt(link.payment.tokenAmount)],
          }),
          "an ERC-20 transfer of the exact amount to the recipient",
        );
        await assertSays(tab, ["Pagamento recebido, confirmando", sent.hash, "Confirmando: 1 de 3."]);
        await check(page, "evm-confirming", "h1");
        await w.chain.mine(1);
        await waitForText(page, "Confirmações: 2 de 3");
        await w.chain.mine(1);
        await waitForText(page, "Confirmações: 3 de 3");
        assert.equal((await runPayments(w)).detected, 1);
        await waitForText(page, "Pagamento confirmado");
        const receipt = [
          `Pronto! Seu pagamento de ${exact} USDT foi confirmado`,
          "Comprovante",
          `Valor pago\n${exact} USDT`,
          /Pago via\s+Arbitrum One/,
          link.payment.paymentId,
          sent.hash,
        ];
        await assertSays(tab, receipt);
        assert.equal(await backLink(page), RETURN_URL);
        await check(page, "evm-paid", "a.back");

        // A reload, and Back from elsewhere: the receipt again, as the service still answers it.
        await reload(tab);
        await waitForText(page, "Comprovante");
        assert.equal(await heading(page), "Pagamento confirmado");
        await assertSays(tab, receipt);
        await check(page, "evm-paid-reloaded", "a.back");
        await leaveAndComeBack(tab);
        await waitForText(page, "Comprovante");
        assert.equal(payer.sent.length, 1, "nothing was sent again");

        // The older link's tab, still open: the charge is paid (that receipt), nothing to pay there any more.
        await olderTab.page.bringToFront();
        await waitForText(olderTab.page, "Esta cobrança já foi paga");
        await assertSays(olderTab, ["Comprovante", link.payment.paymentId, sent.hash]);
        assert.equal(await olderTab.page.$("main .action-bar"), null, "nothing to pay");
        await check(olderTab.page, "evm-already-paid-while-open", "a.back");

        // The older link opened again on a phone: already paid, that receipt, no wallet asked anything.
        const phone = await newTab(browser, "phone");
        const phoneWallet = await wallet(w, phone, w.payerKey);
        await open(phone, older.url);
        await waitForText(phone.page, "Esta cobrança já foi paga");
        await assertSays(phone, ["Comprovante", link.payment.paymentId, sent.hash]);
        assert.equal(await phone.page.$("main button.primary"), null, "nothing to pay");
        assert.equal(phoneWallet.calls.length, 0, "the wallet was not asked anything");
        await check(phone.page, "evm-already-paid", "a.back");

        stayed(tab, link.token, ticket);
        stayed(phone, older.token);
        stayed(olderTab, older.token, olderTicket);
        assertCleanPage(tab.record);
        assertCleanPage(olderTab.record);
        assertOnlyExpectedErrors(phone, [/409 POST .*\/pay\/api\/session/]);
        await closeTabs(tab, phone, olderTab);
      },
    );

    await t.step("EVM_TRANSFER on a phone, another wallet: it names the expected one and sends nothing", async () => {
      nextMinute();
      const link = await payLink(w, "evm-wrong-wallet");
      const tab = await newTab(browser, "phone");
      const stranger = await wallet(w, tab, DEV_KEYS[STRANGER]);
      await open(tab, link.url);
      await waitForText(tab.page, PAY);
      const ticket = await watchTicket(w.env, tab);
      await clickButton(tab.page, PAY);
      await waitForText(tab.page, "não é a carteira cadastrada para esta cobrança");
      await assertSays(tab, [
        `(${stranger.address.slice(0, 6).toLowerCase()}…${stranger.address.slice(-4).toLowerCase()})`,
        `Só um envio da carteira ${w.payer} é reconhecido.`,
        "toque em Pagar com minha carteira de novo. Nada foi enviado.",
      ]);
      assert.equal(stranger.sent.length, 0, "nothing was sent");
      assert.equal(
        await tab.page.evaluate("document.documentElement.scrollWidth <= innerWidth"),
        true,
        "fits the phone",
      );
      await check(tab.page, "evm-wrong-wallet");
      stayed(tab, link.token, ticket);
      assertCleanPage(tab.record);
      await closeTabs(tab);
    });

    await t.step(
      "no wallet in the browser: the QR code, copy buttons and instructions; on a phone, the wallet app's link",
      async () => {
        nextMinute();
        const link = await payLink(w, "evm-no-wallet");
        const phone = await newTab(browser, "phone");
        // The clipboard as a phone's browser allows it to the page.
        await (await phone.page.createCDPSession()).send("Browser.grantPermissions", {
          origin,
          permissions: ["clipboardReadWrite", "clipboardSanitizedWrite"],
        });
        await open(phone, link.url);
        await waitForText(phone.page, "Abrir no app da carteira");
        const ticket = await watchTicket(w.env, phone);
        const href = await phone.page.$eval(".action-bar a.button", (a) => a.getAttribute("href"));
        assert.equal(
          href,
          `ethereum:${w.usdt.toLowerCase()}@42161/transfer?address=${RECIPIENT}&uint256=${link.payment.tokenAmount}`,
        );
        await assertSays(phone, [
          "Pagar pelo app da carteira",
          `exatamente ${ptBr(link.payment.tokenAmount)} USDT`,
          "sem arredondar: os últimos dígitos identificam o seu pagamento",
        ]);
        // In the middle of the screen, where the client taps it (not under the action bar at the bottom).
        const copy = (await phone.page.$("::-p-aria(Copiar Endereço de destino)"))!;
        await copy.evaluate((button) => button.scrollIntoView({ block: "center" }));
        await copy.click();
        await waitForText(phone.page, "Copiado");
        // Said to a screen reader too. (The page may not read the clipboard back: its policy allows writing only.)
        await waitForText(phone.page, "Endereço de destino copiado.");
        await check(phone.page, "evm-no-wallet-phone");

        // On a desktop the QR code is the way: scanned with the phone's wallet app.
        const desktop = await newTab(browser);
        await open(desktop, link.url);
        await waitForText(desktop.page, "Pagar pelo app da carteira");
        assert.equal(await desktop.page.$(".action-bar"), null, "no button that cannot work here");
        await check(desktop.page, "evm-no-wallet-desktop", "h1");
        stayed(phone, link.token, ticket);
        assertCleanPage(desktop.record);
        await closeTabs(phone, desktop);
      },
    );

    await t.step("the same link in another tab: the first says so; the link's time ran out: expired", async () => {
      nextMinute();
      const link = await payLink(w, "evm-elsewhere");
      const first = await newTab(browser);
      await wallet(w, first, w.payerKey);
      await open(first, link.url);
      await waitForText(first.page, PAY);
      const firstTicket = await watchTicket(w.env, first);
      const second = await newTab(browser, "phone");
      const payer = await wallet(w, second, w.payerKey);
      await open(second, link.url);
      await waitForText(second.page, PAY);
      const secondTicket = await watchTicket(w.env, second);

      // The first tab's next look at the payment learns that its ticket was replaced.
      await first.page.bringToFront();
      await waitForText(first.page, "aberto em outra aba", 15_000);
      assert.equal(await heading(first.page), "Link aberto em outra aba");
      assert.equal(await storedTicket(first), null);
      await check(first.page, "opened-elsewhere", "a.back");

      // The link expires with nothing paid: the second tab says so (the service's answer, not the page's clock).
      await second.page.bringToFront();
      later(w, HOUR_MS + MINUTE_MS);
      await waitForText(second.page, "O prazo deste pagamento terminou", 15_000);
      await assertSays(second, ["Nenhuma transferência para esta cobrança apareceu na rede até o fim do prazo."]);
      assert.equal(await second.page.$("main button.primary"), null, "nothing to pay");
      assert.equal(payer.sent.length, 0);
      await check(second.page, "evm-expired", "a.back");
      await reload(second);
      await waitForText(second.page, "O prazo deste pagamento terminou");

      stayed(first, link.token, firstTicket);
      stayed(second, link.token, secondTicket);
      assertOnlyExpectedErrors(first, [/400 GET .*\/pay\/api\/status/]);
      assertCleanPage(second.record);
      await closeTabs(first, second);
    });

    await t.step("DEPOSIT_INVOICE on a phone: paid by clicking from any wallet, followed to its receipt", async () => {
      nextMinute();
      const link = await invoiceLink(w, "invoice-click");
      const tab = await newTab(browser, "phone");
      const anyWallet = await wallet(w, tab, DEV_KEYS[STRANGER]);
      await open(tab, link.url);
      await waitForText(tab.page, PAY);
      const ticket = await watchTicket(w.env, tab);
      await assertSays(tab, [
        "Pagar 49,90 USDT",
        "Pagar de qualquer carteira ou corretora",
        "Escaneie o QR code ou copie o endereço desta cobrança",
        "some a taxa: precisa chegar pelo menos esse valor",
        link.recipient,
      ]);
      assert.ok(!(await textOf(tab.page)).includes("Carteira que paga"), "any wallet pays an invoice");
      assert.deepEqual(await copyLabels(tab), [
        "Copiar Endereço desta cobrança",
        "Copiar Contrato do token USDT",
        "Copiar Valor exato, para colar na carteira",
      ]);
      await check(tab.page, "invoice-start");

      await clickButton(tab.page, PAY);
      await waitForText(tab.page, "Confirmações: 1 de 3");
      assert.equal(anyWallet.sent.length, 1);
      await w.chain.mine(REQUIRED);
      assert.equal((await runPayments(w)).detected, 1);
      await waitForText(tab.page, "Pagamento confirmado");
      await assertSays(tab, ["Comprovante", "Valor pago\n49,90 USDT", anyWallet.sent[0].hash]);
      await check(tab.page, "invoice-paid", "a.back");
      stayed(tab, link.token, ticket);
      assertCleanPage(tab.record);
      await closeTabs(tab);
    });

    await t.step("DEPOSIT_INVOICE paid with more than asked: paid, the difference looked at by a person", async () => {
      nextMinute();
      const link = await invoiceLink(w, "invoice-overpaid");
      const tab = await newTab(browser);
      await open(tab, link.url);
      await waitForText(tab.page, "Pagar de qualquer carteira ou corretora");
      const ticket = await watchTicket(w.env, tab);
      await check(tab.page, "invoice-no-wallet", "h1");
      // Sent from an exchange, say, rounded up.
      await w.chain.transfer(w.usdt, STRANGER, link.recipient, 50_000_000n);
      await w.chain.mine(REQUIRED);
      assert.equal((await runPayments(w)).detected, 1);
      await waitForText(tab.page, "Pagamento recebido, em análise", 15_000);
      await assertSays(tab, ["A cobrança está paga, mas chegou mais do que o valor pedido.", "Comprovante"]);
      await check(tab.page, "invoice-overpaid", "a.back");
      stayed(tab, link.token, ticket);
      assertCleanPage(tab.record);
      await closeTabs(tab);
    });

    await t.step(
      "the network's node stops answering: the page keeps what it showed and says it asks again",
      async () => {
        nextMinute();
        const link = await payLink(w, "evm-node-down");
        const tab = await newTab(browser, "phone");
        await wallet(w, tab, w.payerKey);
        await open(tab, link.url);
        await waitForText(tab.page, PAY);
        const ticket = await watchTicket(w.env, tab);
        await w.chain.stop();
        chainStopped = true;
        await waitForText(tab.page, "Não foi possível consultar a rede agora. A página tenta de novo em instantes.");
        assert.equal(await heading(tab.page), `Pagar ${ptBr(link.payment.tokenAmount)} USDT`, "the same screen");
        await check(tab.page, "evm-node-down");
        stayed(tab, link.token, ticket);
        assertOnlyExpectedErrors(tab, [/503 GET .*\/pay\/api\/status/, /status of 503 .*\/pay\/api\/status/]);
        await closeTabs(tab);
      },
    );
  } finally {
    // The last step stops the node itself.
    if (chainStopped) await w.env.close();
    else await stop(w);
  }
});

/** Who asks, as the page's header names it. */
async function partnerName(tab: Tab): Promise<string> {
  const eyebrow = await tab.page.$eval("header .eyebrow", (node) => node.textContent ?? "");
  return eyebrow.replace(/^Solicitado por /, "");
}
