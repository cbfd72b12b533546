/**
 * VENUE_B signing: L1 actions (trading, signed by the agent through a phantom
 * "Agent" message) and user-signed actions (approveAgent, approveBuilderFee,
 * usdSend, signed by the principal's own wallet on the
 * HyperliquidSignTransaction domain).
 *
 * Everything here is synchronous and pure so the simulator can verify with the
 * very code the adapter signs with; the SDK cross-check test keeps both honest.
 */
import { encode } from "@msgpack/msgpack";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex, concatBytes, hexToBytes } from "@noble/hashes/utils.js";
import { signRecoverable } from "tiny-secp256k1";
import { hashDomain, hashTypedData, type TypedDataDefinition } from "viem";
import { div, formatDec, isDecimal, isMultipleOf, mul, parseDec } from "../decimal.ts";
import type { HexAddress, UserSignedAction } from "../types.ts";
import {
  AGENT_TYPES,
  DEFAULT_SIGNATURE_CHAIN_ID,
  EIP712_DOMAIN_TYPE,
  L1_DOMAIN,
  USDC_TOKEN,
  USER_SIGNED_DOMAIN_NAME,
  USER_SIGNED_TYPES,
  type UserSignedActionType,
  ZERO_ADDRESS,
} from "./constants.ts";

/** A 0x-prefixed hex string. */
export type Hex = `0x${string}`;
/** The `{r, s, v}` signature of the /exchange envelope. */
export type Signature = UserSignedAction["signature"];

// ---------------------------------------------------------------- L1 actions

/** What an L1 signature commits to besides the network. */
export interface L1ActionEnvelope {
  /** The action with its keys already in the venue's canonical order. */
  action: unknown;
  nonce: number;
  isMainnet: boolean;
  vaultAddress?: HexAddress | null;
  expiresAfter?: number | null;
}

/**
 * The L1 action hash ("connectionId"): keccak256 of msgpack(action) ‖ u64 nonce
 * ‖ vault flag (‖ vault bytes) ‖ [0x00 ‖ u64 expiresAfter].
 */
export function l1ActionHash(envelope: Omit<L1ActionEnvelope, "isMainnet">): Hex {
  // @msgpack/msgpack already picks the smallest integer width and u64 above
  // 2^32, which is what the venue hashes; floats must never appear in actions.
  const parts = [encode(envelope.action, { ignoreUndefined: true }), uint64Bytes(envelope.nonce)];
  if (envelope.vaultAddress) parts.push(Uint8Array.of(1), hexToBytes(envelope.vaultAddress.slice(2).toLowerCase()));
  else parts.push(Uint8Array.of(0));
  if (envelope.expiresAfter != null) parts.push(Uint8Array.of(0), uint64Bytes(envelope.expiresAfter));
  return `0x${bytesToHex(keccak_256(concatBytes(...parts)))}`;
}

/** The phantom-agent typed data a wallet would be asked to sign for an L1 action. */
export function l1TypedData(connectionId: Hex, isMainnet: boolean) {
  return {
    domain: L1_DOMAIN,
    types: AGENT_TYPES,
    primaryType: "Agent" as const,
    message: { source: isMainnet ? "a" : "b", connectionId },
  };
}

// The Agent digest is assembled by hand from precomputed parts: generic typed-data
// hashing re-encodes the type strings on every call and cost a quarter of each
// signature. The test vectors pin it to viem's hashTypedData.
const L1_DOMAIN_SEPARATOR = hexToBytes(
  hashDomain({
    domain: { ...L1_DOMAIN, chainId: BigInt(L1_DOMAIN.chainId) },
    types: { EIP712Domain: EIP712_DOMAIN_TYPE },
  }).slice(2),
);
const AGENT_TYPEHASH = keccak_256(new TextEncoder().encode("Agent(string source,bytes32 connectionId)"));
const SOURCE_HASH = {
  mainnet: keccak_256(new TextEncoder().encode("a")),
  testnet: keccak_256(new TextEncoder().encode("b")),
};

