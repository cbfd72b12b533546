/**
 * The hosted payment page (VENUE_B_USD_SEND) in headless Chromium, against
 * the real service on a real HTTP origin and the VENUE_B simulator: the
 * client's principal wallet (EIP-1193, signing real EIP-712 typed data)
 * connects and signs the send the service built, and the obligation is paid
 * once; another wallet is refused; a spent link says so. Every page state is
 * screenshotted at desktop and phone width under tests/.screenshots/pay/.
 *
 * Where the link token and the page ticket go is checked on every page: never
 * in a request URL, a header (the ticket only in Authorization) or a console
 * line, and never in the service's log (env.close() scans it).
 */
import assert from "node:assert/strict";
import { and, eq } from "drizzle-orm";
import type { Page } from "puppeteer-core";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { withTransaction } from "../../db/client.ts";
import { clients } from "../../db/schema.ts";
import { createObligation } from "../../domain/billing/fee_obligations.ts";
import { generateAgentKey } from "../../venues/venue_b/signing.ts";
import { assertCleanPage, openBrowser, screenshots } from "../_helpers/browser.ts";
import {
  assertOnlyExpectedErrors,
  assertSecretsStayed,
  heading,
  newTab,
  open,
  type Tab,
  textOf,
  waitForText,
} from "../_helpers/page_tab.ts";
import { injectWallet, type TestWallet } from "../_helpers/eip1193_wallet.ts";
import { startServedTestEnv, type TestEnv } from "../_helpers/env.ts";
import { createPartner, expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import { connectWallet, fund, openPage } from "../connect/connect_fixture.ts";
import { ik } from "../setup/setup_fixture.ts";

const GROUP = "pay";
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

/** An open USDC obligation of ana at VENUE_B. */
async function obligation(service: Service, reference: string, amountMicros = 49_900_000) {
  const { env, partner, client } = service;
  return await withTransaction(
    env.deps.db,
    async (tx) =>
      (await createObligation(tx, { partnerId: partner.partnerId, tenantId: client.tenantId, externalUserId: "ana" }, {
        clientId: client.id,
        providerId: "VENUE_B",
        source: "MONTHLY_SUBSCRIPTION",
        reference,
        amountMicros,
        dueFrom: env.clock.now(),
        dueDays: 5,
        statementId: null,
      }, env.clock.now()))!,
  );
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

async function backLink(page: Page): Promise<string | null> {
  return await page.$eval("main", (main) => {
    const link = (main as unknown as { querySelector(s: string): { href: string } | null }).querySelector("a.back");
    return link?.href ?? null;
  });
}

async function clickButton(page: Page, label: string) {
  const buttons = await page.$$("main button");
  for (const button of buttons) {
    const text = await button.evaluate((node) => (node as unknown as { textContent: string }).textContent);
    if (text.trim() === label) return await button.click();
  }
  throw new Error(`No button "${label}"; the page shows:\n${await textOf(page)}`);
}

/** The page ticket this tab holds (sessionStorage), watched in the service's log from now on. */
async function watchTicket(service: Service, tab: Tab): Promise<string> {
  const ticket = await tab.page.evaluate(`sessionStorage.getItem("pay-ticket")`) as string | null;
  assert.ok(ticket, "the page keeps its ticket for a reload");
  service.env.watchedSecrets.add("page ticket", ticket);
  return ticket;
}

/** The link token and page ticket went only where they belong (tests/_helpers/page_tab.ts). */
const secretsStayed = (service: Service, tab: Tab, token: string, ticket?: string) =>
  assertSecretsStayed(tab, { origin: service.origin, exchangePath: "/pay/api/session" }, token, ticket);

// ------------------------------------------------------------------ the steps

Deno.test("the hosted payment page in headless Chromium", async (t) => {
  // Each run leaves exactly the states it saw, none from an earlier version of this file.
  await Deno.remove(new URL(`../.screenshots/${GROUP}/`, import.meta.url), { recursive: true }).catch(() => {});
  await using browser = await openBrowser();
  const service = await startService();
  let paid: Link | undefined;

  try {
    await t.step("the principal wallet connects and signs the exact send: the obligation is paid once", async () => {
      const owed = await obligation(service, "2026-11");
      const link = await payLink(service, owed.obligationId);
      const tab = await newTab(browser);
      const { page } = tab;
      const wallet: TestWallet = await injectWallet(page, { privateKey: service.principalKey });
      await open(tab, link.url);
      assert.equal(new URL(page.url()).hash, "", "the fragment left the address bar");
      assert.equal(await page.evaluate("history.length"), 2, "no history entry holds the token but the replaced one");
      await waitForText(page, "Conectar carteira");
      const ticket = await watchTicket(service, tab);
      assert.equal(await heading(page), "Pagar 49,90 USDC");
      const text = await textOf(page);
      for (
        const wanted of [
          "Solicitado por Corretora Exemplo",
          "49,90 USDC",
          wallet.address.toLowerCase(),
          service.platformWallet,
          "Carteira que paga",
          "Carteira de destino",
        ]
      ) assert.ok(text.includes(wanted), `the page says "${wanted}":\n${text}`);
      assert.equal(await backLink(page), RETURN_URL);
      await screenshots(page, GROUP, "start");

      // The user cancels the signature once in the wallet: nothing sent, the same message can be signed after.
      await clickButton(page, "Conectar carteira");
      await waitForText(page, "Assinar envio de 49,90 USDC");
      await screenshots(page, GROUP, "connected");
      wallet.rejectNext("signature");
      await clickButton(page, "Assinar envio de 49,90 USDC");
      await waitForText(page, "Assinatura cancelada na carteira");
      assert.equal(await paymentStatus(service, link.paymentId), "PENDING");
      await screenshots(page, GROUP, "signature-cancelled");

      await clickButton(page, "Assinar envio de 49,90 USDC");
      await waitForText(page, "Pagamento confirmado");
      assert.match(await textOf(page), /Seu envio de 49,90 USDC foi confirmado/);
      assert.equal(await backLink(page), RETURN_URL);
      assert.equal(new URL(page.url()).pathname, "/pay", "no automatic redirect");
      assert.equal(await page.evaluate(`sessionStorage.getItem("pay-ticket")`), null, "the spent ticket is forgotten");
      await screenshots(page, GROUP, "paid");
      assert.equal(wallet.signed.length, 1);
      const signed = wallet.signed[0].typedData;
      assert.equal(signed.primaryType, "HyperliquidTransaction:SendAsset");
      assert.deepEqual(
        [signed.message.destination, signed.message.amount, signed.message.token !== undefined],
        [service.platformWallet, "49.9", true],
      );

      assert.equal(await obligationStatus(service, owed.obligationId), "PAID");
      assert.equal(await paymentStatus(service, link.paymentId), "CONFIRMED");
      const events = await paidEvents(service);
      assert.equal(events.length, 1);
      secretsStayed(service, tab, link.token, ticket);
      assertCleanPage(tab.record);
      paid = link;
    });

    await t.step("on a phone, another wallet than the principal: WALLET_MISMATCH, nothing paid", async () => {
      const owed = await obligation(service, "2026-12");
      const link = await payLink(service, owed.obligationId);
      const tab = await newTab(browser, "phone");
      const { page } = tab;
      const stranger = await injectWallet(page, { privateKey: generatePrivateKey() });
      await open(tab, link.url);
      await waitForText(page, "Conectar carteira");
      const ticket = await watchTicket(service, tab);
      assert.equal(await page.evaluate("document.documentElement.scrollWidth <= innerWidth"), true, "fits the phone");
      await clickButton(page, "Conectar carteira");
      await waitForText(page, "não é a carteira que paga esta cobrança");
      const text = await textOf(page);
      assert.ok(text.includes(stranger.address.slice(0, 6)), "names the wallet that connected");
      assert.match(text, /troque para a conta 0x[0-9a-f]{40}/);
      assert.ok(text.includes("Conectar carteira"), "the client can connect again");
      assert.equal(stranger.signed.length, 0, "nothing was offered for signature");
      assert.equal(await page.evaluate("document.documentElement.scrollWidth <= innerWidth"), true, "the error fits");
      await screenshots(page, GROUP, "wallet-mismatch");

      assert.equal(await obligationStatus(service, owed.obligationId), "OPEN");
      assert.equal(await paymentStatus(service, link.paymentId), "PENDING");
      assert.equal((await paidEvents(service)).length, 1);
      secretsStayed(service, tab, link.token, ticket);
      assertOnlyExpectedErrors(tab, [/403 POST .*\/pay\/api\/wallet/]);
    });

    await t.step("the used link opened again: expired or used, no way back to a session it no longer has", async () => {
      assert.ok(paid, "the first step paid");
      const tab = await newTab(browser);
      const { page } = tab;
      await injectWallet(page, { privateKey: service.principalKey });
      await open(tab, paid.url);
      await waitForText(page, "expirou ou já foi usado");
      assert.equal(await heading(page), "Link expirado ou já usado");
      assert.match(await textOf(page), /peça um novo link de pagamento/);
      assert.equal(await backLink(page), null);
      assert.equal(await page.$("main button"), null, "nothing to try");
      await screenshots(page, GROUP, "link-used");
      secretsStayed(service, tab, paid.token);
      assertOnlyExpectedErrors(tab, [/400 POST .*\/pay\/api\/session/]);
    });

    await t.step(
      "no wallet in the browser; the venue refuses a send the balance cannot cover, a new signature pays",
      async () => {
        const owed = await obligation(service, "2027-01", 1_500_000_000);
        const link = await payLink(service, owed.obligationId);

        const bare = await newTab(browser, "phone");
        await open(bare, link.url);
        await clickButton(bare.page, "Conectar carteira");
        await waitForText(bare.page, "Nenhuma carteira encontrada");
        await screenshots(bare.page, GROUP, "no-wallet");
        secretsStayed(service, bare, link.token, await watchTicket(service, bare));
        assertCleanPage(bare.record);

        // The same link in the wallet's browser (a new exchange; the bare tab's ticket no longer works).
        const tab = await newTab(browser);
        const { page } = tab;
        const wallet = await injectWallet(page, { privateKey: service.principalKey });
        await open(tab, link.url);
        const ticket = await watchTicket(service, tab);
        await clickButton(page, "Conectar carteira");
        await waitForText(page, "Assinar envio de 1.500,00 USDC");
        await clickButton(page, "Assinar envio de 1.500,00 USDC");
        await waitForText(page, "A corretora recusou o envio");
        assert.match(await textOf(page), /Nenhum valor saiu da sua conta/);
        await screenshots(page, GROUP, "payment-rejected");
        assert.equal(await paymentStatus(service, link.paymentId), "PENDING");
        assert.equal(await obligationStatus(service, owed.obligationId), "OPEN");

        // Funded now: connecting again builds a new message (a new nonce), and that one pays.
        await fund(service.env, wallet.address, "1000");
        await clickButton(page, "Conectar carteira");
        await waitForText(page, "Assinar envio de 1.500,00 USDC");
        await clickButton(page, "Assinar envio de 1.500,00 USDC");
        await waitForText(page, "Pagamento confirmado");
        assert.equal(wallet.signed.length, 2);
        assert.notEqual(wallet.signed[0].typedData.message.nonce, wallet.signed[1].typedData.message.nonce);
        assert.equal(await obligationStatus(service, owed.obligationId), "PAID");
        assert.equal((await paidEvents(service)).length, 2);
        secretsStayed(service, tab, link.token, ticket);
        assertOnlyExpectedErrors(tab, [/400 POST .*\/pay\/api\/signature/]);
      },
    );
  } finally {
    await service.close();
  }
});
