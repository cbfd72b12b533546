/**
 * What every VENUE_B adapter operation shares: the HTTP client, the market
 * catalogue, the secret opener, the clock, and the one place an agent key is
 * opened and used to sign an L1 action.
 */
import { ACTION_TTL_MS } from "./constants.ts";
import {
  DEADLINE_MIN_TIME_LEFT_MS,
  type HexAddress,
  type RequestDeadline,
  type SecretOpener,
  type VenueCredentials,
} from "../types.ts";
import type { ExchangeResponse, VenueBClient } from "./client.ts";
import { venueError } from "./errors.ts";
import type { MarketCatalog } from "./markets.ts";
import type { SignerNonces } from "./nonces.ts";
import { type Hex, signL1Action } from "./signing.ts";

/** Shared dependencies of the adapter operations. */
export interface VenueBContext {
  client: VenueBClient;
  markets: MarketCatalog;
  secrets: SecretOpener;
  /** The agents' nonces: shared by every instance that signs for them. */
  nonces: SignerNonces;
  isMainnet: boolean;
  now: () => number;
}

/** Credentials of the agent-wallet scheme, the only one VENUE_B takes. */
export type AgentCredentials = Extract<VenueCredentials, { scheme: "AGENT_WALLET" }>;

/** Narrows to agent-wallet credentials or refuses them as CREDENTIAL_REJECTED. */
export function agentCredentials(credentials: VenueCredentials): AgentCredentials {
  if (credentials.scheme !== "AGENT_WALLET") {
    throw venueError("CREDENTIAL_REJECTED", "VENUE_B needs agent-wallet credentials");
  }
  return credentials;
}

/** The principal's address as the venue's info requests want it. */
export function principal(credentials: AgentCredentials): HexAddress {
  return credentials.accountAddress.toLowerCase() as HexAddress;
}

/**
 * Opens the sealed agent key. The key lives only in this call's scope and is
 * never part of an error message: a failure says that opening failed, not why.
 */
export async function openAgentKey(ctx: VenueBContext, credentials: AgentCredentials): Promise<Hex> {
  let key: string;
  try {
    key = (await ctx.secrets.open(credentials.sealedAgentPrivateKey)).trim();
  } catch {
    throw venueError("CREDENTIAL_REJECTED", "The agent key could not be opened");
  }
  const hex = key.startsWith("0x") ? key.slice(2) : key;
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw venueError("CREDENTIAL_REJECTED", "The agent key is not a private key");
  return `0x${hex.toLowerCase()}`;
}

/**
 * Signs `action` (keys already in canonical order) with the agent key and
 * posts it, bound by expiresAfter so a lost answer cannot execute later: the
 * usual time to live, or less when the caller's deadline comes sooner. With
 * too little time left before that deadline the action is not sent at all.
 */
export async function sendL1Action(
  ctx: VenueBContext,
  credentials: AgentCredentials,
  action: Record<string, unknown>,
  deadline?: RequestDeadline,
): Promise<ExchangeResponse> {
  const privateKey = await openAgentKey(ctx, credentials);
  // Drawn before signing: a nonce is spent even when the action is then refused or never sent,
  // which the venue allows (it only refuses one it has seen or one below its 100 highest).
  const nonce = await ctx.nonces.next(credentials.agentAddress);
  const now = ctx.now();
  const expiresAfter = Math.min(now + ACTION_TTL_MS, deadline ?? Infinity);
  if (expiresAfter - now < DEADLINE_MIN_TIME_LEFT_MS) {
    throw venueError("UNAVAILABLE", "VENUE_B action not sent: its deadline passed while it waited to be sent");
  }
  const signature = signL1Action(privateKey, { action, nonce, isMainnet: ctx.isMainnet, expiresAfter });
  return await ctx.client.exchange({ action, nonce, signature, expiresAfter });
}
