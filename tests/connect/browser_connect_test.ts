/**
 * The hosted connect page in headless Chromium, against the real service and
 * the venue simulators: a VENUE_A key pasted into the form, a VENUE_B wallet
 * (EIP-1193, signing real EIP-712 typed data), and the failure paths. Every
 * state is screenshotted at desktop and phone width under tests/.screenshots/.
 */
import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { generatePrivateKey } from "viem/accounts";
import { openBrowser, type PageRecord, screenshot, VIEWPORTS } from "../_helpers/browser.ts";
import { injectWallet } from "../_helpers/eip1193_wallet.ts";
import type { TestEnv } from "../_helpers/env.ts";
import { expectJson, type TestPartner } from "../_helpers/http.ts";
import { setUp as setUpClient, simulatorAccount } from "./connect_fixture.ts";

const GROUP = "connect";

/** Both widths of the state the page is in now. */
async function snap(page: Page, name: string) {
  await screenshot(page, GROUP, name, "desktop");
  await page.setViewport(VIEWPORTS.phone);
  await screenshot(page, GROUP, name, "phone");
  await page.setViewport(VIEWPORTS.desktop);
}

/** Runs in the page: a DOM element as far as these tests touch it (the DOM's types are not in Deno's). */
type PageElement = { innerText: string; value: string; href: string };

async function textOf(page: Page): Promise<string> {
  return await page.$eval("main", (main) => (main as unknown as PageElement).innerText);
}

async function waitForText(page: Page, text: string) {
  try {
    await page.waitForFunction(
      (wanted: string) =>
        (globalThis as unknown as { document: { querySelector(s: string): PageElement | null } }).document
          .querySelector("main")?.innerText.includes(wanted),
      { timeout: 10_000 },
      text,
    );
  } catch (error) {
    throw new Error(`Waited for "${text}"; the page shows: ${await textOf(page)}`, { cause: error });
  }
}

interface Setup {
  env: TestEnv;
  partner: TestPartner;
  origin: string;
  close(): Promise<void>;
}

async function fundWallet(setup: Setup, address: string) {
  const response = await fetch(`${setup.env.venueUrls.venueB}/_control/wallets`, {
    method: "POST",
    body: JSON.stringify({ address, usdc: "5000" }),
  });
  assert.equal(response.status, 200);
  await response.body?.cancel();
}

async function setUp(): Promise<Setup> {
  const { env, partner } = await setUpClient();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request, info) => env.app.fetch(request, info),
  );
  return {
    env,
    partner,
    origin: `http://127.0.0.1:${server.addr.port}`,
    async close() {
      await server.shutdown();
      await env.close();
    },
  };
}

/** A fresh link, opened in `page`; answers the token so tests can check where it went. */
async function openLink(setup: Setup, page: Page, providerId: string, purpose = "CONNECT") {
  const session = await expectJson(
    await setup.partner.call("POST", "/v1/users/ana/connect-sessions", {
      body: { providerId, purpose, returnUrl: "https://app.partner.example/volta" },
    }),
    201,
  );
  const token = session.connectUrl.split("#t=")[1] as string;
  setup.env.watchedSecrets.add("connect token", token);
  // From a blank page, as a link opened anew: a fragment-only change would not reload the page.
  await page.goto("about:blank");
  await page.goto(`${setup.origin}/connect#t=${token}`, { waitUntil: "networkidle0" });
  return { token, sessionId: session.sessionId as string };
}

/** The fragment never goes over the wire; no request URL without it may hold the token. */
function assertTokenStayedInFragment(record: PageRecord, token: string) {
  assert.ok(record.requests.length > 0);
  for (const url of record.requests) {
    const sent = url.split("#")[0];
    assert.ok(!sent.includes(token), `the token reached a URL: ${sent}`);
  }
}

async function submitKey(page: Page, keys: { apiKey: string; apiSecret: string }) {
  await page.$eval("#api-key", (input) => ((input as unknown as PageElement).value = ""));
  await page.type("#api-key", keys.apiKey);
  await page.$eval("#api-secret", (input) => ((input as unknown as PageElement).value = ""));
  await page.type("#api-secret", keys.apiSecret);
  await page.click("button[type=submit]");
}

Deno.test("VENUE_A: the client pastes a key, sees the withdrawal warning, and the account connects", async () => {
  const setup = await setUp();
  await using browser = await openBrowser();
  try {
    const { page, record } = await browser.newPage("desktop");
    const { token, sessionId } = await openLink(setup, page, "VENUE_A");
    assert.equal(new URL(page.url()).hash, "", "the fragment left the address bar");
    await waitForText(page, "Conecte sua conta");
    assert.match(await textOf(page), /Solicitado por Corretora Exemplo/);
    assert.match(await textOf(page), /Ambiente de testes/);
    await snap(page, "a-form");

    const wrong = await simulatorAccount(setup.env);
    await submitKey(page, { apiKey: wrong.apiKey, apiSecret: "x".repeat(64) });
    await waitForText(page, "Restam 4 tentativas");
    await snap(page, "a-refused");

    const keys = await simulatorAccount(setup.env, { canWithdraw: true });
    await submitKey(page, keys);
    await waitForText(page, "Conta conectada");
    assert.match(await textOf(page), /permite saques/);
    const back = await page.$eval("a.button", (a) => (a as unknown as PageElement).href);
    assert.equal(back, "https://app.partner.example/volta");
    await snap(page, "a-connected-with-warning");

    const state = await expectJson(await setup.partner.call("GET", `/v1/users/ana/connect-sessions/${sessionId}`), 200);
    assert.equal(state.status, "CONNECTED");
    assertTokenStayedInFragment(record, token);
    assert.deepEqual(record.errors.filter((e) => !e.includes("status of 400")), []);

    // The same link again: used.
    await page.goto("about:blank");
    await page.goto(`${setup.origin}/connect#t=${token}`, { waitUntil: "networkidle0" });
    await waitForText(page, "Link já utilizado");
    await snap(page, "a-reused");
  } finally {
    await setup.close();
  }
});