function l1Digest(envelope: L1ActionEnvelope): Hex {
  const connectionId = hexToBytes(l1ActionHash(envelope).slice(2));
  const structHash = keccak_256(
    concatBytes(AGENT_TYPEHASH, envelope.isMainnet ? SOURCE_HASH.mainnet : SOURCE_HASH.testnet, connectionId),
  );
  return `0x${bytesToHex(keccak_256(concatBytes(Uint8Array.of(0x19, 0x01), L1_DOMAIN_SEPARATOR, structHash)))}`;
}

/** Signs an L1 action with a private key (the agent's, or the user's own). */
export function signL1Action(privateKey: Hex, envelope: L1ActionEnvelope): Signature {
  return signDigest(l1Digest(envelope), privateKey);
}

/** The address whose key produced `signature` over this L1 action (lowercase). */
export function recoverL1ActionSigner(envelope: L1ActionEnvelope & { signature: Signature }): HexAddress {
  return recoverDigestSigner(l1Digest(envelope), envelope.signature);
}

// ---------------------------------------------------------------- user-signed actions

/** The network name user-signed actions carry for replay protection. */
export type HyperliquidChain = "Mainnet" | "Testnet";

interface UserSignedBase {
  isMainnet: boolean;
  /** Chain id (hex) the wallet signs on; only the EIP-712 domain uses it. */
  signatureChainId?: Hex;
}

/** approveAgent as it goes on the wire; `validUntil` becomes the venue's name suffix. */
export function approveAgentAction(
  input: UserSignedBase & {
    agentAddress: HexAddress;
    agentName?: string;
    validUntil?: number;
    nonce: number;
  },
) {
  const name = input.agentName ?? "";
  return {
    type: "approveAgent" as const,
    ...chainFields(input),
    agentAddress: input.agentAddress.toLowerCase() as HexAddress,
    agentName: input.validUntil === undefined ? name : `${name} valid_until ${input.validUntil}`,
    nonce: input.nonce,
  };
}

/** approveBuilderFee with the fee cap given in tenths of a basis point (10 = "0.01%"). */
export function approveBuilderFeeAction(
  input: UserSignedBase & {
    builder: HexAddress;
    maxFeeTenthsBps: number;
    nonce: number;
  },
) {
  return {
    type: "approveBuilderFee" as const,
    ...chainFields(input),
    maxFeeRate: tenthsBpsToPercent(input.maxFeeTenthsBps),
    builder: input.builder.toLowerCase() as HexAddress,
    nonce: input.nonce,
  };
}

/**
 * usdSend. `destination` and `amount` are hashed as text, so both are put in
 * their one canonical form here (lowercase, no trailing zeros).
 */
export function usdSendAction(input: UserSignedBase & { destination: HexAddress; amount: string; time: number }) {
  return {
    type: "usdSend" as const,
    ...chainFields(input),
    destination: input.destination.toLowerCase() as HexAddress,
    amount: formatDec(parseDec(input.amount)),
    time: input.time,
  };
}

/**
 * sendAsset of USDC from one of the signer's balances to one of
 * `destination`'s (by default perp to perp, `""` naming the main perp dex):
 * the transfer the venue's ledger records with its signed nonce and dexes (a
 * `send` delta), where a usdSend leaves an `internalTransfer` without them.
 * That nonce is what binds a payment to the session that asked for it.
 */
export function sendUsdcAction(
  input: UserSignedBase & {
    destination: HexAddress;
    amount: string;
    nonce: number;
    sourceDex?: string;
    destinationDex?: string;
  },
) {
  return {
    type: "sendAsset" as const,
    ...chainFields(input),
    destination: input.destination.toLowerCase() as HexAddress,
    sourceDex: input.sourceDex ?? "",
    destinationDex: input.destinationDex ?? "",
    token: input.isMainnet ? USDC_TOKEN.mainnet : USDC_TOKEN.testnet,
    amount: formatDec(parseDec(input.amount)),
    fromSubAccount: "",
    nonce: input.nonce,
  };
}

