/**
 * The browser-test kit itself: Chromium found or installed, pages at desktop
 * and phone size, screenshots, the page record, and the EIP-1193 test wallet
 * signing real EIP-712 typed data. The hosted-page tests build on these.
 */
import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { type Hex, recoverMessageAddress, recoverTypedDataAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { assertCleanPage, assertNotInUrls, emulate, openBrowser, screenshots } from "../_helpers/browser.ts";
import { injectWallet, type TypedDataJson } from "../_helpers/eip1193_wallet.ts";
import { startTestEnv } from "../_helpers/env.ts";

const GROUP = "browser_smoke";

function serve(handler: (request: Request) => Response | Promise<Response>) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler);
  return { server, url: `http://127.0.0.1:${server.addr.port}` };
}

/** Width and height of a PNG, from its IHDR chunk. */
async function pngSize(path: string): Promise<[number, number]> {
  const bytes = await Deno.readFile(path);
  const view = new DataView(bytes.buffer);
  return [view.getUint32(16), view.getUint32(20)];
}

/** What the page sees of the screen it is on. */
async function screenOf(page: Page) {
  return await page.evaluate(() => {
    const scope = globalThis as unknown as {
      screen: { width: number };
      devicePixelRatio: number;
      navigator: { maxTouchPoints: number };
      matchMedia(query: string): { matches: boolean };
    };
    return {
      width: scope.screen.width,
      scale: scope.devicePixelRatio,
      touch: scope.navigator.maxTouchPoints > 0 && scope.matchMedia("(pointer: coarse)").matches,
    };
  });
}

const PHONE = { width: 390, scale: 3, touch: true };
const DESKTOP = { width: 1280, scale: 1, touch: false };

Deno.test("/docs renders at desktop and phone size with no console error or failed request", async () => {
  const env = await startTestEnv();
  const service = serve((request) => env.app.fetch(request));
  try {
    await using browser = await openBrowser();
    const { page, record } = await browser.newPage("phone");
    const response = await page.goto(`${service.url}/docs`, { waitUntil: "networkidle0" });
    assert.equal(response?.status(), 200);
    assert.deepEqual(await screenOf(page), PHONE);
    await page.evaluate("window.loadedOnce = true");

    // The reference is long: the top of it is enough to see the layout.
    const [desktopPng, phonePng] = await screenshots(page, GROUP, "docs", { fullPage: false });
    assert.deepEqual(await pngSize(desktopPng), [1280, 800]);
    assert.deepEqual(await pngSize(phonePng), [390 * 3, 844 * 3]);
    // Back on the phone, and never reloaded on the way (a state reached by clicks would survive).
    assert.deepEqual(await screenOf(page), PHONE);
    assert.equal(await page.evaluate("window.loadedOnce"), true);
    await emulate(page, "desktop");
    assert.deepEqual(await screenOf(page), DESKTOP);
    assertCleanPage(record);
  } finally {
    await service.server.shutdown();
    await env.close();
  }
});

/** A sample from EIP-712 itself, on the chain the page switches to. */
const MAIL: TypedDataJson = {
  types: {
    EIP712Domain: [
      { name: "name", type: "string" },
      { name: "version", type: "string" },
      { name: "chainId", type: "uint256" },
      { name: "verifyingContract", type: "address" },
    ],
    Person: [{ name: "name", type: "string" }, { name: "wallet", type: "address" }],
    Mail: [{ name: "from", type: "Person" }, { name: "to", type: "Person" }, { name: "contents", type: "string" }],
  },
  primaryType: "Mail",
  domain: {
    name: "Ether Mail",
    version: "1",
    chainId: 1,
    verifyingContract: "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC",
  },
  message: {
    from: { name: "Cow", wallet: "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826" },
    to: { name: "Bob", wallet: "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB" },
    contents: "Hello, Bob!",
  },
};

