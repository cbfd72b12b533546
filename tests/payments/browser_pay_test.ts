/**
 * The hosted payment page (VENUE_B_USD_SEND) in headless Chromium, against
 * the real service on a real HTTP origin and the VENUE_B simulator: the
 * client's principal wallet (EIP-1193, signing real EIP-712 typed data)
 * connects and signs the send the service built, and the obligation is paid
 * once, with its receipt, shown again after a reload or Back; another wallet
 * is refused by name; a spent, unknown, incomplete or expired link, a link
 * opened in another tab, a charge paid, reduced or cancelled meanwhile say
 * so. Every page state: screenshots and axe-core (WCAG 2.2 AA) at desktop and
 * phone (390×844, touch) under tests/.screenshots/pay/send/, the main action
 * in sight on the phone.
 *
 * Where the link token and the page ticket go is checked on every page: never
 * in a request URL, a header (the ticket only in Authorization) or a console
 * line, and never in the service's log (env.close() scans it).
 */
import assert from "node:assert/strict";
import { and, eq } from "drizzle-orm";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { withTransaction } from "../../db/client.ts";
import { clients, payments, paymentSessions } from "../../db/schema.ts";
import { reduceOpenObligations } from "../../domain/billing/fee_obligations.ts";
import type { UserSignedAction } from "../../venues/types.ts";
import { generateAgentKey } from "../../venues/venue_b/signing.ts";
import { assertCleanPage, openBrowser } from "../_helpers/browser.ts";
import {
  assertOnlyExpectedErrors,
  heading,
  newTab,
  open,
  type Tab,
  textOf,
  waitForText,
} from "../_helpers/page_tab.ts";
import { injectWallet, type TestWallet } from "../_helpers/eip1193_wallet.ts";
import { startServedTestEnv, type TestEnv } from "../_helpers/env.ts";
import { call, createPartner, expectError, expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import { connectWallet, fund, openPage, signAsWallet } from "../connect/connect_fixture.ts";
import { backLink, clickButton } from "../connect/browser_fixture.ts";
import { ik } from "../setup/setup_fixture.ts";
import { openObligation } from "./obligation_fixture.ts";
import { leaveAndComeBack, payScreens, reload, secretsStayed, storedTicket, watchTicket } from "./pay_page_fixture.ts";

const RETURN_URL = "https://app.partner.example/billing";

// ------------------------------------------------------------------ a service on a real origin

interface Service {
  env: TestEnv;
  partner: TestPartner;
  origin: string;
  client: { id: number; tenantId: string };
  /** The key of the principal wallet of ana's connected VENUE_B account. */
  principalKey: Hex;
  platformWallet: string;
  close(): Promise<void>;
}

/**
 * The test env behind a real HTTP server, with CONNECT_URL pointing at it, so
 * the page opens from the very link the partner API answers. Partner
 * "Corretora Exemplo", its client "ana" with VENUE_B connected through the
 * connect page's API by a funded principal wallet, and the platform wallet set.
 */
async function startService(): Promise<Service> {
  const { env, origin, close } = await startServedTestEnv();
  try {
    const partner = await createPartner(env);
    await expectJson(await partner.call("POST", "/v1/users", { body: { externalUserId: "ana" }, headers: ik() }), 201);
    const principalKey = generatePrivateKey();
    const principal = privateKeyToAccount(principalKey);
    await fund(env, principal.address, "1000");
    const { request } = await openPage(env, partner);
    await connectWallet(request, principal);

    const platformWallet = generateAgentKey().address;
    await fund(env, platformWallet, "0");
    await expectJson(
      await operator(env, "PUT", "/operator/v1/venue-b-payment-wallet", { address: platformWallet }),
      200,
    );
    const [client] = await env.deps.db.read.select({ id: clients.id, tenantId: clients.tenantId }).from(clients)
      .where(and(eq(clients.partnerId, partner.partnerId), eq(clients.externalUserId, "ana")));
    return { env, partner, origin, client, principalKey, platformWallet, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** An open USDC obligation of ana at VENUE_B (a performance fee can be reduced by a negative adjustment). */
function obligation(service: Service, reference: string, amountMicros?: number, source = "MONTHLY_SUBSCRIPTION") {
  const { env, partner, client } = service;
  return openObligation(env, {
    partnerId: partner.partnerId,
    tenantId: client.tenantId,
    clientId: client.id,
    reference,
    amountMicros,
    providerId: "VENUE_B",
    source,
  });
}

interface Link {
  url: string;
  token: string;
  paymentId: string;
}

/** The partner asks for a VENUE_B_USD_SEND instruction; its token is watched in the service's log. */
async function payLink(service: Service, obligationId: string): Promise<Link> {
  const body = await expectJson(
    await service.partner.call("POST", `/v1/users/ana/obligations/${obligationId}/payment-instructions`, {
      body: { method: "VENUE_B_USD_SEND", returnUrl: RETURN_URL },
      headers: ik(),
    }),
    200,
  );
  assert.deepEqual(
    [body.payment.method, body.payment.status, body.payment.tokenSymbol, body.payment.recipient],
    ["VENUE_B_USD_SEND", "PENDING", "USDC", service.platformWallet],
  );
  const url = body.paymentUrl as string;
  assert.ok(url.startsWith(`${service.origin}/pay#`), url);
  const token = url.split("#")[1];
  service.env.watchedSecrets.add("payment token", token);
  return { url, token, paymentId: body.payment.paymentId };
}

/** A negative adjustment of `statementId` takes `micros` off the obligation (cancelled when nothing is left). */
async function reduce(service: Service, obligationId: string, micros: number, statementId: string) {
  const { env, client } = service;
  await withTransaction(
    env.deps.db,
    (tx) =>
      reduceOpenObligations(
        tx,
        { clientId: client.id, providerId: "VENUE_B" },
        micros,
        [obligationId],
        statementId,
        env.clock.now(),
      ),
  );
}

/**
 * The link opened elsewhere (through the page's API, as its script would)
 * and the principal's signature of the send it built, not yet sent.
 */
async function signedElsewhere(service: Service, link: Link) {
  const { env } = service;
  const session = await expectJson(await call(env, "POST", "/pay/api/session", { body: { token: link.token } }), 200);
  env.watchedSecrets.add("page ticket", session.ticket);
  const request = (path: string, body: unknown) =>
    call(env, "POST", `/pay/api${path}`, { body, headers: { authorization: `Bearer ${session.ticket}` } });
  const principal = privateKeyToAccount(service.principalKey);
  const { typedData } = await expectJson(
    await request("/wallet", { walletAddress: principal.address, chainId: "0xa4b1" }),
    200,
  );
  return { request, signature: await signAsWallet(principal, typedData) };
}

/** Sends that reached the platform wallet at the venue. */
async function platformSends(service: Service): Promise<number> {
  const response = await fetch(
    `${service.env.venueUrls.venueB}/_control/ledger?user=${service.platformWallet}`,
  );
  return (await response.json()).sends.length;
}

async function venueFault(service: Service, fault: { mode: string; ms?: number }) {
  const response = await fetch(`${service.env.venueUrls.venueB}/_control/faults`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(fault),
  });
  assert.equal(response.status, 200, await response.text());
}

/** The pages' per-address request budget counts by the minute of the test clock: a step starts a new one. */
function nextMinute(service: Service) {
  service.env.clock.freeze(service.env.clock.now() + 60_000);
}

async function obligationStatus(service: Service, obligationId: string): Promise<string> {
  const body = await expectJson(await service.partner.call("GET", "/v1/users/ana/obligations"), 200);
  return body.obligations.find((row: { obligationId: string }) => row.obligationId === obligationId).status;
}

async function paymentStatus(service: Service, paymentId: string): Promise<string> {
  return (await expectJson(await service.partner.call("GET", `/v1/users/ana/payments/${paymentId}`), 200)).payment
    .status;
}

async function paidEvents(service: Service) {
  return (await expectJson(await service.partner.call("GET", "/v1/events?type=obligation.paid"), 200)).events;
}

// ------------------------------------------------------------------ the page

const fitsThePhone = (tab: Tab) => tab.page.evaluate("document.documentElement.scrollWidth <= innerWidth");

/** What the tab showed, for the states every step asserts. */
async function assertSays(tab: Tab, wanted: (string | RegExp)[]) {
  const text = await textOf(tab.page);
  for (const line of wanted) {
    if (typeof line === "string") assert.ok(text.includes(line), `the page says "${line}":\n${text}`);
    else assert.match(text, line);
  }
}

// ------------------------------------------------------------------ the steps

Deno.test("the hosted payment page (VENUE_B send) in headless Chromium", async (t) => {
  const check = await payScreens("send");
  await using browser = await openBrowser();
  const service = await startService();
  const stayed = (tab: Tab, token: string, ticket?: string) => secretsStayed(service.origin, tab, token, ticket);
  let paid: Link | undefined;

  try {
    await t.step(
      "the principal wallet signs the exact send; the receipt, again after a reload and after Back",
      async () => {
        const owed = await obligation(service, "2026-11");
        const link = await payLink(service, owed.obligationId);
        const tab = await newTab(browser);
        const { page } = tab;
        const wallet: TestWallet = await injectWallet(page, { privateKey: service.principalKey });
        await open(tab, link.url);
        assert.equal(new URL(page.url()).hash, "", "the fragment left the address bar");
        assert.equal(await page.evaluate("history.length"), 2, "no history entry holds the token but the replaced one");
        await waitForText(page, "Conectar carteira");
        const ticket = await watchTicket(service.env, tab);
        assert.equal(await heading(page), "Pagar 49,90 USDC");
        assert.equal(await page.title(), "Pagar 49,90 USDC · Corretora Exemplo");
        await assertSays(tab, [
          "Solicitado por Corretora Exemplo",
          "Este link vale por mais 15:00",
          "49,90 USDC",
          wallet.address.toLowerCase(),
          service.platformWallet,
          "Carteira que paga (a carteira principal da sua conta na corretora)",
          "Carteira de destino (a carteira de Corretora Exemplo que recebe o pagamento)",
          "assinar é aprovar na carteira",
        ]);
        assert.equal(await backLink(page), RETURN_URL);
        // The countdown runs, from the seconds the service said are left (not from the browser's clock).
        await waitForText(page, "14:5");
        await check(page, "start");

        // The user cancels the signature once in the wallet: nothing sent, the same message can be signed after.
        await clickButton(page, "Conectar carteira");
        await waitForText(page, "Assinar envio de 49,90 USDC");
        await check(page, "connected");
        wallet.rejectNext("signature");
        await clickButton(page, "Assinar envio de 49,90 USDC");
        await waitForText(page, "Assinatura cancelada na carteira");
        assert.equal(await paymentStatus(service, link.paymentId), "PENDING");
        await check(page, "signature-cancelled");

        await clickButton(page, "Assinar envio de 49,90 USDC");
        await waitForText(page, "Pagamento confirmado");
        const receipt = [
          /Seu envio de 49,90 USDC foi confirmado/,
          "Comprovante",
          /Valor pago\s+49,90 USDC/,
          /Pago via\s+Venue B/,
          link.paymentId,
          /Pago em\s+\d{2}\/\d{2}\/\d{4}/,
        ];
        await assertSays(tab, receipt);
        assert.equal(await page.title(), "Pagamento confirmado · Corretora Exemplo");
        assert.equal(await backLink(page), RETURN_URL);
        assert.equal(new URL(page.url()).pathname, "/pay", "no automatic redirect");
        assert.equal(await storedTicket(tab), null, "the spent ticket is forgotten");
        await check(page, "paid", "a.back");
        assert.equal(wallet.signed.length, 1);
        const signed = wallet.signed[0].typedData;
        assert.equal(signed.primaryType, "HyperliquidTransaction:SendAsset");
        assert.deepEqual(
          [signed.message.destination, signed.message.amount, signed.message.token !== undefined],
          [service.platformWallet, "49.9", true],
        );

        // A reload, then Back from elsewhere: the paid state again, never "Link incompleto".
        await reload(tab);
        assert.equal(await heading(page), "Pagamento confirmado");
        await assertSays(tab, receipt);
        assert.equal(await backLink(page), RETURN_URL);
        await check(page, "paid-reloaded", "a.back");
        await leaveAndComeBack(tab);
        assert.equal(await heading(page), "Pagamento confirmado");
        await assertSays(tab, receipt);

        assert.equal(await obligationStatus(service, owed.obligationId), "PAID");
        assert.equal(await paymentStatus(service, link.paymentId), "CONFIRMED");
        assert.equal((await paidEvents(service)).length, 1);
        assert.equal(wallet.signed.length, 1, "nothing was signed again");
        stayed(tab, link.token, ticket);
        assertCleanPage(tab.record);
        paid = link;
      },
    );

    await t.step("on a phone, another wallet than the principal: it names the expected one, nothing paid", async () => {
      nextMinute(service);
      const owed = await obligation(service, "2026-12");
      const link = await payLink(service, owed.obligationId);
      const tab = await newTab(browser, "phone");
      const { page } = tab;
      const stranger = await injectWallet(page, { privateKey: generatePrivateKey() });
      await open(tab, link.url);
      await waitForText(page, "Conectar carteira");
      const ticket = await watchTicket(service.env, tab);
      assert.equal(await fitsThePhone(tab), true, "fits the phone");
      await clickButton(page, "Conectar carteira");
      await waitForText(page, "não é a carteira que paga esta cobrança");
      const principal = privateKeyToAccount(service.principalKey).address.toLowerCase();
      await assertSays(tab, [
        `(${stranger.address.slice(0, 6).toLowerCase()}…${stranger.address.slice(-4).toLowerCase()})`,
        `troque para a conta ${principal}`,
        "toque em Conectar carteira de novo. Nada foi enviado.",
      ]);
      assert.equal(stranger.signed.length, 0, "nothing was offered for signature");
      assert.equal(await fitsThePhone(tab), true, "the error fits");
      const error = await page.$eval(
        ".feedback .message",
        (node) => (node as unknown as { getAttribute(n: string): string }).getAttribute("role"),
      );
      assert.equal(error, "alert", "the error is announced");
      await check(page, "wallet-mismatch");

      assert.equal(await obligationStatus(service, owed.obligationId), "OPEN");
      assert.equal(await paymentStatus(service, link.paymentId), "PENDING");
      stayed(tab, link.token, ticket);
      assertOnlyExpectedErrors(tab, [/403 POST .*\/pay\/api\/wallet/]);
    });

    await t.step(
      "the link that paid, opened again: already paid, with its receipt, and so after a reload",
      async () => {
        assert.ok(paid, "the first step paid");
        nextMinute(service);
        const tab = await newTab(browser);
        const { page } = tab;
        const wallet = await injectWallet(page, { privateKey: service.principalKey });
        await open(tab, paid.url);
        await waitForText(page, "Esta cobrança já foi paga");
        assert.equal(await heading(page), "Esta cobrança já foi paga");
        await assertSays(tab, [/Você não precisa pagar de novo/, /Comprovante/]);
        assert.equal(await page.$("main button.primary"), null, "nothing to sign or try");
        assert.equal(wallet.signed.length, 0, "the wallet was never asked");
        await check(page, "link-paid-opened-again", "h1");
        await reload(tab);
        assert.equal(await heading(page), "Esta cobrança já foi paga");
        stayed(tab, paid.token);
        assertOnlyExpectedErrors(tab, [/409 POST .*\/pay\/api\/session/]);
      },
    );

    await t.step("a link that is no link, or none at all: invalid, incomplete", async () => {
      nextMinute(service);
      const tab = await newTab(browser, "phone");
      const { page } = tab;
      await open(tab, `${service.origin}/pay#nao-e-um-link`);
      assert.equal(await heading(page), "Link inválido");
      await assertSays(tab, ["Este link de pagamento está incompleto ou foi alterado."]);
      await check(page, "link-malformed", "h1");

      const unknown = "A".repeat(43);
      await open(tab, `${service.origin}/pay#${unknown}`);
      await waitForText(page, "não é válido");
      assert.equal(await heading(page), "Link inválido");
      await assertSays(tab, [/Confira se ele foi copiado inteiro/]);
      await check(page, "link-unknown", "h1");

      const bare = await newTab(browser);
      await open(bare, `${service.origin}/pay`);
      assert.equal(await heading(bare.page), "Link incompleto");
      await assertSays(bare, ["Abra o link completo que você recebeu"]);
      await check(bare.page, "link-incomplete", "h1");
      assertOnlyExpectedErrors(tab, [/400 POST .*\/pay\/api\/session/]);
      assertCleanPage(bare.record);
    });

    await t.step("the same link in two tabs: the first says it was opened in the other, which pays", async () => {
      nextMinute(service);
      const owed = await obligation(service, "2027-00");
      const link = await payLink(service, owed.obligationId);
      const first = await newTab(browser);
      await injectWallet(first.page, { privateKey: service.principalKey });
      await open(first, link.url);
      await waitForText(first.page, "Conectar carteira");
      const firstTicket = await watchTicket(service.env, first);

      const second = await newTab(browser, "phone");
      const wallet = await injectWallet(second.page, { privateKey: service.principalKey });
      await open(second, link.url);
      await waitForText(second.page, "Conectar carteira");
      const secondTicket = await watchTicket(service.env, second);

      await first.page.bringToFront();
      await clickButton(first.page, "Conectar carteira");
      await waitForText(first.page, "aberto em outra aba");
      assert.equal(await heading(first.page), "Link aberto em outra aba");
      assert.equal(await first.page.title(), "Link aberto em outra aba · Corretora Exemplo");
      await assertSays(first, [/Continue por lá, ou abra o link de novo aqui/]);
      assert.ok(!(await textOf(first.page)).includes("Link inválido"));
      await check(first.page, "opened-elsewhere", "a.back");
      await reload(first);
      assert.equal(await heading(first.page), "Link aberto em outra aba");

      await second.page.bringToFront();
      await clickButton(second.page, "Conectar carteira");
      await waitForText(second.page, "Assinar envio de 49,90 USDC");
      await clickButton(second.page, "Assinar envio de 49,90 USDC");
      await waitForText(second.page, "Pagamento confirmado");
      assert.equal(wallet.signed.length, 1);
      assert.equal(await obligationStatus(service, owed.obligationId), "PAID");
      stayed(first, link.token, firstTicket);
      stayed(second, link.token, secondTicket);
      assertOnlyExpectedErrors(first, [/400 POST .*\/pay\/api\/wallet/]);
      assertCleanPage(second.record);
    });

    await t.step("the link's time runs out on the open page: expired, nothing to sign", async () => {
      nextMinute(service);
      const owed = await obligation(service, "2027-0x");
      const link = await payLink(service, owed.obligationId);
      // Opened with 3 seconds left of its 15 minutes.
      service.env.clock.freeze(service.env.clock.now() + 15 * 60_000 - 3_000);
      const tab = await newTab(browser, "phone");
      const wallet = await injectWallet(tab.page, { privateKey: service.principalKey });
      await open(tab, link.url);
      await waitForText(tab.page, "Este link vale por mais 0:0");
      await waitForText(tab.page, "expirou", 6_000);
      assert.equal(await heading(tab.page), "Link expirado");
      await assertSays(tab, ["Este link de pagamento expirou. Nada foi enviado da sua conta."]);
      assert.equal(await tab.page.$("main button"), null);
      assert.equal(await backLink(tab.page), RETURN_URL);
      await check(tab.page, "expired", "a.back");
      assert.equal(wallet.signed.length, 0);

      // The service agrees: the link opened again is expired.
      nextMinute(service);
      await open(tab, link.url);
      await waitForText(tab.page, "Este link de pagamento expirou. Peça um novo a quem o enviou.");
      assert.equal(await heading(tab.page), "Link expirado");
      stayed(tab, link.token);
      assertOnlyExpectedErrors(tab, [/400 POST .*\/pay\/api\/session/]);
    });

    await t.step(
      "no wallet in the browser; the venue refuses a send the balance cannot cover, a new signature pays",
      async () => {
        nextMinute(service);
        const owed = await obligation(service, "2027-01", 1_500_000_000);
        const link = await payLink(service, owed.obligationId);

        const bare = await newTab(browser, "phone");
        await open(bare, link.url);
        await clickButton(bare.page, "Conectar carteira");
        await waitForText(bare.page, "Nenhuma carteira encontrada");
        await check(bare.page, "no-wallet");
        stayed(bare, link.token, await watchTicket(service.env, bare));
        assertCleanPage(bare.record);

        // The same link in the wallet's browser (a new exchange; the bare tab's ticket no longer works).
        const tab = await newTab(browser);
        const { page } = tab;
        const wallet = await injectWallet(page, { privateKey: service.principalKey });
        await open(tab, link.url);
        const ticket = await watchTicket(service.env, tab);
        await clickButton(page, "Conectar carteira");
        await waitForText(page, "Assinar envio de 1.500,00 USDC");
        await clickButton(page, "Assinar envio de 1.500,00 USDC");
        await waitForText(page, "A corretora recusou o envio");
        await assertSays(tab, [
          /Nenhum valor saiu da sua conta/,
          /clique em Conectar carteira para assinar um novo envio/,
        ]);
        await check(page, "payment-rejected");
        assert.equal(await paymentStatus(service, link.paymentId), "PENDING");
        assert.equal(await obligationStatus(service, owed.obligationId), "OPEN");

        // Funded now: connecting again builds a new message (a new nonce), and that one pays.
        await fund(service.env, wallet.address, "1000");
        await clickButton(page, "Conectar carteira");
        await waitForText(page, "Assinar envio de 1.500,00 USDC");
        await clickButton(page, "Assinar envio de 1.500,00 USDC");
        await waitForText(page, "Pagamento confirmado");
        await assertSays(tab, [/Valor pago\s+1\.500,00 USDC/]);
        assert.equal(wallet.signed.length, 2);
        assert.notEqual(wallet.signed[0].typedData.message.nonce, wallet.signed[1].typedData.message.nonce);
        assert.equal(await obligationStatus(service, owed.obligationId), "PAID");
        stayed(tab, link.token, ticket);
        assertOnlyExpectedErrors(tab, [/400 POST .*\/pay\/api\/signature/]);
      },
    );

    await t.step(
      "two links for one obligation: once one pays, the other says so (with the receipt) and no wallet is asked to sign",
      async () => {
        nextMinute(service);
        const owed = await obligation(service, "2027-02");
        const first = await payLink(service, owed.obligationId);
        const second = await payLink(service, owed.obligationId);
        const paidBefore = (await paidEvents(service)).length;
        const sendsBefore = await platformSends(service);

        // The second link is open in a browser, its wallet connected, the send offered for signature...
        const tab = await newTab(browser);
        const { page } = tab;
        const wallet = await injectWallet(page, { privateKey: service.principalKey });
        await open(tab, second.url);
        await waitForText(page, "Conectar carteira");
        const ticket = await watchTicket(service.env, tab);
        await clickButton(page, "Conectar carteira");
        await waitForText(page, "Assinar envio de 49,90 USDC");
        // ...when the first link pays the obligation elsewhere.
        const elsewhere = await signedElsewhere(service, first);
        const paidElsewhere = await expectJson(
          await elsewhere.request("/signature", { signature: elsewhere.signature }),
          200,
        );
        assert.equal(paidElsewhere.status, "CONFIRMED");
        assert.equal(paidElsewhere.receipt.reference, first.paymentId);

        await clickButton(page, "Assinar envio de 49,90 USDC");
        await waitForText(page, "Esta cobrança já foi paga");
        assert.equal(wallet.signed.length, 0, "the wallet was never asked to sign");
        await assertSays(tab, [/Você não precisa pagar de novo/]);
        assert.equal(await page.$("main button"), null, "nothing to sign or try");
        assert.equal(await backLink(page), RETURN_URL);
        assert.equal(await storedTicket(tab), null, "the ticket is forgotten");
        await check(page, "already-paid-while-open", "a.back");
        await reload(tab);
        assert.equal(await heading(page), "Esta cobrança já foi paga");
        stayed(tab, second.token, ticket);
        assertOnlyExpectedErrors(tab, [/409 POST .*\/pay\/api\/wallet/]);

        // The second link opened again, on a phone: paid, with the receipt of the payment that paid it, before
        // any wallet prompt.
        const phone = await newTab(browser, "phone");
        const phoneWallet = await injectWallet(phone.page, { privateKey: service.principalKey });
        await open(phone, second.url);
        await waitForText(phone.page, "Esta cobrança já foi paga");
        assert.equal(await heading(phone.page), "Esta cobrança já foi paga");
        await assertSays(phone, [
          "Solicitado por Corretora Exemplo",
          "Comprovante",
          /Valor pago\s+49,90 USDC/,
          /Pago via\s+Venue B/,
          first.paymentId,
          paidElsewhere.receipt.txHash,
        ]);
        assert.ok(!(await textOf(phone.page)).includes("Pagar 49,90"), "no payment offered");
        assert.equal(await phone.page.$("main button.primary"), null, "nothing to pay");
        assert.equal(await backLink(phone.page), RETURN_URL);
        assert.equal(await fitsThePhone(phone), true, "fits the phone");
        await check(phone.page, "already-paid", "a.back");
        assert.equal(phoneWallet.calls.length, 0, "the wallet was not even asked for accounts");
        stayed(phone, second.token);
        assertOnlyExpectedErrors(phone, [/409 POST .*\/pay\/api\/session/]);

        assert.equal(await platformSends(service), sendsBefore + 1, "one send reached the venue");
        assert.equal(await obligationStatus(service, owed.obligationId), "PAID");
        assert.equal(await paymentStatus(service, second.paymentId), "SUPERSEDED");
        assert.equal((await paidEvents(service)).length, paidBefore + 1);
      },
    );

    await t.step(
      "a link issued before the charge was reduced asks for a new one; one reduced to nothing says so",
      async () => {
        nextMinute(service);
        const owed = await obligation(service, "2027-03", 49_900_000, "WEEKLY_PERFORMANCE_FEE");
        const link = await payLink(service, owed.obligationId);
        const gone = await obligation(service, "2027-04", 10_000_000, "WEEKLY_PERFORMANCE_FEE");
        const goneLink = await payLink(service, gone.obligationId);
        await reduce(service, owed.obligationId, 19_900_000, "stm_adjustment3");
        await reduce(service, gone.obligationId, 10_000_000, "stm_adjustment4");

        const phone = await newTab(browser, "phone");
        const wallet = await injectWallet(phone.page, { privateKey: service.principalKey });
        await open(phone, link.url);
        await waitForText(phone.page, "O valor desta cobrança mudou");
        await assertSays(phone, [/Nada foi enviado da sua conta\.\s+Este link pedia 49,90 USDC/, /peça um novo link/]);
        assert.equal(await backLink(phone.page), RETURN_URL);
        assert.equal(await phone.page.$("main button"), null);
        await check(phone.page, "amount-changed", "a.back");
        stayed(phone, link.token);
        assertOnlyExpectedErrors(phone, [/409 POST .*\/pay\/api\/session/]);

        const tab = await newTab(browser);
        await injectWallet(tab.page, { privateKey: service.principalKey });
        await open(tab, goneLink.url);
        await waitForText(tab.page, "Não há nada a pagar");
        await assertSays(tab, [/Esta cobrança foi cancelada e não precisa mais ser paga/]);
        await check(tab.page, "nothing-to-pay", "a.back");
        stayed(tab, goneLink.token);
        assertOnlyExpectedErrors(tab, [/409 POST .*\/pay\/api\/session/]);
        assert.equal(wallet.signed.length, 0);
        assert.deepEqual(
          [await paymentStatus(service, link.paymentId), await paymentStatus(service, goneLink.paymentId)],
          ["SUPERSEDED", "SUPERSEDED"],
        );
      },
    );

    await t.step(
      "a send that reaches the venue after another link paid: held for review, never called a payment",
      async () => {
        nextMinute(service);
        const owed = await obligation(service, "2027-05");
        const early = await payLink(service, owed.obligationId);
        const late = await payLink(service, owed.obligationId);
        const paidBefore = (await paidEvents(service)).length;
        // The early link's send was relayed, the venue's answer lost and its ledger not read yet (as the page
        // records it): at the venue, not credited.
        const { signature } = await signedElsewhere(service, early);
        const { env } = service;
        const [session] = await env.deps.db.read.select().from(paymentSessions)
          .where(eq(paymentSessions.paymentId, early.paymentId));
        const approvals = env.deps.venues.VENUE_B.walletApprovals!;
        const signed = approvals.withSignature(session.pendingAction as UserSignedAction["action"], signature);
        await env.deps.venues.VENUE_B.submitUserSignedAction!(signed);
        await withTransaction(env.deps.db, async (tx) => {
          await tx.update(paymentSessions).set({ status: "SIGNED", signedNonce: signed.nonce })
            .where(eq(paymentSessions.paymentId, early.paymentId));
          await tx.update(payments).set({ status: "SUBMITTED" }).where(eq(payments.paymentId, early.paymentId));
        });

        const tab = await newTab(browser);
        const { page } = tab;
        const wallet = await injectWallet(page, { privateKey: service.principalKey });
        await open(tab, late.url);
        const ticket = await watchTicket(service.env, tab);
        await clickButton(page, "Conectar carteira");
        await waitForText(page, "Assinar envio de 49,90 USDC");
        // The venue answers slowly: the late page's send is relayed while the obligation is still open, and the
        // payments job credits the early send before the late page reads the ledger.
        await venueFault(service, { mode: "SLOW", ms: 2_000 });
        try {
          await clickButton(page, "Assinar envio de 49,90 USDC");
          await waitForText(page, "Enviando o pagamento");
          const job = await expectJson(await operator(env, "POST", "/operator/v1/jobs/payments/run"), 200);
          assert.equal(job.summary.credited, 1, "the early send paid the obligation");
          await waitForText(page, "Esta cobrança já estava paga", 15_000);
        } finally {
          await venueFault(service, { mode: "NONE" });
        }
        const text = await textOf(page);
        assert.match(text, /Seu envio de 49,90 USDC chegou depois que a cobrança já tinha sido paga/);
        assert.ok(!/Pagamento confirmado|está paga\./.test(text), "nothing calls it a payment of the charge");
        await check(page, "arrived-after-paid", "a.back");
        assert.equal(wallet.signed.length, 1);
        stayed(tab, late.token, ticket);
        assertCleanPage(tab.record);

        const held =
          (await expectJson(await service.partner.call("GET", `/v1/users/ana/payments/${late.paymentId}`), 200))
            .payment;
        assert.deepEqual(
          [held.status, held.review, held.overpaidTokenAmount],
          ["REVIEW", "OBLIGATION_ALREADY_SETTLED", "49900000"],
        );
        assert.equal(await paymentStatus(service, early.paymentId), "CONFIRMED");
        assert.equal((await paidEvents(service)).length, paidBefore + 1, "one obligation.paid");
        await expectError(
          await call(env, "POST", "/pay/api/session", { body: { token: late.token } }),
          400,
          "PAYMENT_TICKET_INVALID",
        );
      },
    );
  } finally {
    await service.close();
  }
});
