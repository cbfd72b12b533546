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
import { clients, payments, paymentSessions } from "../../db/schema.ts";
import { reduceOpenObligations } from "../../domain/billing/fee_obligations.ts";
import type { UserSignedAction } from "../../venues/types.ts";
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
import { call, createPartner, expectError, expectJson, operator, type TestPartner } from "../_helpers/http.ts";
import { connectWallet, fund, openPage, signAsWallet } from "../connect/connect_fixture.ts";
import { ik } from "../setup/setup_fixture.ts";
import { openObligation } from "./obligation_fixture.ts";

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

    await t.step(
      "two links for one obligation: once one pays, the other says so and no wallet is asked to sign",
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
        const ticket = await watchTicket(service, tab);
        await clickButton(page, "Conectar carteira");
        await waitForText(page, "Assinar envio de 49,90 USDC");
        // ...when the first link pays the obligation elsewhere.
        const elsewhere = await signedElsewhere(service, first);
        const paid = await expectJson(await elsewhere.request("/signature", { signature: elsewhere.signature }), 200);
        assert.equal(paid.status, "CONFIRMED");

        await clickButton(page, "Assinar envio de 49,90 USDC");
        await waitForText(page, "Esta cobrança já está paga");
        assert.equal(wallet.signed.length, 0, "the wallet was never asked to sign");
        assert.match(await textOf(page), /Você não precisa pagar de novo/);
        assert.equal(await page.$("main button"), null, "nothing to sign or try");
        assert.equal(await backLink(page), RETURN_URL);
        assert.equal(await page.evaluate(`sessionStorage.getItem("pay-ticket")`), null, "the ticket is forgotten");
        await screenshots(page, GROUP, "already-paid-while-open");
        secretsStayed(service, tab, second.token, ticket);
        assertOnlyExpectedErrors(tab, [/409 POST .*\/pay\/api\/wallet/]);

        // The second link opened again, on a phone: the page says the charge is paid, from the first screen.
        const phone = await newTab(browser, "phone");
        const phoneWallet = await injectWallet(phone.page, { privateKey: service.principalKey });
        await open(phone, second.url);
        await waitForText(phone.page, "Esta cobrança já está paga");
        assert.equal(await heading(phone.page), "Esta cobrança já está paga");
        const text = await textOf(phone.page);
        assert.ok(text.includes("Solicitado por Corretora Exemplo"), text);
        assert.ok(!text.includes("Pagar 49,90"), "no payment offered");
        assert.equal(await phone.page.$("main button"), null);
        assert.equal(await backLink(phone.page), RETURN_URL);
        assert.equal(
          await phone.page.evaluate("document.documentElement.scrollWidth <= innerWidth"),
          true,
          "fits the phone",
        );
        await screenshots(phone.page, GROUP, "already-paid");
        assert.equal(phoneWallet.signed.length, 0);
        secretsStayed(service, phone, second.token);
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
        const text = await textOf(phone.page);
        assert.match(text, /Nada foi enviado da sua conta\.\s+Este link pedia 49,90 USDC/);
        assert.match(text, /peça um novo link de pagamento/);
        assert.equal(await backLink(phone.page), RETURN_URL);
        assert.equal(await phone.page.$("main button"), null);
        await screenshots(phone.page, GROUP, "amount-changed");
        secretsStayed(service, phone, link.token);
        assertOnlyExpectedErrors(phone, [/409 POST .*\/pay\/api\/session/]);

        const tab = await newTab(browser);
        await injectWallet(tab.page, { privateKey: service.principalKey });
        await open(tab, goneLink.url);
        await waitForText(tab.page, "Não há nada a pagar");
        assert.match(await textOf(tab.page), /Esta cobrança foi cancelada e não precisa mais ser paga/);
        await screenshots(tab.page, GROUP, "nothing-to-pay");
        secretsStayed(service, tab, goneLink.token);
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
        const ticket = await watchTicket(service, tab);
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
        await screenshots(page, GROUP, "arrived-after-paid");
        assert.equal(wallet.signed.length, 1);
        secretsStayed(service, tab, late.token, ticket);
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
