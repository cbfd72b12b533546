/**
 * The test wallet a checkout page pays with (tests/_helpers/eip1193_wallet.ts),
 * in headless Chromium against anvil: a network the wallet does not know
 * answers 4902 until the page adds it, an ERC-20 `transfer` the page asks
 * for is signed with the payer's key and mined, and the checkout's status
 * follows that very transaction to PAID. The page's own script plays no part
 * here: the calls are made in the page as a script would make them.
 */
import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { encodeFunctionData, erc20Abi, type Hex } from "viem";
import { generatePrivateKey } from "viem/accounts";
import { openBrowser } from "../_helpers/browser.ts";
import { injectWallet } from "../_helpers/eip1193_wallet.ts";
import { expectJson } from "../_helpers/http.ts";
import {
  instruct,
  obligation,
  openPage,
  RECIPIENT,
  REQUIRED,
  runPayments,
  statusOf,
  stop,
  world,
} from "./checkout_fixture.ts";

/** `window.ethereum.request(...)` in the page: its result, or the EIP-1193 error's code and message. */
function request(page: Page, method: string, params: unknown[] = []) {
  return page.evaluate(
    async (method, params) => {
      const provider = (globalThis as unknown as {
        ethereum: { request(args: { method: string; params: unknown[] }): Promise<unknown> };
      }).ethereum;
      try {
        return { result: await provider.request({ method, params }) };
      } catch (error) {
        const { code, message } = error as { code: number; message: string };
        return { error: { code, message } };
      }
    },
    method,
    params,
  );
}

const ARBITRUM = {
  chainId: "0xa4b1",
  chainName: "Arbitrum One",
  rpcUrls: ["https://arb1.arbitrum.io/rpc"],
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  blockExplorerUrls: ["https://arbiscan.io"],
};

Deno.test("test wallet: adds an unknown network, sends the exact ERC-20 transfer to anvil; the checkout sees it paid", async () => {
  const w = await world({ served: true });
  const browser = await openBrowser();
  try {
    const owed = await obligation(w, "wallet");
    const instruction = await expectJson(await instruct(w, owed.obligationId), 200);
    const checkout = await openPage(w, instruction.paymentUrl);
    const { page } = await browser.newPage("phone");
    // On Ethereum mainnet, knowing no other network, with a node for Arbitrum (anvil) once it is added.
    const wallet = await injectWallet(page, {
      privateKey: w.payerKey,
      chainId: "0x1",
      knownChains: ["0x1"],
      nodes: { "0xa4b1": w.chain.url },
    });
    await page.goto(`${w.origin}/pay`, { waitUntil: "domcontentloaded" });
    await page.evaluate(() => {
      const scope = globalThis as unknown as {
        chains: string[];
        ethereum: { on(event: string, listener: (chainId: string) => void): void };
      };
      scope.chains = [];
      scope.ethereum.on("chainChanged", (chainId) => scope.chains.push(chainId));
    });

    assert.deepEqual(await request(page, "eth_requestAccounts"), { result: [wallet.address] });
    const unknown = await request(page, "wallet_switchEthereumChain", [{ chainId: "0xa4b1" }]);
    assert.equal(unknown.error?.code, 4902, "an unknown network, as MetaMask answers");
    assert.deepEqual(await request(page, "eth_chainId"), { result: "0x1" });
    // Without a node for mainnet the wallet sends nothing there.
    assert.equal((await request(page, "eth_blockNumber")).error?.code, 4200);

    wallet.rejectNext("addChain");
    assert.equal((await request(page, "wallet_addEthereumChain", [ARBITRUM])).error?.code, 4001);
    assert.deepEqual(await request(page, "wallet_addEthereumChain", [ARBITRUM]), { result: null });
    assert.deepEqual(await request(page, "eth_chainId"), { result: "0xa4b1" });
    assert.deepEqual(await page.evaluate("chains"), ["0xa4b1"], "the page heard the switch");
    assert.deepEqual(wallet.addedChains, [ARBITRUM]);
    assert.deepEqual(await request(page, "wallet_switchEthereumChain", [{ chainId: "0xA4B1" }]), { result: null });
    assert.deepEqual(await request(page, "eth_blockNumber"), { result: `0x${(await w.chain.head()).toString(16)}` });

    const transfer = {
      from: wallet.address,
      to: checkout.payment.tokenAddress,
      data: encodeFunctionData({
        abi: erc20Abi,
        functionName: "transfer",
        args: [checkout.payment.recipient as Hex, BigInt(checkout.payment.tokenAmount)],
      }),
    };
    wallet.rejectNext("transaction");
    assert.equal((await request(page, "eth_sendTransaction", [transfer])).error?.code, 4001);
    const stranger = await request(page, "eth_sendTransaction", [{
      ...transfer,
      from: generatePrivateKey().slice(0, 42),
    }]);
    assert.equal(stranger.error?.code, 4100, "only the connected account sends");
    assert.equal(wallet.sent.length, 0, "nothing was sent");

    const sent = await request(page, "eth_sendTransaction", [transfer]);
    const hash = sent.result as Hex;
    assert.match(hash, /^0x[0-9a-f]{64}$/);
    assert.deepEqual(wallet.sent, [{
      from: wallet.address,
      to: transfer.to,
      data: transfer.data,
      value: 0n,
      chainId: "0xa4b1",
      hash,
    }]);
    const receipt = await w.chain.client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    assert.equal(receipt.status, "success");
    const read = await request(page, "eth_getTransactionReceipt", [hash]);
    assert.equal((read.result as { status: string }).status, "0x1", "reads reach the node through the wallet");

    const seen = await statusOf(w, checkout.ticket);
    assert.deepEqual([seen.status, seen.confirmations, seen.txHash], ["CONFIRMING", 1, hash]);
    await w.chain.mine(REQUIRED - 1);
    await runPayments(w);
    const paid = await statusOf(w, checkout.ticket);
    assert.deepEqual([paid.status, paid.receipt.txHash, paid.receipt.reference], [
      "PAID",
      hash,
      instruction.payment.paymentId,
    ]);
    assert.equal(RECIPIENT, checkout.payment.recipient);
  } finally {
    await browser.close();
    await stop(w);
  }
});
