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
 *
 * With a node (an anvil URL per chain, `nodes`) it also sends transactions:
 * `eth_sendTransaction` is signed here with the account's key (viem) and sent
 * raw to the node of the chain the wallet is on, as a wallet does; reads such
 * as `eth_blockNumber` or `eth_getTransactionReceipt` go to that node too.
 * With `knownChains` it knows only those networks: switching to another
 * answers 4902 until the page adds it with `wallet_addEthereumChain`
 * (MetaMask's behaviour).
 *
 * ```ts
 * const wallet = await injectWallet(page, { privateKey, nodes: { "0xa4b1": chain.url }, knownChains: ["0x1"] });
 * wallet.sent[0].hash;                                      // the transaction the page had sent
 * ```
 */
import type { Page } from "puppeteer-core";
import { createWalletClient, defineChain, type Hex, http } from "viem";
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
  /** A node per chain id (hex, e.g. anvil's URL for "0xa4b1"): transactions and reads on that chain go there. */
  nodes?: Record<string, string>;
  /**
   * The networks the wallet knows (hex chain ids; the current one is always
   * known). Default: every network, so switching always succeeds.
   */
  knownChains?: Hex[];
}

/** eth_sendTransaction as the page sent it, and the hash the node answered. */
export interface SentTransaction {
  from: Hex;
  to: Hex;
  data: Hex | undefined;
  value: bigint;
  chainId: Hex;
  hash: Hex;
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
export type Refusable = "signature" | "accounts" | "switchChain" | "addChain" | "transaction";

export interface TestWallet {
  /** The current account. */
  readonly address: Hex;
  /** The current chain, hex. */
  readonly chainId: Hex;
  /** Every typed-data signature the wallet made, in order. */
  signed: SignedTypedData[];
  /** Every personal_sign signature the wallet made, in order. */
  signedMessages: SignedMessage[];
  /** Every transaction the wallet sent, in order. */
  sent: SentTransaction[];
  /** Every network the page added with wallet_addEthereumChain, as it described it. */
  addedChains: Record<string, unknown>[];
  /** Every request the page made, with how it ended. */
  calls: { method: string; params: unknown[]; outcome: "answered" | "rejected" | "error" }[];
  /** The next request of that kind (default: a signature) is refused as a user would: EIP-1193 code 4001. Calls add up. */
  rejectNext(what?: Refusable): void;
  /** The user switches the wallet to another account (a wrong wallet): `accountsChanged` fires in the page. */
  useAccount(privateKey: Hex): Promise<Hex>;
}

type Answer = { result: unknown } | { error: { code: number; message: string } };

const USER_REJECTED = { code: 4001, message: "User rejected the request." };
const HEX_CHAIN = /^0x[0-9a-f]+$/i;
/** Reads a wallet passes to its node for the page. */
const NODE_READS = new Set([
  "eth_blockNumber",
  "eth_getTransactionReceipt",
  "eth_getTransactionByHash",
  "eth_call",
  "eth_estimateGas",
  "eth_getBalance",
  "eth_gasPrice",
]);

/** The canonical hex form of a chain id ("0xA4B1" and "0xa4b1" are one chain). */
const chainKey = (chainId: string) => `0x${BigInt(chainId).toString(16)}` as Hex;

let injected = 0;

/** Call before the page loads the document that should see the wallet (it stays across navigations). */
export async function injectWallet(page: Page, options: TestWalletOptions = {}): Promise<TestWallet> {
  let account: PrivateKeyAccount = privateKeyToAccount(options.privateKey ?? generatePrivateKey());
  let chainId: Hex = options.chainId ?? "0xa4b1";
  let authorized = options.connected ?? false;
  const nodes = new Map(Object.entries(options.nodes ?? {}).map(([id, url]) => [chainKey(id), url]));
  const known = options.knownChains ? new Set(options.knownChains.map(chainKey)) : null;
  known?.add(chainKey(chainId));
  const nodeOf = (id: Hex) => nodes.get(chainKey(id));
  const switchTo = async (wanted: string) => {
    if (Number(wanted) !== Number(chainId)) {
      chainId = chainKey(wanted);
      await emit("chainChanged", chainId);
    }
  };
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
        const wanted = (params[0] as { chainId?: string } | undefined)?.chainId;
        if (typeof wanted !== "string" || !HEX_CHAIN.test(wanted)) {
          return { error: { code: -32602, message: "Expected [{ chainId: hex }]" } };
        }
        // MetaMask answers an unknown network before asking the user anything.
        if (known && !known.has(chainKey(wanted))) {
          return {
            error: {
              code: 4902,
              message: `Unrecognized chain ID "${wanted}". Try adding the chain using wallet_addEthereumChain first.`,
            },
          };
        }
        if (refused("switchChain")) return { error: USER_REJECTED };
        await switchTo(wanted);
        return { result: null };
      }
      case "wallet_addEthereumChain": {
        const network = params[0] as { chainId?: string; chainName?: string; rpcUrls?: unknown } | undefined;
        if (
          typeof network?.chainId !== "string" || !HEX_CHAIN.test(network.chainId) ||
          typeof network.chainName !== "string" || !Array.isArray(network.rpcUrls) || !network.rpcUrls.length
        ) {
          return { error: { code: -32602, message: "Expected [{ chainId: hex, chainName, rpcUrls: [url], ... }]" } };
        }
        if (refused("addChain")) return { error: USER_REJECTED };
        wallet.addedChains.push(network);
        known?.add(chainKey(network.chainId));
        // Once added, the wallet offers to switch to it, and the user accepts.
        await switchTo(network.chainId);
        return { result: null };
      }
      case "eth_sendTransaction": {
        const request = params[0] as { from?: string; to?: string; data?: Hex; value?: Hex; gas?: Hex } | undefined;
        if (!authorized || unauthorized(request?.from)) {
          return { error: { code: 4100, message: `The account ${request?.from} is not authorized by the user` } };
        }
        if (typeof request?.to !== "string") {
          return { error: { code: -32602, message: "Expected [{ from, to, ... }]" } };
        }
        const node = nodeOf(chainId);
        if (!node) return { error: { code: -32603, message: `The test wallet has no node for chain ${chainId}` } };
        if (refused("transaction")) return { error: USER_REJECTED };
        const hash = await sendTransaction(node, request as TransactionRequest);
        wallet.sent.push({
          from: account.address,
          to: request.to as Hex,
          data: request.data,
          value: BigInt(request.value ?? 0),
          chainId,
          hash,
        });
        return { result: hash };
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
      default: {
        const node = NODE_READS.has(method) ? nodeOf(chainId) : undefined;
        if (node) return await nodeRead(node, method, params);
        return { error: { code: 4200, message: `The test wallet does not support ${method}` } };
      }
    }
  };

  /** Sign the transaction here with the account's key and hand the raw bytes to the node (viem does both). */
  const sendTransaction = async (node: string, request: TransactionRequest): Promise<Hex> => {
    const chain = defineChain({
      id: Number(chainId),
      name: `test-${Number(chainId)}`,
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [node] } },
    });
    const client = createWalletClient({ account, chain, transport: http(node) });
    return await client.sendTransaction({
      to: request.to,
      data: request.data,
      value: request.value === undefined ? undefined : BigInt(request.value),
      gas: request.gas === undefined ? undefined : BigInt(request.gas),
    });
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
    sent: [],
    addedChains: [],
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

interface TransactionRequest {
  to: Hex;
  data?: Hex;
  value?: Hex;
  gas?: Hex;
}

/** A read passed to the node as is, its JSON-RPC error (if any) answered as the wallet's. */
async function nodeRead(node: string, method: string, params: unknown[]): Promise<Answer> {
  const answer = await fetch(node, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  }).then((response) => response.json());
  return answer.error ? { error: answer.error } : { result: answer.result };
}