/** A dapp in one page: each button asks the wallet something and shows the answer (or the error code) in #out. */
const DAPP = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Wallet smoke</title>
<style>
  body { font: 16px/1.4 sans-serif; margin: 0; padding: 24px; background: #f4f6f8; }
  main { max-width: 560px; margin: auto; background: #fff; padding: 24px; border-radius: 12px; }
  button { display: block; width: 100%; margin: 8px 0; padding: 14px; font-size: 16px; }
  pre { white-space: pre-wrap; word-break: break-all; background: #eef; padding: 12px; min-height: 3em; }
</style></head>
<body><main>
<h1>Wallet smoke test</h1>
<p id="announced">no EIP-6963 announcement</p>
<button id="sign">Connect and sign the mail</button>
<button id="personal">Sign a message</button>
<pre id="out"></pre>
</main>
<script>
  const MAIL = ${JSON.stringify(MAIL)};
  const out = document.getElementById("out");
  const events = [];
  window.addEventListener("eip6963:announceProvider", (event) => {
    document.getElementById("announced").textContent = "announced: " + event.detail.info.name;
  });
  window.dispatchEvent(new Event("eip6963:requestProvider"));
  window.ethereum.on("accountsChanged", (accounts) => events.push(["accountsChanged", accounts]));
  window.ethereum.on("chainChanged", (chainId) => events.push(["chainChanged", chainId]));
  const show = (value) => (out.textContent = JSON.stringify({ ...value, events }, null, 1));
  async function run(work) {
    try { show(await work()); } catch (error) { show({ error: { code: error.code, message: error.message } }); }
  }
  document.getElementById("sign").onclick = () => run(async () => {
    const [account] = await window.ethereum.request({ method: "eth_requestAccounts" });
    await window.ethereum.request({ method: "wallet_switchEthereumChain", params: [{ chainId: "0x1" }] });
    const chainId = await window.ethereum.request({ method: "eth_chainId" });
    const signature = await window.ethereum.request({
      method: "eth_signTypedData_v4",
      params: [account, JSON.stringify(MAIL)],
    });
    return { account, chainId, signature };
  });
  document.getElementById("personal").onclick = () => run(async () => {
    const [account] = await window.ethereum.request({ method: "eth_accounts" });
    const signature = await window.ethereum.request({ method: "personal_sign", params: ["0x68656c6c6f", account] });
    return { account, signature };
  });
  // The page sends what follows the '#' nowhere: the test checks that no URL carried it.
  fetch("/ping?from=page");
</script></body></html>`;

async function recoverMail(signature: Hex) {
  const { EIP712Domain: _, ...types } = MAIL.types;
  return await recoverTypedDataAddress({
    domain: MAIL.domain,
    types,
    primaryType: "Mail",
    message: MAIL.message,
    signature,
  });
}

async function clickAndRead(page: Page, button: string) {
  const out = "document.getElementById('out')";
  await page.evaluate(`${out}.textContent = ""`);
  await page.click(button);
  await page.waitForFunction(`${out}.textContent !== ""`, { timeout: 10_000 });
  return JSON.parse(await page.evaluate(`${out}.textContent`) as string);
}

Deno.test("The injected wallet signs real EIP-712 typed data with the test key; a refusal reaches the page as 4001", async () => {
  const dapp = serve((request) =>
    new URL(request.url).pathname === "/"
      ? new Response(DAPP, { headers: { "content-type": "text/html; charset=utf-8" } })
      : new Response("pong")
  );
  try {
    await using browser = await openBrowser();
    const { page, record } = await browser.newPage("phone");
    const privateKey = generatePrivateKey();
    const wallet = await injectWallet(page, { privateKey, name: "Smoke Wallet" });
    assert.equal(wallet.address, privateKeyToAccount(privateKey).address);
    const secret = "fragment-secret-0123456789";
    await page.goto(`${dapp.url}/#t=${secret}`, { waitUntil: "networkidle0" });
    assert.equal(
      await page.$eval("#announced", (element) => (element as unknown as { textContent: string }).textContent),
      "announced: Smoke Wallet",
    );
    assert.deepEqual(await page.evaluate("window.ethereum.request({ method: 'eth_accounts' })"), []);

    wallet.rejectNext("accounts");
    assert.equal((await clickAndRead(page, "#sign")).error.code, 4001);
    await screenshots(page, GROUP, "wallet-accounts-refused");

    wallet.rejectNext();
    const refused = await clickAndRead(page, "#sign");
    assert.equal(refused.error.code, 4001);
    assert.equal(wallet.signed.length, 0);
    await screenshots(page, GROUP, "wallet-signature-refused");

    const signed = await clickAndRead(page, "#sign");
    assert.equal(signed.account, wallet.address);
    assert.equal(signed.chainId, "0x1");
    assert.deepEqual(signed.events, [["chainChanged", "0x1"]]);
    assert.equal(wallet.signed.length, 1);
    assert.deepEqual(wallet.signed[0].typedData, MAIL);
    assert.equal(wallet.signed[0].signature, signed.signature);
    const signer = await recoverMail(signed.signature);
    assert.equal(signer, wallet.address);
    await screenshots(page, GROUP, "wallet-signed");

    const personal = await clickAndRead(page, "#personal");
    assert.equal(
      await recoverMessageAddress({ message: { raw: "0x68656c6c6f" }, signature: personal.signature }),
      signer,
    );

    // A wrong wallet: the user switches account. A request naming the old one is refused (4100, as a wallet
    // does); the page hears accountsChanged, and its next signature comes from the other key.
    const other = await wallet.useAccount(generatePrivateKey());
    assert.notEqual(other, signer);
    const staleCode = await page.evaluate(`window.ethereum.request({
      method: "eth_signTypedData_v4", params: ["${signer}", ${JSON.stringify(JSON.stringify(MAIL))}],
    }).then(() => "signed", (error) => error.code)`);
    assert.equal(staleCode, 4100);
    const switched = await clickAndRead(page, "#sign");
    assert.equal(switched.account, other);
    assert.deepEqual(switched.events.at(-1), ["accountsChanged", [other]]);
    assert.equal(await recoverMail(switched.signature), other);

    assert.deepEqual(
      wallet.calls.filter((call) => call.outcome !== "answered").map((call) => [call.method, call.outcome]),
      [["eth_requestAccounts", "rejected"], ["eth_signTypedData_v4", "rejected"], ["eth_signTypedData_v4", "error"]],
    );
    assertCleanPage(record);
    assert.ok(record.requests.some((url) => url.includes("/ping?from=page")));
    assertNotInUrls(record, secret);
  } finally {
    await dapp.server.shutdown();
  }
});
