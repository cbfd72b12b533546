/**
 * Reading an ERC-20 transfer on chain, through the network's JSON-RPC with
 * viem: which token contract moved how much from whom to whom in a
 * transaction, when its block was made and how many blocks sit on top of it.
 * What the facts mean for a payment is the domain's to decide.
 */
import { createPublicClient, erc20Abi, type Hex, http, parseEventLogs, type PublicClient } from "viem";
import type { EvmNetwork } from "../../config.ts";

/** Each payment network's chain id: a node answering another is not that network. */
export const CHAIN_IDS: Record<EvmNetwork, number> = { bnb: 56, arbitrum: 42161 };

export const NETWORK_NAMES: Record<EvmNetwork, string> = { bnb: "BNB Smart Chain", arbitrum: "Arbitrum One" };

export interface TokenTransfer {
  token: string;
  from: string;
  to: string;
  value: bigint;
}

export type TransactionFacts =
  | { found: false }
  | {
    found: true;
    /** False when the transaction reverted. */
    succeeded: boolean;
    transfers: TokenTransfer[];
    blockTimeMs: number;
    confirmations: number;
  };

export interface EvmReader {
  chainId(): Promise<number>;
  /** The token's `decimals()`. */
  decimals(token: string): Promise<number>;
  transaction(hash: Hex): Promise<TransactionFacts>;
}

/** A reader of one network's node; requests time out instead of hanging a confirmation. */
export function evmReader(rpcUrl: string): EvmReader {
  const client: PublicClient = createPublicClient({ transport: http(rpcUrl, { timeout: 10_000, retryCount: 1 }) });
  const decimalsOf = new Map<string, Promise<number>>();
  return {
    chainId: () => client.getChainId(),
    decimals(token) {
      const key = token.toLowerCase();
      if (!decimalsOf.has(key)) {
        const read = client.readContract({ address: key as Hex, abi: erc20Abi, functionName: "decimals" })
          .then(Number);
        // A failed read is not remembered: the next instruction asks again.
        read.catch(() => decimalsOf.delete(key));
        decimalsOf.set(key, read);
      }
      return decimalsOf.get(key)!;
    },
    async transaction(hash) {
      const receipt = await client.getTransactionReceipt({ hash }).catch((error) => {
        if (error?.name === "TransactionReceiptNotFoundError") return null;
        throw error;
      });
      if (!receipt) return { found: false };
      const [block, latest] = await Promise.all([
        client.getBlock({ blockNumber: receipt.blockNumber }),
        // Fresh: viem caches the block number for seconds, which would count confirmations short.
        client.getBlockNumber({ cacheTime: 0 }),
      ]);
      const transfers = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs })
        .map((log) => ({
          token: log.address.toLowerCase(),
          from: log.args.from.toLowerCase(),
          to: log.args.to.toLowerCase(),
          value: log.args.value,
        }));
      return {
        found: true,
        succeeded: receipt.status === "success",
        transfers,
        blockTimeMs: Number(block.timestamp) * 1000,
        confirmations: Number(latest - receipt.blockNumber) + 1,
      };
    },
  };
}