function chainFields(input: UserSignedBase) {
  return {
    signatureChainId: input.signatureChainId ?? DEFAULT_SIGNATURE_CHAIN_ID,
    hyperliquidChain: (input.isMainnet ? "Mainnet" : "Testnet") as HyperliquidChain,
  };
}

/**
 * The EIP-712 typed data of a user-signed action, in the shape viem's
 * `signTypedData` (and the hosted page's wallet) takes.
 */
export function userSignedTypedData(action: Record<string, unknown>): TypedDataDefinition {
  const type = action.type as UserSignedActionType;
  const types = USER_SIGNED_TYPES[type];
  if (!types) throw new RangeError(`Not a user-signed action type: "${String(action.type)}"`);
  if (typeof action.signatureChainId !== "string" || !/^0x[0-9a-fA-F]+$/.test(action.signatureChainId)) {
    throw new RangeError("User-signed action needs a hex signatureChainId");
  }
  const [primaryType, fields] = Object.entries(types)[0];
  const message: Record<string, unknown> = {};
  for (const field of fields) {
    // A missing agentName is the unnamed agent: the venue signs it as "".
    const value = action[field.name] ?? (field.name === "agentName" ? "" : undefined);
    if (value === undefined) throw new RangeError(`User-signed action is missing "${field.name}"`);
    // address fields hash as 20 bytes, so their case carries no meaning (and
    // viem would refuse a mixed case that is not a valid checksum).
    message[field.name] = field.type === "uint64"
      ? BigInt(value as number)
      : field.type === "address"
      ? String(value).toLowerCase()
      : value;
  }
  return {
    domain: {
      name: USER_SIGNED_DOMAIN_NAME,
      version: "1",
      chainId: parseInt(action.signatureChainId, 16),
      verifyingContract: ZERO_ADDRESS,
    },
    types,
    primaryType,
    message,
  };
}

/**
 * The same typed data as a browser wallet's `eth_signTypedData_v4` takes it:
 * JSON-safe (uint64 as numbers, which ms timestamps fit) and with the
 * EIP712Domain type spelled out. For the hosted page to embed and hand over.
 */
export function walletTypedData(action: Record<string, unknown>) {
  const typed = userSignedTypedData(action);
  const message = Object.fromEntries(
    Object.entries(typed.message as Record<string, unknown>).map(([key, value]) => [
      key,
      typeof value === "bigint" ? Number(value) : value,
    ]),
  );
  return {
    types: { EIP712Domain: EIP712_DOMAIN_TYPE, ...typed.types },
    domain: typed.domain,
    primaryType: typed.primaryType,
    message,
  };
}

/** The nonce a user-signed action carries (`nonce`, or `time` for sends). */
export function userSignedActionNonce(action: Record<string, unknown>): number | undefined {
  const value = action.nonce ?? action.time;
  return typeof value === "number" ? value : undefined;
}

/** Signs a user-signed action with the principal's key and wraps it for /exchange. */
export function signUserSignedAction(privateKey: Hex, action: UserSignedAction["action"]): UserSignedAction {
  const nonce = userSignedActionNonce(action);
  if (nonce === undefined) throw new RangeError("User-signed action has no nonce or time field");
  const digest = hashTypedData(userSignedTypedData(action));
  return { action, nonce, signature: signDigest(digest, privateKey) };
}

/** The wallet that signed a user-signed action (lowercase); throws when the signature cannot be parsed. */
export function recoverUserSignedActionSigner(signed: UserSignedAction): HexAddress {
  const digest = hashTypedData(userSignedTypedData(signed.action));
  return recoverDigestSigner(digest, signed.signature);
}

// ---------------------------------------------------------------- builder fee units