Deno.test("VENUE_A: the QA test account fills the form; five refusals end the link; an expired link says so", async () => {
  const setup = await setUp();
  await using browser = await openBrowser();
  try {
    const { page } = await browser.newPage("desktop");
    await openLink(setup, page, "VENUE_A");
    await waitForText(page, "Usar conta de teste");
    await page.click("aside button");
    await waitForText(page, "Conta de teste criada");
    await snap(page, "a-test-account");
    await page.click("button[type=submit]");
    await waitForText(page, "Conta conectada");

    const wrong = await simulatorAccount(setup.env);
    await openLink(setup, page, "VENUE_A");
    for (let attempt = 1; attempt <= 4; attempt++) {
      await submitKey(page, { apiKey: wrong.apiKey, apiSecret: `${attempt}`.repeat(64) });
      await waitForText(page, attempt === 4 ? "Resta 1 tentativa" : `Restam ${5 - attempt} tentativas`);
    }
    await submitKey(page, { apiKey: wrong.apiKey, apiSecret: "5".repeat(64) });
    await waitForText(page, "Tentativas esgotadas");
    await snap(page, "a-attempts-exhausted");

    await openLink(setup, page, "VENUE_A");
    await waitForText(page, "Conecte sua conta");
    setup.env.clock.freeze(setup.env.clock.now() + 15 * 60_000);
    await page.reload({ waitUntil: "networkidle0" });
    await waitForText(page, "Link expirado");
    await snap(page, "a-expired");
  } finally {
    await setup.close();
  }
});

Deno.test("VENUE_B: a wallet signs the agent and the builder fee; a refusal in the wallet can be retried", async () => {
  const setup = await setUp();
  await using browser = await openBrowser();
  try {
    const { page, record } = await browser.newPage("desktop");
    const wallet = await injectWallet(page, { privateKey: generatePrivateKey() });
    await fundWallet(setup, wallet.address);
    const { token } = await openLink(setup, page, "VENUE_B");
    await waitForText(page, "Conectar carteira");
    await snap(page, "b-start");

    wallet.rejectNext();
    await page.click("button.primary");
    await waitForText(page, "Assinatura cancelada");
    await snap(page, "b-cancelled-in-wallet");

    await page.click("button.primary");
    await waitForText(page, "Conta conectada");
    await snap(page, "b-connected");
    assert.deepEqual(
      wallet.signed.map((entry) => entry.typedData.primaryType),
      [
        "HyperliquidTransaction:ApproveAgent",
        "HyperliquidTransaction:ApproveAgent",
        "HyperliquidTransaction:ApproveBuilderFee",
      ].slice(1),
    );
    const providers = await expectJson(await setup.partner.call("GET", "/v1/users/ana/providers"), 200);
    const venueB = providers.providers.find((p: { providerId: string }) => p.providerId === "VENUE_B");
    assert.equal(venueB.connection, "CONNECTED");
    assert.equal(venueB.builder.approvalStatus, "APPROVED");
    assertTokenStayedInFragment(record, token);
  } finally {
    await setup.close();
  }
});

Deno.test("VENUE_B: approving the builder fee from another wallet is WALLET_MISMATCH; no wallet says what to do", async () => {
  const setup = await setUp();
  await using browser = await openBrowser();
  try {
    const { page } = await browser.newPage("desktop");
    const owner = await injectWallet(page, { privateKey: generatePrivateKey() });
    await fundWallet(setup, owner.address);
    await openLink(setup, page, "VENUE_B");
    await waitForText(page, "Conectar carteira");
    await page.click("button.primary");
    await waitForText(page, "Conta conectada");
    assert.ok(owner.signed.length >= 1);

    const { page: stranger } = await browser.newPage("desktop");
    await injectWallet(stranger, { privateKey: generatePrivateKey() });
    await openLink(setup, stranger, "VENUE_B", "BUILDER_APPROVAL");
    await waitForText(stranger, "Aprove a taxa de builder");
    await stranger.click("button.primary");
    await waitForText(stranger, "carteira diferente");
    await snap(stranger, "b-wallet-mismatch");

    const { page: bare } = await browser.newPage("desktop");
    await openLink(setup, bare, "VENUE_B");
    await waitForText(bare, "Conectar carteira");
    await bare.click("button.primary");
    await waitForText(bare, "Nenhuma carteira encontrada");
    await snap(bare, "b-no-wallet");
  } finally {
    await setup.close();
  }
});

Deno.test("VENUE_B in QA: a test wallet made in the page, funded on the simulator, connects with no wallet installed", async () => {
  const setup = await setUp();
  await using browser = await openBrowser();
  try {
    const { page } = await browser.newPage("desktop");
    await openLink(setup, page, "VENUE_B");
    await waitForText(page, "Usar carteira de teste");
    await page.click("aside button");
    await waitForText(page, "Conta conectada");
    await snap(page, "b-test-wallet-connected");
    const providers = await expectJson(await setup.partner.call("GET", "/v1/users/ana/providers"), 200);
    const venueB = providers.providers.find((p: { providerId: string }) => p.providerId === "VENUE_B");
    assert.equal(venueB.connection, "CONNECTED");
    assert.equal(venueB.builder.approvalStatus, "APPROVED");
    const balance = await expectJson(await setup.partner.call("GET", "/v1/users/ana/account?providerId=VENUE_B"), 200);
    assert.equal(balance.balances[0].total, 10000);
  } finally {
    await setup.close();
  }
});
