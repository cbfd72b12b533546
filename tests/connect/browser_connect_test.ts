/**
 * The hosted connect page in headless Chromium, against the real service on a
 * real HTTP origin and the venue simulators: a VENUE_A key pasted into the
 * form, a VENUE_B wallet (EIP-1193, signing real EIP-712 typed data), the QA
 * test account and test wallet, and the failure paths. One browser serves
 * every step; each step has a service of its own (the page's per-IP limit and
 * the test clock are per service). Every page state is screenshotted at
 * desktop and phone width under tests/.screenshots/connect/.
 *
 * Where the link token goes is checked on every page: never in a request URL,
 * a header or a console line, in a request body only in the exchange, and
 * never in the service's log (env.close() scans it for the token, the page
 * ticket and the API secrets).
 */
import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { generatePrivateKey } from "viem/accounts";
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
import { injectWallet } from "../_helpers/eip1193_wallet.ts";
import { startServedTestEnv, type TestEnv } from "../_helpers/env.ts";
import { call, createPartner, expectJson, type TestPartner } from "../_helpers/http.ts";

const GROUP = "connect";
const RETURN_URL = "https://app.partner.example/volta";

// ------------------------------------------------------------------ a service on a real origin

interface Service {
  env: TestEnv;
  partner: TestPartner;
  origin: string;
  close(): Promise<void>;
}

/**
 * The test env behind a real HTTP server, with CONNECT_URL pointing at it, so
 * the page opens from the very link the partner API answers. Partner
 * "Corretora Exemplo" (overrides apply) with its client "ana".
 */
async function startService(partnerOverrides: Record<string, unknown> = {}): Promise<Service> {
  const { env, origin, close } = await startServedTestEnv();
  const partner = await createPartner(env, partnerOverrides);
  await expectJson(
    await partner.call("POST", "/v1/users", {
      body: { externalUserId: "ana" },
      headers: { "idempotency-key": "ana-00001" },
    }),
    201,
  );
  return { env, partner, origin, close };
}

async function withService(work: (service: Service) => Promise<void>, partnerOverrides = {}): Promise<void> {
  const service = await startService(partnerOverrides);
  try {
    await work(service);
  } finally {
    await service.close();
  }
}

interface Link {
  url: string;
  token: string;
  sessionId: string;
}

/** A connect session through the partner API; its token is watched in the service's log. */
async function createLink(
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

async function sessionState(service: Service, link: Link) {
  return await expectJson(await service.partner.call("GET", `/v1/users/ana/connect-sessions/${link.sessionId}`), 200);
}

async function simulatorKey(service: Service, options: Record<string, unknown> = {}) {
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

async function fundWallet(service: Service, address: string) {
  const response = await fetch(`${service.env.venueUrls.venueB}/_control/wallets`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ address, usdc: "10000" }),
  });
  assert.equal(response.status, 200);
  await response.body?.cancel();
}

async function venueBView(service: Service) {
  const body = await expectJson(await service.partner.call("GET", "/v1/users/ana/providers"), 200);
  return body.providers.find((provider: { providerId: string }) => provider.providerId === "VENUE_B");
}

// ------------------------------------------------------------------ the page

/** The element with the focus, as `tag#id` or `tag`. */
async function focused(page: Page): Promise<string> {
  return await page.evaluate(
    `(() => { const e = document.activeElement; return e.tagName.toLowerCase() + (e.id ? "#" + e.id : ""); })()`,
  ) as string;
}

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

/** Pastes `value` into a field, as a client pastes a key copied from the exchange. */
async function paste(page: Page, selector: string, value: string) {
  await page.focus(selector);
  await page.$eval(selector, (input, text) => {
    const field = input as unknown as { value: string; dispatchEvent(event: unknown): void };
    field.value = text as string;
    field.dispatchEvent(new (globalThis as unknown as { Event: new (type: string) => unknown }).Event("input"));
  }, value);
}

async function submitKey(page: Page, keys: { apiKey: string; apiSecret: string }) {
  await paste(page, "#api-key", keys.apiKey);
  await paste(page, "#api-secret", keys.apiSecret);
  await clickButton(page, "Conectar conta");
}

/** The page ticket this tab holds (sessionStorage), watched in the service's log from now on. */
async function watchTicket(service: Service, tab: Tab): Promise<string> {
  const ticket = await tab.page.evaluate(`sessionStorage.getItem("connect-ticket")`) as string | null;
  assert.ok(ticket, "the page keeps its ticket for a reload");
  service.env.watchedSecrets.add("page ticket", ticket);
  return ticket;
}

