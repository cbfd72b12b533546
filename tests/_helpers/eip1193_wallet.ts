/**
 * A browser wallet for page tests: `window.ethereum` (EIP-1193, also announced
 * through EIP-6963) injected into the page before its scripts run, backed by a
 * private key that stays in the test process: the page reaches it only through
 * a binding (puppeteer's `exposeFunction`). Typed data is signed for real
 * (viem), as a wallet's `eth_signTypedData_v4` does, so the server verifies real
 * signatures.
 *
 * ```ts
 * const wallet = await injectWallet(page, { privateKey }); // before page.goto
 * wallet.rejectNext();                                     // the user clicks "Reject" once
 * await wallet.useAccount(otherKey);                       // the user switches to another account
 * wallet.signed[0].typedData.primaryType;                  // what the page had signed
 * ```
 */
import type { Page } from "puppeteer-core";
import type { Hex } from "viem";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";

export interface TestWalletOptions {
  /** The account's key (default: a fresh one). */
  privateKey?: Hex;
  /** The chain the wallet is on, hex (default Arbitrum One, 0xa4b1); `wallet_switchEthereumChain` changes it. */
  chainId?: Hex;
  /**
   * The site is already connected: `eth_accounts` answers the account before any
   * `eth_requestAccounts` (default false: `[]` until the page asks, as a wallet does).
   */
  connected?: boolean;
  /** The wallet's name in its EIP-6963 announcement. */
  name?: string;
}

/** eth_signTypedData_v4 as the page sent it, and what the wallet answered. */
export interface SignedTypedData {
  address: Hex;
  typedData: TypedDataJson;
  signature: Hex;
}

/** personal_sign as the page sent it, and what the wallet answered. */
export interface SignedMessage {
  address: Hex;
  /** As sent: hex bytes, or text. */
  message: string;
  signature: Hex;
}

export interface TypedDataJson {
  types: Record<string, { name: string; type: string }[]>;
  primaryType: string;
  domain: Record<string, unknown>;
  message: Record<string, unknown>;
}

/** What a user can refuse in the wallet's pop-up. */
export type Refusable = "signature" | "accounts" | "switchChain";

export interface TestWallet {
  /** The current account. */
  readonly address: Hex;
  /** The current chain, hex. */
  readonly chainId: Hex;
  /** Every typed-data signature the wallet made, in order. */
  signed: SignedTypedData[];
  /** Every personal_sign signature the wallet made, in order. */
  signedMessages: SignedMessage[];
  /** Every request the page made, with how it ended. */
  calls: { method: string; params: unknown[]; outcome: "answered" | "rejected" | "error" }[];
  /** The next request of that kind (default: a signature) is refused as a user would: EIP-1193 code 4001. Calls add up. */
  rejectNext(what?: Refusable): void;
  /** The user switches the wallet to another account (a wrong wallet): `accountsChanged` fires in the page. */
  useAccount(privateKey: Hex): Promise<Hex>;
}

type Answer = { result: unknown } | { error: { code: number; message: string } };

const USER_REJECTED = { code: 4001, message: "User rejected the request." };

let injected = 0;