/** 10 tenths of a basis point -> "0.01%", the percent string approveBuilderFee carries. */
export function tenthsBpsToPercent(tenthsBps: number): string {
  if (!Number.isInteger(tenthsBps) || tenthsBps < 0) throw new RangeError(`Not a fee in tenths of bps: "${tenthsBps}"`);
  return `${div(tenthsBps, 1000, 3)}%`;
}

/** "0.01%" -> 10; null when the text is not a percent on the 0.001% grid. */
export function percentToTenthsBps(percent: string): number | null {
  const match = /^(\d+(?:\.\d+)?)%$/.exec(percent);
  if (!match || !isDecimal(match[1]) || !isMultipleOf(match[1], "0.001")) return null;
  return Number(mul(match[1], 1000));
}

// ---------------------------------------------------------------- keys and signatures

/** A fresh agent key pair; the private key must go straight into the secret box. */
export function generateAgentKey(): { privateKey: Hex; address: HexAddress } {
  const secret = secp256k1.utils.randomSecretKey();
  return { privateKey: `0x${bytesToHex(secret)}`, address: addressOfPublicKey(secp256k1.getPublicKey(secret, false)) };
}

/** The lowercase address of a private key. */
export function addressFromPrivateKey(privateKey: Hex): HexAddress {
  return addressOfPublicKey(secp256k1.getPublicKey(hexToBytes(strip0x(privateKey)), false));
}

/**
 * RFC 6979 (deterministic, low s), so the same signature as any conforming
 * signer. libsecp256k1 compiled to WebAssembly (tiny-secp256k1) signs in about
 * half the CPU of @noble/curves (~130 µs against ~290 µs on the 2-core bench
 * machine), and a fan-out signs twice per VENUE_B entry; the test vectors pin
 * both to the same bytes, and recovery (the simulator's check) stays with noble.
 */
function signDigest(digest: Hex, privateKey: Hex): Signature {
  const { signature, recoveryId } = signRecoverable(hexToBytes(strip0x(digest)), hexToBytes(strip0x(privateKey)));
  return {
    r: `0x${bytesToHex(signature.subarray(0, 32))}`,
    s: `0x${bytesToHex(signature.subarray(32, 64))}`,
    v: recoveryId + 27,
  };
}

/**
 * A wallet's 65-byte `r ‖ s ‖ v` hex signature (what `eth_signTypedData_v4`
 * returns) in the venue's `{r, s, v}` form. Wallets write v as 27/28 or 0/1.
 */
export function splitSignature(hex: string): Signature {
  const match = /^0x([0-9a-fA-F]{64})([0-9a-fA-F]{64})([0-9a-fA-F]{2})$/.exec(hex);
  if (!match) throw new RangeError("A signature is 0x and 130 hex characters");
  const v = parseInt(match[3], 16);
  if (![0, 1, 27, 28].includes(v)) throw new RangeError(`Signature v must be 27 or 28: "${v}"`);
  return { r: `0x${match[1].toLowerCase()}`, s: `0x${match[2].toLowerCase()}`, v: v < 27 ? v + 27 : v };
}

function recoverDigestSigner(digest: Hex, signature: Signature): HexAddress {
  if (signature.v !== 27 && signature.v !== 28) throw new RangeError(`Signature v must be 27 or 28: "${signature.v}"`);
  // r and s are numbers: some SDKs send them without zero padding.
  const parsed = new secp256k1.Signature(BigInt(signature.r), BigInt(signature.s), signature.v - 27);
  const point = parsed.recoverPublicKey(hexToBytes(strip0x(digest)));
  return addressOfPublicKey(point.toBytes(false));
}

function addressOfPublicKey(uncompressed: Uint8Array): HexAddress {
  return `0x${bytesToHex(keccak_256(uncompressed.subarray(1)).subarray(12))}`;
}

function uint64Bytes(value: number): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(value));
  return bytes;
}

function strip0x(hex: string): string {
  return hex.startsWith("0x") ? hex.slice(2) : hex;
}