/**
 * The user cancels the builder-fee signature once, in the wallet's pop-up.
 * (The wallet helper refuses "the next" signature; this one is the second of
 * the flow, which the test cannot time from outside.) It also keeps what the
 * page told the user while the wallet asked.
 */
async function cancelBuilderSignatureOnce(page: Page) {
  await page.evaluateOnNewDocument(() => {
    type Provider = { request(args: { method: string; params?: unknown[] }): Promise<unknown> };
    const scope = globalThis as unknown as {
      ethereum: Provider;
      document: { querySelector(selector: string): { innerText: string } | null };
      __builderPrompt?: string;
    };
    const provider = scope.ethereum;
    const request = provider.request.bind(provider);
    let cancelled = false;
    provider.request = (args) => {
      const builderStep = args.method === "eth_signTypedData_v4" && String(args.params?.[1]).includes("BuilderFee");
      if (builderStep) scope.__builderPrompt = scope.document.querySelector(".feedback")?.innerText;
      if (builderStep && !cancelled) {
        cancelled = true;
        return Promise.reject(Object.assign(new Error("User rejected the request."), { code: 4001 }));
      }
      return request(args);
    };
  });
}

/** The link token and page ticket went only where they belong (tests/_helpers/page_tab.ts). */
const secretsStayed = (service: Service, tab: Tab, token: string, ticket?: string) =>
  assertSecretsStayed(tab, { origin: service.origin, exchangePath: "/connect/api/session" }, token, ticket);

// ------------------------------------------------------------------ the steps

