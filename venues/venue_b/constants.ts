/**
 * Fixed facts of the VENUE_B wire protocol (a Hyperliquid-style perps DEX).
 * Values here come from the venue's documentation and SDKs; see
 * shared/venues/venue-b.md for the source of each.
 */
import type { HexAddress } from "../types.ts";

/** Our id of this venue. */
export const PROVIDER_ID = "VENUE_B" as const;
/** Display name of the adapter. */
export const VENUE_NAME = "Venue B";

/** Perps are margined and settled in USDC; our symbol is coin + this suffix. */
export const QUOTE_ASSET = "USDC";

/** The venue's production API. */
export const MAINNET_API_URL = "https://api.hyperliquid.xyz";
/** The venue's test network API. */
export const TESTNET_API_URL = "https://api.hyperliquid-testnet.xyz";

/** verifyingContract of both signing domains, and the "remove" value of approveAgent. */
export const ZERO_ADDRESS: HexAddress = "0x0000000000000000000000000000000000000000";

/**
 * How long the service's agent approvals last. The venue gives an agent
 * approved without `valid_until` its default lifetime (90 days) and accepts
 * at most 180 days ahead (nktkas/hyperliquid, approveAgent's name validation).
 * One day short of that, so a venue clock a little behind ours still takes it.
 */
export const AGENT_VALIDITY_MS = 179 * 86_400_000;

// ---------------------------------------------------------------- tick / lot rules

/** Price decimals allowed on perps are PERP_MAX_DECIMALS - szDecimals. */
export const PERP_MAX_DECIMALS = 6;
/** Non-integer prices may carry at most this many significant figures. */
export const MAX_SIGNIFICANT_FIGURES = 5;
/** Integer prices at or above this have more than five digits and are valid only as integers. */
export const INTEGER_PRICE_THRESHOLD = "100000";
/** Smallest notional the venue accepts for an order that is not reduce-only. */
export const MIN_ORDER_VALUE_USD = "10";
/** Slippage of the aggressive IOC limit that stands in for a market order (the SDKs' default). */
export const MARKET_SLIPPAGE = "0.05";
/** Worst-price band of a market trigger order, the venue UI's choice for TP/SL. */
export const TRIGGER_SLIPPAGE = "0.1";

// ---------------------------------------------------------------- builder fee

/** Builder fee cap on perps, in tenths of a basis point (0.1%). */
export const MAX_PERP_BUILDER_FEE = 100;

// ---------------------------------------------------------------- signing

/** EIP-712 domain of L1 actions (the phantom agent). */
/** The standard domain type, all four fields in order; eth_signTypedData_v4 wants it spelled out. */
export const EIP712_DOMAIN_TYPE = [
  { name: "name", type: "string" },
  { name: "version", type: "string" },
  { name: "chainId", type: "uint256" },
  { name: "verifyingContract", type: "address" },
] as const;

/** EIP-712 domain of L1 actions (the phantom agent). */
export const L1_DOMAIN = {
  name: "Exchange",
  version: "1",
  chainId: 1337,
  verifyingContract: ZERO_ADDRESS,
} as const;

/** EIP-712 types of the phantom agent message. */
export const AGENT_TYPES = {
  Agent: [
    { name: "source", type: "string" },
    { name: "connectionId", type: "bytes32" },
  ],
} as const;

/** EIP-712 domain name of user-signed actions; chainId is the action's signatureChainId. */
export const USER_SIGNED_DOMAIN_NAME = "HyperliquidSignTransaction";

/** EIP-712 types of the user-signed actions we build or relay, keyed by action type. */
export const USER_SIGNED_TYPES = {
  approveAgent: {
    "HyperliquidTransaction:ApproveAgent": [
      { name: "hyperliquidChain", type: "string" },
      { name: "agentAddress", type: "address" },
      { name: "agentName", type: "string" },
      { name: "nonce", type: "uint64" },
    ],
  },
  approveBuilderFee: {
    "HyperliquidTransaction:ApproveBuilderFee": [
      { name: "hyperliquidChain", type: "string" },
      { name: "maxFeeRate", type: "string" },
      { name: "builder", type: "address" },
      { name: "nonce", type: "uint64" },
    ],
  },
  usdSend: {
    "HyperliquidTransaction:UsdSend": [
      { name: "hyperliquidChain", type: "string" },
      { name: "destination", type: "string" },
      { name: "amount", type: "string" },
      { name: "time", type: "uint64" },
    ],
  },
  sendAsset: {
    "HyperliquidTransaction:SendAsset": [
      { name: "hyperliquidChain", type: "string" },
      { name: "destination", type: "string" },
      { name: "sourceDex", type: "string" },
      { name: "destinationDex", type: "string" },
      { name: "token", type: "string" },
      { name: "amount", type: "string" },
      { name: "fromSubAccount", type: "string" },
      { name: "nonce", type: "uint64" },
    ],
  },
} as const;

/**
 * USDC as sendAsset names it (`NAME:tokenId`, spotMeta's token index 0) on
 * each network; a perp-to-perp transfer is sourceDex "" to destinationDex "".
 */
export const USDC_TOKEN = {
  mainnet: "USDC:0x6d1e7cde53ba9467b783cb7c530ce054",
  testnet: "USDC:0xeb62eee3685fc4c43992febcd9e75443",
} as const;

/** The user-signed actions this code signs, verifies or relays. */
export type UserSignedActionType = keyof typeof USER_SIGNED_TYPES;

/** Arbitrum One: the chain the venue's own UI asks wallets to sign user actions on. */
export const DEFAULT_SIGNATURE_CHAIN_ID = "0xa4b1";

// ---------------------------------------------------------------- transport

/**
 * Every L1 action (orders, cancels, leverage) carries expiresAfter = now +
 * this: an attempt whose answer was lost cannot execute after its bound.
 */
export const ACTION_TTL_MS = 10_000;

/** Per-request timeout when the caller sets none. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** The universe changes only on listings; a minute of staleness costs nothing. */
export const META_TTL_MS = 60_000;
/** Reply caps of the time-ranged info requests, used to decide when to fetch the next page. */
export const FILLS_PAGE_LIMIT = 2000;
/** Most funding entries one userFunding reply carries. */
export const FUNDING_PAGE_LIMIT = 500;
/** Page size assumed for userNonFundingLedgerUpdates (undocumented; a wrong guess costs one extra request). */
export const LEDGER_PAGE_LIMIT = 500;

/**
 * How long the platform builder's account mode is trusted once read. The mode changes only when the builder's
 * own wallet signs userSetAbstraction, so a minute is fresh enough, and one `userAbstraction` read (weight 20)
 * a minute per process is 1/60 of the IP's 1,200.
 */
export const BUILDER_MODE_TTL_MS = 60_000;
