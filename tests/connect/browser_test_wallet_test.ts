/**
 * The connect page's QA test wallet (hosted-pages/connect/test_wallet.js) is
 * our own keccak-256, secp256k1 and EIP-712 code. Checked here against viem on
 * the typed data the service really asks wallets to sign (approveAgent and
 * approveBuilderFee, both networks): the address matches, the signature
 * recovers to it, and with RFC 6979 nonces it is byte for byte viem's.
 *
 * The script is a plain browser script; Deno has the same Web APIs it uses
 * (BigInt, TextEncoder, crypto.getRandomValues, crypto.subtle), so it runs here
 * as the page runs it. The browser test connects with it end to end.
 */
import assert from "node:assert/strict";
import { type Hex, recoverTypedDataAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { approveAgentAction, approveBuilderFeeAction, walletTypedData } from "../../venues/venue_b/signing.ts";

interface TestWallet {
  address: string;
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

await import("../../hosted-pages/connect/test_wallet.js");
const createTestWallet = (globalThis as unknown as { createTestWallet(privateKey?: Hex): TestWallet })
  .createTestWallet;

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const keyOf = (value: bigint): Hex => `0x${value.toString(16).padStart(64, "0")}`;

/** The messages the hosted page hands the wallet, as `POST /connect/api/wallet/*` answers them. */
function typedDataToSign() {
  const common = { signatureChainId: "0xa4b1" as Hex, nonce: 1_790_000_000_123 };
  return [true, false].flatMap((isMainnet) => [
    walletTypedData(
      approveAgentAction({
        ...common,
        isMainnet,
        agentAddress: "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf",
        agentName: "automation",
      }),
    ),
    walletTypedData(
      approveBuilderFeeAction({
        ...common,
        isMainnet,
        builder: "0x2B5AD5c4795c026514f8317c7a215E218DcCD6cF",
        maxFeeTenthsBps: 25,
      }),
    ),
  ]);
}

async function signWith(wallet: TestWallet, typedData: Record<string, unknown>): Promise<Hex> {
  return await wallet.request({
    method: "eth_signTypedData_v4",
    params: [wallet.address, JSON.stringify(typedData)],
  }) as Hex;
}

/** viem's own signature of the same typed data (viem takes the domain type from the domain). */
async function viemSignature(privateKey: Hex, typedData: ReturnType<typeof walletTypedData>): Promise<Hex> {
  const { EIP712Domain: _domain, ...types } = typedData.types;
  return await privateKeyToAccount(privateKey).signTypedData(
    {
      domain: typedData.domain,
      types,
      primaryType: typedData.primaryType,
      message: typedData.message,
    } as Parameters<ReturnType<typeof privateKeyToAccount>["signTypedData"]>[0],
  );
}

Deno.test("test wallet: the address of a key is viem's, from the smallest to the largest key", () => {
  for (const key of [keyOf(1n), keyOf(2n), keyOf(N - 1n), generatePrivateKey(), generatePrivateKey()]) {
    assert.equal(createTestWallet(key).address, privateKeyToAccount(key).address.toLowerCase());
  }
  assert.throws(() => createTestWallet(keyOf(0n)), RangeError);
  assert.throws(() => createTestWallet(keyOf(N)), RangeError);
});

Deno.test("test wallet: approveAgent and approveBuilderFee signatures recover to the wallet and equal viem's", async () => {
  for (const key of [generatePrivateKey(), generatePrivateKey(), keyOf(N - 1n)]) {
    const wallet = createTestWallet(key);
    for (const typedData of typedDataToSign()) {
      const signature = await signWith(wallet, typedData);
      assert.match(signature, /^0x[0-9a-f]{128}(1b|1c)$/);
      const { EIP712Domain: _domain, ...types } = typedData.types;
      const signer = await recoverTypedDataAddress(
        {
          domain: typedData.domain,
          types,
          primaryType: typedData.primaryType,
          message: typedData.message,
          signature,
        } as Parameters<typeof recoverTypedDataAddress>[0],
      );
      assert.equal(signer.toLowerCase(), wallet.address, typedData.primaryType);
      // RFC 6979 and low s, as viem signs: the very same bytes.
      assert.equal(signature, await viemSignature(key, typedData), typedData.primaryType);
    }
  }
});

Deno.test("test wallet: a fresh wallet (key made in the page) signs what it claims to", async () => {
  const wallet = createTestWallet();
  assert.match(wallet.address, /^0x[0-9a-f]{40}$/);
  assert.deepEqual(await wallet.request({ method: "eth_requestAccounts" }), [wallet.address]);
  assert.match(String(await wallet.request({ method: "eth_chainId" })), /^0x[0-9a-f]+$/);
  for (const typedData of typedDataToSign()) {
    const { EIP712Domain: _domain, ...types } = typedData.types;
    const signer = await recoverTypedDataAddress(
      {
        domain: typedData.domain,
        types,
        primaryType: typedData.primaryType,
        message: typedData.message,
        signature: await signWith(wallet, typedData),
      } as Parameters<typeof recoverTypedDataAddress>[0],
    );
    assert.equal(signer.toLowerCase(), wallet.address);
  }
  await assert.rejects(
    wallet.request({ method: "eth_sendTransaction", params: [] }),
    (error: { code?: number }) => error.code === 4200,
  );
});