Deno.test("the hosted connect page in headless Chromium", async (t) => {
  // Each run leaves exactly the states it saw, none from an earlier version of this file.
  await Deno.remove(new URL(`../.screenshots/${GROUP}/`, import.meta.url), { recursive: true }).catch(() => {});
  await using browser = await openBrowser();

  await t.step(
    "VENUE_A: instructions, two refusals with attempts left, a key that can withdraw is warned about",
    () =>
      withService(async (service) => {
        const tab = await newTab(browser);
        const { page } = tab;
        const link = await createLink(service, "VENUE_A");
        await open(tab, link.url);
        assert.equal(new URL(page.url()).hash, "", "the fragment left the address bar");
        assert.equal(await page.evaluate("history.length"), 2, "no history entry holds the token but the replaced one");
        await waitForText(page, "Conecte sua conta");
        const ticket = await watchTicket(service, tab);
        const text = await textOf(page);
        for (
          const wanted of [
            "Solicitado por Corretora Exemplo",
            "HMAC",
            "Futuros",
            "saques desativados",
            "IP do serviço",
            "One-way",
            "ativo único",
            "margem isolada",
            "Ambiente de testes",
          ]
        ) assert.ok(text.includes(wanted), `the page says "${wanted}":\n${text}`);
        assert.equal(await focused(page), "h1", "the screen's heading has the focus");
        // Every field has its label; the secret is a password field with nothing to remember or correct.
        const fields = await page.$$eval("input", (inputs) =>
          inputs.map((input) => {
            const node = input as unknown as {
              id: string;
              type: string;
              autocomplete: string;
              spellcheck: boolean;
              labels: { length: number };
            };
            return [node.id, node.type, node.autocomplete, node.spellcheck, node.labels.length];
          }));
        assert.deepEqual(fields, [["api-key", "text", "off", false, 1], ["api-secret", "password", "off", false, 1]]);
        await clickButton(page, "Mostrar");
        assert.equal(await page.$eval("#api-secret", (input) => (input as unknown as { type: string }).type), "text");
        await clickButton(page, "Ocultar");
        assert.equal(
          await page.$eval("#api-secret", (input) => (input as unknown as { type: string }).type),
          "password",
        );
        await screenshots(page, GROUP, "a-form");

        await clickButton(page, "Conectar conta");
        await waitForText(page, "Preencha a chave de API e a chave secreta");
        assert.equal(await focused(page), "input#api-key");

        const wrong = await simulatorKey(service);
        await submitKey(page, { apiKey: wrong.apiKey, apiSecret: "x".repeat(64) });
        await waitForText(page, "Restam 4 tentativas");
        assert.match(await textOf(page), /O provedor recusou a chave/);
        assert.equal(await page.$eval("#api-secret", (input) => (input as unknown as { value: string }).value), "");
        await screenshots(page, GROUP, "a-refused-wrong-key");

        const hedge = await simulatorKey(service, { dualSidePosition: true });
        await submitKey(page, hedge);
        await waitForText(page, "Restam 3 tentativas");
        assert.match(await textOf(page), /posição única \(One-way\)/, "the refusal says what to change");
        await screenshots(page, GROUP, "a-refused-settings");
        assert.equal((await sessionState(service, link)).failureCode, "PROVIDER_CREDENTIAL_REJECTED");

        await submitKey(page, await simulatorKey(service, { canWithdraw: true }));
        await waitForText(page, "Conta conectada");
        assert.match(await textOf(page), /Esta chave permite saques/);
        assert.match(await textOf(page), /sem a permissão de saque/);
        assert.equal(await backLink(page), RETURN_URL);
        assert.equal(new URL(page.url()).pathname, "/connect", "no automatic redirect");
        await screenshots(page, GROUP, "a-connected-withdrawal-warning");

        const state = await sessionState(service, link);
        assert.equal(state.status, "CONNECTED");
        const accounts = await expectJson(await service.partner.call("GET", "/v1/users/ana/accounts"), 200);
        const venueA = accounts.accounts.find((account: { providerId: string }) => account.providerId === "VENUE_A");
        assert.equal(venueA.permissions.canWithdraw, true);

        // The same link again, in a fresh load: used.
        await open(tab, link.url);
        await waitForText(page, "Link já utilizado");
        // A link that no longer opens tells the page nothing about its session: no partner name, no way back.
        assert.equal(await backLink(page), null);
        await screenshots(page, GROUP, "a-link-already-used");

        secretsStayed(service, tab, link.token, ticket);
        assertOnlyExpectedErrors(tab, [/400 POST .*\/connect\/api\/api-key/, /409 POST .*\/connect\/api\/session/]);
      }),
  );

  await t.step(
    "VENUE_A on a phone: the QA test account fills the form; no returnUrl, no back button",
    () =>
      withService(async (service) => {
        const tab = await newTab(browser, "phone");
        const { page } = tab;
        const link = await createLink(service, "VENUE_A", { returnUrl: null });
        await open(tab, link.url);
        await waitForText(page, "Usar conta de teste");
        const ticket = await watchTicket(service, tab);
        assert.equal(await backLink(page), null);
        await clickButton(page, "Usar conta de teste");
        await waitForText(page, "Conta de teste criada");
        const filled = await page.$$eval(
          "input",
          (inputs) => inputs.map((i) => (i as unknown as { value: string }).value),
        );
        assert.ok(filled.every((value) => value.length >= 16), "both fields are filled");
        service.env.watchedSecrets.add("apiSecret", filled[1]);
        await screenshots(page, GROUP, "a-test-account-filled");
        await clickButton(page, "Conectar conta");
        await waitForText(page, "Conta conectada");
        assert.match(await textOf(page), /Você já pode fechar esta página/);
        assert.equal(await backLink(page), null);
        await screenshots(page, GROUP, "a-connected");
        assert.equal((await sessionState(service, link)).status, "CONNECTED");
        // The page fits the phone: nothing wider than the screen.
        assert.equal(await page.evaluate("document.documentElement.scrollWidth <= innerWidth"), true);
        secretsStayed(service, tab, link.token, ticket);
        assertCleanPage(tab.record);
      }),
  );

  await t.step(
    "VENUE_A: the fifth refusal ends the link; a sixth attempt is CONNECT_ATTEMPTS_EXHAUSTED",
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
        await screenshots(page, GROUP, "a-last-attempt");
        await submitKey(page, { apiKey: wrong.apiKey, apiSecret: "5".repeat(64) });
        await waitForText(page, "As tentativas deste link acabaram");
        assert.equal(await heading(page), "Tentativas esgotadas");
        assert.equal(await page.$("form"), null, "no form to try again");
        assert.equal(await backLink(page), RETURN_URL);
        await screenshots(page, GROUP, "a-fifth-refusal");
        const state = await sessionState(service, link);
        assert.equal(state.status, "FAILED");
        assert.equal(state.failureCode, "PROVIDER_CREDENTIAL_REJECTED");

        await open(tab, link.url);
        await waitForText(page, "Tentativas esgotadas para este link");
        assert.equal(await heading(page), "Tentativas esgotadas");
        await screenshots(page, GROUP, "a-sixth-attempt");
        secretsStayed(service, tab, link.token, ticket);
        assertOnlyExpectedErrors(tab, [/400 POST .*\/connect\/api\/api-key/, /409 POST .*\/connect\/api\/session/]);
      }),
  );

  await t.step(
    "links that cannot work: expired while open, expired before opening, unknown, incomplete",
    () =>
      withService(async (service) => {
        const tab = await newTab(browser);
        const { page } = tab;
        const link = await createLink(service, "VENUE_A");
        await open(tab, link.url);
        await waitForText(page, "Conecte sua conta");
        const ticket = await watchTicket(service, tab);
        service.env.clock.freeze(service.env.clock.now() + 15 * 60_000);
        await submitKey(page, await simulatorKey(service));
        await waitForText(page, "A sessão de conexão expirou");
        assert.equal(await heading(page), "Link expirado");
        assert.equal(await backLink(page), RETURN_URL);
        await screenshots(page, GROUP, "link-expired-while-open");

        const late = await createLink(service, "VENUE_A");
        service.env.clock.freeze(service.env.clock.now() + 15 * 60_000);
        await open(tab, late.url);
        await waitForText(page, "A sessão de conexão expirou");
        assert.equal(await heading(page), "Link expirado");
        await screenshots(page, GROUP, "link-expired");

        const unknown = `${service.origin}/connect#t=${"A".repeat(43)}`;
        await open(tab, unknown);
        await waitForText(page, "Link de conexão inválido");
        assert.equal(await heading(page), "Link inválido");
        await screenshots(page, GROUP, "link-invalid");

        await open(tab, `${service.origin}/connect`);
        await waitForText(page, "Abra o link completo");
        assert.equal(await heading(page), "Link incompleto");
        await screenshots(page, GROUP, "link-incomplete");

        secretsStayed(service, tab, link.token, ticket);
        secretsStayed(service, tab, late.token);
        assertOnlyExpectedErrors(tab, [
          /409 POST .*\/connect\/api\/(api-key|session)/,
          /404 POST .*\/connect\/api\/session/,
        ]);
      }),
  );

  await t.step(
    "VENUE_B: the wallet signs approveAgent then approveBuilderFee; cancels in the wallet are no attempt and resume",
    () =>
      withService(async (service) => {
        const tab = await newTab(browser);
        const { page } = tab;
        const wallet = await injectWallet(page, { privateKey: generatePrivateKey() });
        await cancelBuilderSignatureOnce(page);
        await fundWallet(service, wallet.address);
        const link = await createLink(service, "VENUE_B");
        await open(tab, link.url);
        await waitForText(page, "Conectar carteira");
        const ticket = await watchTicket(service, tab);
        assert.match(await textOf(page), /não pode sacar nem transferir/);
        await screenshots(page, GROUP, "b-start");

        wallet.rejectNext("accounts");
        await clickButton(page, "Conectar carteira");
        await waitForText(page, "Conexão cancelada na carteira");

        wallet.rejectNext("signature");
        await clickButton(page, "Conectar carteira");
        await waitForText(page, "Assinatura cancelada na carteira");
        assert.match(await textOf(page), /não conta como tentativa/);
        await screenshots(page, GROUP, "b-signature-cancelled");
        const afterCancel = await expectJson(
          await call(service.env, "GET", "/connect/api/session", { headers: { authorization: `Bearer ${ticket}` } }),
          200,
        );
        assert.equal(afterCancel.session.attemptsLeft, 5, "a cancel in the wallet is not an attempt");

        // The agent is signed; the builder fee is cancelled; trying again asks only for the builder fee.
        await clickButton(page, "Conectar carteira");
        await waitForText(page, "Assinatura cancelada na carteira");
        assert.deepEqual(wallet.signed.map((entry) => entry.typedData.primaryType), [
          "HyperliquidTransaction:ApproveAgent",
        ]);
        await clickButton(page, "Conectar carteira");
        await waitForText(page, "Conta conectada");
        assert.deepEqual(wallet.signed.map((entry) => entry.typedData.primaryType), [
          "HyperliquidTransaction:ApproveAgent",
          "HyperliquidTransaction:ApproveBuilderFee",
        ]);
        assert.equal(wallet.signed[1].typedData.message.maxFeeRate, "0.025%");
        const prompt = await page.evaluate("globalThis.__builderPrompt") as string;
        assert.match(prompt, /Assinatura 2 de 2: Aprove a taxa da plataforma de até 0,025% por operação/);
        assert.match(await textOf(page), new RegExp(`Carteira ${wallet.address.slice(0, 6)}`));
        await screenshots(page, GROUP, "b-connected");

        const state = await sessionState(service, link);
        assert.equal(state.status, "CONNECTED");
        assert.equal(state.failureCode, null, "a cancel in the wallet is not a refusal");
        const venueB = await venueBView(service);
        assert.equal(venueB.connection, "CONNECTED");
        assert.equal(venueB.builder.approvalStatus, "APPROVED");
        secretsStayed(service, tab, link.token, ticket);
        assertCleanPage(tab.record);

        // BUILDER_APPROVAL signed by another wallet than the connected one: WALLET_MISMATCH, an attempt.
        const strangerTab = await newTab(browser);
        await injectWallet(strangerTab.page, { privateKey: generatePrivateKey() });
        const builderLink = await createLink(service, "VENUE_B", { purpose: "BUILDER_APPROVAL" });
        await open(strangerTab, builderLink.url);
        await waitForText(strangerTab.page, "Aprove a taxa da plataforma");
        assert.doesNotMatch(await textOf(strangerTab.page), /Usar carteira de teste/);
        await screenshots(strangerTab.page, GROUP, "b-builder-approval-start");
        await clickButton(strangerTab.page, "Conectar carteira e aprovar");
        await waitForText(strangerTab.page, "carteira diferente");
        assert.match(await textOf(strangerTab.page), /Restam 4 tentativas/);
        await screenshots(strangerTab.page, GROUP, "b-wallet-mismatch");
        assert.equal((await sessionState(service, builderLink)).failureCode, "WALLET_MISMATCH");
        secretsStayed(service, strangerTab, builderLink.token, await watchTicket(service, strangerTab));
        assertOnlyExpectedErrors(strangerTab, [/403 POST .*\/connect\/api\/wallet\/start/]);

        // The connected wallet, whose approval already covers the fee: nothing to sign.
        await open(tab, builderLink.url);
        await clickButton(page, "Conectar carteira e aprovar");
        await waitForText(page, "Taxa aprovada");
        assert.equal(wallet.signed.length, 2);
        await screenshots(page, GROUP, "b-builder-fee-approved");

        // A browser with no wallet at all.
        const bare = await newTab(browser);
        const plain = await createLink(service, "VENUE_B");
        await open(bare, plain.url);
        await clickButton(bare.page, "Conectar carteira");
        await waitForText(bare.page, "Nenhuma carteira encontrada");
        await screenshots(bare.page, GROUP, "b-no-wallet");
        secretsStayed(service, bare, plain.token);
      }),
  );

  await t.step("VENUE_B with no builder fee: the agent is the one signature", () =>
    withService(async (service) => {
      const tab = await newTab(browser, "phone");
      const wallet = await injectWallet(tab.page, { privateKey: generatePrivateKey() });
      await fundWallet(service, wallet.address);
      const link = await createLink(service, "VENUE_B");
      await open(tab, link.url);
      await clickButton(tab.page, "Conectar carteira");
      await waitForText(tab.page, "Conta conectada");
      assert.deepEqual(wallet.signed.map((entry) => entry.typedData.primaryType), [
        "HyperliquidTransaction:ApproveAgent",
      ]);
      assert.equal((await venueBView(service)).connection, "CONNECTED");
      secretsStayed(service, tab, link.token);
      assertCleanPage(tab.record);
    }, { builder: { feeTenthsBps: 0 } }));

  await t.step(
    "VENUE_B in QA: a test wallet made in the page, funded on the simulator, connects with no wallet",
    () =>
      withService(async (service) => {
        const tab = await newTab(browser);
        const link = await createLink(service, "VENUE_B");
        await open(tab, link.url);
        await waitForText(tab.page, "Usar carteira de teste");
        await clickButton(tab.page, "Usar carteira de teste");
        await waitForText(tab.page, "Conta conectada");
        await screenshots(tab.page, GROUP, "b-test-wallet-connected");
        const venueB = await venueBView(service);
        assert.equal(venueB.connection, "CONNECTED");
        assert.equal(venueB.builder.approvalStatus, "APPROVED");
        const balance = await expectJson(
          await service.partner.call("GET", "/v1/users/ana/account?providerId=VENUE_B"),
          200,
        );
        assert.equal(balance.balances[0].total, 10000);
        secretsStayed(service, tab, link.token);
        assertCleanPage(tab.record);
      }),
  );
});