/** Call before the page loads the document that should see the wallet (it stays across navigations). */
export async function injectWallet(page: Page, options: TestWalletOptions = {}): Promise<TestWallet> {
  let account: PrivateKeyAccount = privateKeyToAccount(options.privateKey ?? generatePrivateKey());
  let chainId: Hex = options.chainId ?? "0xa4b1";
  let authorized = options.connected ?? false;
  const refusals = new Map<Refusable, number>();
  // Several wallets may live in one browser (one per page); each gets its own binding.
  const binding = `__testWallet${++injected}`;

  const emit = async (event: string, payload: unknown) => {
    await page.evaluate(
      (name, event, payload) => {
        (globalThis as unknown as Record<string, { emit(event: string, payload: unknown): void }>)[name]?.emit(
          event,
          payload,
        );
      },
      binding,
      event,
      payload,
    ).catch(() => {
      // the page is gone or between documents: nobody is listening
    });
  };
  const refused = (what: Refusable) => {
    const left = refusals.get(what) ?? 0;
    if (left > 0) refusals.set(what, left - 1);
    return left > 0;
  };
  const unauthorized = (address: unknown) =>
    typeof address !== "string" || address.toLowerCase() !== account.address.toLowerCase();

  const answer = async (method: string, params: unknown[]): Promise<Answer> => {
    switch (method) {
      case "eth_requestAccounts":
        if (refused("accounts")) return { error: USER_REJECTED };
        authorized = true;
        return { result: [account.address] };
      case "eth_accounts":
        return { result: authorized ? [account.address] : [] };
      case "eth_chainId":
        return { result: chainId };
      case "net_version":
        return { result: String(Number(chainId)) };
      case "wallet_switchEthereumChain": {
        if (refused("switchChain")) return { error: USER_REJECTED };
        const wanted = (params[0] as { chainId?: string } | undefined)?.chainId;
        if (typeof wanted !== "string" || !/^0x[0-9a-f]+$/i.test(wanted)) {
          return { error: { code: -32602, message: "Expected [{ chainId: hex }]" } };
        }
        if (Number(wanted) !== Number(chainId)) {
          chainId = `0x${Number(wanted).toString(16)}`;
          await emit("chainChanged", chainId);
        }
        return { result: null };
      }
      case "eth_signTypedData_v4": {
        const [address, json] = params;
        if (!authorized || unauthorized(address)) {
          return { error: { code: 4100, message: `The account ${address} is not authorized by the user` } };
        }
        let typedData: TypedDataJson;
        try {
          typedData = typeof json === "string" ? JSON.parse(json) : json as TypedDataJson;
        } catch {
          return { error: { code: -32602, message: "The typed data is not JSON" } };
        }
        // A wallet refuses to sign for a chain other than the one it is on (MetaMask does).
        const domainChain = typedData.domain?.chainId;
        if (domainChain !== undefined && Number(domainChain) !== Number(chainId)) {
          return {
            error: { code: -32602, message: `The typed data names chain ${domainChain}, the wallet is on ${chainId}` },
          };
        }
        if (refused("signature")) return { error: USER_REJECTED };
        // The types go as sent, EIP712Domain included, as a wallet hashes them.
        const signature = await account.signTypedData(typedData as Parameters<typeof account.signTypedData>[0]);
        wallet.signed.push({ address: account.address, typedData, signature });
        return { result: signature };
      }
      case "personal_sign": {
        const [message, address] = params;
        if (!authorized || unauthorized(address)) {
          return { error: { code: 4100, message: `The account ${address} is not authorized by the user` } };
        }
        if (typeof message !== "string") return { error: { code: -32602, message: "Expected [message, address]" } };
        if (refused("signature")) return { error: USER_REJECTED };
        const signature = await account.signMessage({
          message: /^0x([0-9a-f]{2})*$/i.test(message) ? { raw: message as Hex } : message,
        });
        wallet.signedMessages.push({ address: account.address, message, signature });
        return { result: signature };
      }
      default:
        return { error: { code: 4200, message: `The test wallet does not support ${method}` } };
    }
  };

  const wallet: TestWallet = {
    get address() {
      return account.address;
    },
    get chainId() {
      return chainId;
    },
    signed: [],
    signedMessages: [],
    calls: [],
    rejectNext: (what = "signature") => void refusals.set(what, (refusals.get(what) ?? 0) + 1),
    async useAccount(privateKey) {
      account = privateKeyToAccount(privateKey);
      if (authorized) await emit("accountsChanged", [account.address]);
      return account.address;
    },
  };

  await page.exposeFunction(binding, async (method: string, params: unknown[]): Promise<Answer> => {
    const result = await answer(method, params).catch((error) => ({
      error: { code: -32603, message: `The test wallet failed: ${error?.message ?? error}` },
    }));
    wallet.calls.push({
      method,
      params,
      outcome: "result" in result ? "answered" : result.error.code === 4001 ? "rejected" : "error",
    });
    return result;
  });

  await page.evaluateOnNewDocument(
    (binding: string, info: { uuid: string; name: string; icon: string; rdns: string }) => {
      // This runs in the page, before its own scripts.
      const scope = globalThis as unknown as Record<string, unknown> & {
        dispatchEvent(event: unknown): void;
        addEventListener(type: string, listener: () => void): void;
        CustomEvent: new (type: string, init: { detail: unknown }) => unknown;
      };
      const call = scope[binding] as (method: string, params: unknown[]) => Promise<Answer>;
      const listeners = new Map<string, Set<(payload: unknown) => void>>();
      const provider = {
        isTestWallet: true,
        async request(args: { method: string; params?: unknown[] | Record<string, unknown> }) {
          if (!args || typeof args.method !== "string") {
            throw Object.assign(new Error("Expected { method, params? }"), { code: -32600 });
          }
          const params = Array.isArray(args.params) ? args.params : args.params ? [args.params] : [];
          const answer = await call(args.method, params);
          if ("error" in answer) throw Object.assign(new Error(answer.error.message), answer.error);
          return answer.result;
        },
        on(event: string, listener: (payload: unknown) => void) {
          if (!listeners.has(event)) listeners.set(event, new Set());
          listeners.get(event)!.add(listener);
          return provider;
        },
        removeListener(event: string, listener: (payload: unknown) => void) {
          listeners.get(event)?.delete(listener);
          return provider;
        },
      };
      // What the test process calls to fire an event in the page.
      Object.defineProperty(scope, binding, {
        value: Object.assign(call, {
          emit(event: string, payload: unknown) {
            for (const listener of listeners.get(event) ?? []) listener(payload);
          },
        }),
      });
      Object.defineProperty(scope, "ethereum", { value: provider, configurable: true, writable: true });
      const detail = Object.freeze({ info: Object.freeze(info), provider });
      const announce = () => scope.dispatchEvent(new scope.CustomEvent("eip6963:announceProvider", { detail }));
      scope.addEventListener("eip6963:requestProvider", announce);
      announce();
    },
    binding,
    {
      uuid: crypto.randomUUID(),
      name: options.name ?? "Test Wallet",
      icon: `data:image/svg+xml,${
        encodeURIComponent(
          '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><rect width="1" height="1"/></svg>',
        )
      }`,
      rdns: "example.test.wallet",
    },
  );
  return wallet;
}
