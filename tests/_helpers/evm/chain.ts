/**
 * A local network for payment tests: anvil with the real chain id of `bnb` or
 * `arbitrum`, test tokens deployed on it, and wallets that mint and send.
 */
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  parseAbi,
  type PublicClient,
  type WalletClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { type Anvil, DEV_KEYS, startAnvil } from "./anvil.ts";
import token from "./test_token.json" with { type: "json" };

export interface TestChain {
  anvil: Anvil;
  url: string;
  client: PublicClient;
  /** anvil's development wallets, by index. */
  wallet(index: number): WalletClient & { address: Hex };
  deployToken(symbol: string, decimals: number): Promise<Hex>;
  mint(tokenAddress: Hex, to: Hex, amount: bigint): Promise<void>;
  /** A transfer from wallet `from`; `gas` set skips estimation, so a reverting transfer is still mined. */
  transfer(tokenAddress: Hex, from: number, to: Hex, amount: bigint, gas?: bigint): Promise<Hex>;
  mine(blocks: number): Promise<void>;
  /** The next block's timestamp (seconds). */
  setNextBlockTime(seconds: number): Promise<void>;
  /** The newest block's number. */
  head(): Promise<number>;
  /**
   * A reorg (`anvil_reorg`): the last `depth` blocks are replaced by as many
   * empty ones, so their transactions are gone (no receipt, not pending).
   */
  reorg(depth: number): Promise<void>;
  /** The signed bytes of a mined transaction, to send it again after a reorg (same hash). */
  rawTransaction(hash: Hex): Promise<Hex>;
  /** Send signed bytes again and wait for them to be mined; answers the hash. */
  sendRaw(raw: Hex): Promise<Hex>;
  stop(): Promise<void>;
}

const transferAbi = parseAbi(["function transfer(address to, uint256 value) returns (bool)"]);
const mintAbi = parseAbi(["function mint(address to, uint256 value)"]);

export async function startChain(chainId: number, options: { timestamp?: number } = {}): Promise<TestChain> {
  const anvil = await startAnvil(chainId, options);
  const chain = defineChain({
    id: chainId,
    name: `test-${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [anvil.url] } },
  });
  const client = createPublicClient({ chain, transport: http(anvil.url) }) as PublicClient;
  const wallet = (index: number) => {
    const account = privateKeyToAccount(DEV_KEYS[index]);
    return Object.assign(createWalletClient({ account, chain, transport: http(anvil.url) }), {
      address: account.address.toLowerCase() as Hex,
    });
  };
  const rpc = async (method: string, params: unknown[]) => {
    const answer = await fetch(anvil.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    }).then((response) => response.json());
    if (answer.error) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
    return answer;
  };
  const mined = async (hash: Hex) => {
    // anvil mines at once; a receipt not there at the first look is polled for every 50 ms, not viem's 4 s.
    await client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    return hash;
  };
  return {
    anvil,
    url: anvil.url,
    client,
    wallet,
    async deployToken(symbol, decimals) {
      const deployer = wallet(0);
      const hash = await deployer.deployContract({
        abi: token.abi,
        bytecode: token.bytecode as Hex,
        args: [`Test ${symbol}`, symbol, decimals],
        account: deployer.account!,
        chain,
      });
      const receipt = await client.waitForTransactionReceipt({ hash });
      return receipt.contractAddress!.toLowerCase() as Hex;
    },
    async mint(tokenAddress, to, amount) {
      const minter = wallet(0);
      await mined(
        await minter.writeContract({
          address: tokenAddress,
          abi: mintAbi,
          functionName: "mint",
          args: [to, amount],
          account: minter.account!,
          chain,
        }),
      );
    },
    async transfer(tokenAddress, from, to, amount, gas) {
      const sender = wallet(from);
      return await mined(
        await sender.writeContract({
          address: tokenAddress,
          abi: transferAbi,
          functionName: "transfer",
          args: [to, amount],
          account: sender.account!,
          chain,
          ...(gas ? { gas } : {}),
        }),
      );
    },
    async mine(blocks) {
      await rpc("anvil_mine", [`0x${blocks.toString(16)}`]);
    },
    async setNextBlockTime(seconds) {
      await rpc("evm_setNextBlockTimestamp", [seconds]);
    },
    head: async () => Number(await client.getBlockNumber({ cacheTime: 0 })),
    async reorg(depth) {
      await rpc("anvil_reorg", [depth, []]);
    },
    rawTransaction: async (hash) => (await rpc("eth_getRawTransactionByHash", [hash])).result,
    sendRaw: async (raw) => await mined((await rpc("eth_sendRawTransaction", [raw])).result),
    stop: () => anvil.stop(),
  };
}
