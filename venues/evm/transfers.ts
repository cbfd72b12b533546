/**
 * Reading ERC-20 transfers on chain, through the network's JSON-RPC with
 * viem: which token contract moved how much from whom to whom in a
 * transaction, when its block was made and how many blocks sit on top of it;
 * and the Transfer logs to a set of addresses over a range of blocks (what a
 * scan for payments reads). What the facts mean for a payment is the
 * domain's to decide.
 */
import { createPublicClient, erc20Abi, type Hex, http, parseAbiItem, parseEventLogs, type PublicClient } from "viem";
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
    blockNumber: number;
    /** Lowercase; a reorg that replaced the block changes it. */
    blockHash: string;
    blockTimeMs: number;
    confirmations: number;
  };

/** A block as a scan needs it: where it is, which one it is (a reorg changes the hash), when it was made. */
export interface BlockFacts {
  number: number;
  hash: string;
  timeMs: number;
}

/** One Transfer log of a token contract (lowercase addresses). */
export interface TransferLog extends TokenTransfer {
  txHash: string;
  blockNumber: number;
}

export interface TransferLogQuery {
  tokens: string[];
  /** The `to` addresses (the log's second topic); a node's filter takes them as one OR list. */
  recipients: string[];
  fromBlock: number;
  toBlock: number;
}

export interface EvmReader {
  chainId(): Promise<number>;
  /** The token's `decimals()`. */
  decimals(token: string): Promise<number>;
  transaction(hash: Hex): Promise<TransactionFacts>;
  /** The number of the newest block. */
  head(): Promise<number>;
  block(number: number): Promise<BlockFacts>;
  /** `eth_getLogs` of the tokens' Transfer events to the recipients, blocks `fromBlock`..`toBlock` inclusive. */
  transferLogs(query: TransferLogQuery): Promise<TransferLog[]>;
}

const TRANSFER_EVENT = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)");

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
        blockNumber: Number(receipt.blockNumber),
        blockHash: receipt.blockHash.toLowerCase(),
        blockTimeMs: Number(block.timestamp) * 1000,
        confirmations: Number(latest - receipt.blockNumber) + 1,
      };
    },
    head: async () => Number(await client.getBlockNumber({ cacheTime: 0 })),
    async block(number) {
      const block = await client.getBlock({ blockNumber: BigInt(number) });
      return { number: Number(block.number), hash: block.hash.toLowerCase(), timeMs: Number(block.timestamp) * 1000 };
    },
    async transferLogs(query) {
      const logs = await client.getLogs({
        address: query.tokens as Hex[],
        event: TRANSFER_EVENT,
        args: { to: query.recipients as Hex[] },
        fromBlock: BigInt(query.fromBlock),
        toBlock: BigInt(query.toBlock),
        strict: true,
      });
      // A log the node marks removed belongs to a block a reorg took away.
      return logs.filter((log) => !log.removed).map((log) => ({
        token: log.address.toLowerCase(),
        from: log.args.from.toLowerCase(),
        to: log.args.to.toLowerCase(),
        value: log.args.value,
        txHash: log.transactionHash.toLowerCase(),
        blockNumber: Number(log.blockNumber),
      }));
    },
  };
}
