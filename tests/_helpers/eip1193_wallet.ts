/**
 * A browser wallet for page tests: `window.ethereum` (EIP-1193) injected into
 * the page before its scripts run, backed by a private key that stays in the
 * test process. Typed data is signed for real (viem), exactly as a wallet's
 * `eth_signTypedData_v4` does, so the server verifies real signatures.
 */
import type { Page } from "puppeteer-core";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";

export interface TestWalletOptions {
  privateKey: Hex;
  /** eth_chainId, hex. Default Arbitrum One (0xa4b1). */
  chainId?: Hex;
}

export interface TestWallet {
  address: Hex;
  /** Every signing request, as the page sent it. */
  signed: { method: string; typedData: Record<string, unknown> }[];
  /** The next signature request is refused as a user would (EIP-1193 code 4001). */
  rejectNext(): void;
}

export async function injectWallet(page: Page, options: TestWalletOptions): Promise<TestWallet> {
  const account = privateKeyToAccount(options.privateKey);
  const chainId = options.chainId ?? "0xa4b1";
  let rejectNext = false;
  const wallet: TestWallet = {
    address: account.address,
    signed: [],
    rejectNext: () => void (rejectNext = true),
  };
  await page.exposeFunction("__testWalletRequest", async (method: string, params: unknown[]) => {
    switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return { result: [account.address] };
      case "eth_chainId":
        return { result: chainId };
      case "wallet_switchEthereumChain":
        return { result: null };
      case "eth_signTypedData_v4": {
        if (rejectNext) {
          rejectNext = false;
          return { error: { code: 4001, message: "User rejected the request." } };
        }
        const typedData = JSON.parse(String(params[1]));
        wallet.signed.push({ method, typedData });
        const { EIP712Domain: _domain, ...types } = typedData.types;
        const signature = await account.signTypedData({
          domain: typedData.domain,
          types,
          primaryType: typedData.primaryType,
          message: typedData.message,
        });
        return { result: signature };
      }
      default:
        return { error: { code: 4200, message: `Unsupported method ${method}` } };
    }
  });
  await page.evaluateOnNewDocument(() => {
    const bridge = (globalThis as unknown as {
      __testWalletRequest(method: string, params: unknown[]): Promise<{ result?: unknown; error?: { code: number } }>;
    }).__testWalletRequest;
    const ethereum = {
      isTestWallet: true,
      async request({ method, params = [] }: { method: string; params?: unknown[] }) {
        const answer = await bridge(method, params);
        if (answer.error) throw Object.assign(new Error("wallet error"), answer.error);
        return answer.result;
      },
      on() {},
      removeListener() {},
    };
    Object.defineProperty(globalThis, "ethereum", { value: ethereum });
  });
  return wallet;
}
