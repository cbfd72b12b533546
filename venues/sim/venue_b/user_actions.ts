/**
 * The simulator's user-signed actions: approveAgent, approveBuilderFee,
 * usdSend and sendAsset. Each returns null when applied or the venue's refusal text.
 */
import { add, cmp, isDecimal, sub } from "../../decimal.ts";
import type { HexAddress } from "../../types.ts";
import type { WireLedgerUpdate } from "../../venue_b/wire.ts";
import { USDC_TOKEN, ZERO_ADDRESS } from "../../venue_b/constants.ts";
import { percentToTenthsBps } from "../../venue_b/signing.ts";
import {
  accountValue,
  ensureUser,
  findUser,
  liveAgentsOf,
  nextHash,
  type SimState,
  type SimUser,
  usesSpotCollateral,
  wire,
  withdrawable,
} from "./state.ts";

const DAY_MS = 86_400_000;
const DEFAULT_AGENT_DAYS = 90;
const MAX_AGENT_DAYS = 180;
const MAX_NAMED_AGENTS = 3;
const MAX_AGENT_NAME = 16;
const MAX_BUILDER_APPROVALS = 10;
/** The percent cap an approval may name (the spot cap; perps orders stop at 0.1%). */
const MAX_APPROVABLE_FEE = 1000;
const BUILDER_MIN_VALUE = "100";
/** Activation fee the sender pays when the destination has never held funds. */
const NEW_ACCOUNT_FEE = "1";

/**
 * approveAgent: the unnamed agent replaces the unnamed one, a name replaces
 * the agent of that name, the zero address removes it. The name may end in
 * " valid_until <ms>"; otherwise the approval lasts 90 days.
 */
export function approveAgent(
  state: SimState,
  user: SimUser,
  action: { agentAddress: HexAddress; agentName: string },
): string | null {
  const now = state.now();
  const suffix = / valid_until (\d+)$/.exec(action.agentName);
  const name = suffix ? action.agentName.slice(0, suffix.index) : action.agentName;
  const validUntil = suffix ? Number(suffix[1]) : now + DEFAULT_AGENT_DAYS * DAY_MS;
  if (name.length > MAX_AGENT_NAME) return "Agent name is too long.";
  if (validUntil <= now || validUntil > now + MAX_AGENT_DAYS * DAY_MS) return "Invalid agent validity.";
  const address = action.agentAddress.toLowerCase() as HexAddress;
  const existing = state.agents.get(address);
  if (existing && existing.user !== user.address) return "Agent already in use by another account.";
  const mine = liveAgentsOf(state, user.address);
  const replaced = mine.find((agent) => agent.name === name);
  if (address === ZERO_ADDRESS) {
    if (replaced) state.agents.delete(replaced.address);
    return null;
  }
  if (!replaced && name !== "" && mine.filter((agent) => agent.name !== "").length >= MAX_NAMED_AGENTS) {
    return "Too many named agents.";
  }
  if (replaced) state.agents.delete(replaced.address);
  state.agents.set(address, { address, user: user.address, name, validUntil });
  return null;
}

/** approveBuilderFee: "0%" revokes; the builder must hold 100 USDC of perps value. */
export function approveBuilderFee(
  state: SimState,
  user: SimUser,
  action: { maxFeeRate: string; builder: HexAddress },
): string | null {
  const rate = percentToTenthsBps(action.maxFeeRate);
  if (rate === null || rate > MAX_APPROVABLE_FEE) return "Invalid max fee rate.";
  const builder = action.builder.toLowerCase() as HexAddress;
  if (rate === 0) {
    user.builderApprovals.delete(builder);
    return null;
  }
  const builderAccount = findUser(state, builder);
  if (!builderAccount || cmp(accountValue(state, builderAccount), BUILDER_MIN_VALUE) < 0) {
    return "Builder has insufficient balance to be approved.";
  }
  if (!user.builderApprovals.has(builder) && user.builderApprovals.size >= MAX_BUILDER_APPROVALS) {
    return "Too many builder approvals.";
  }
  user.builderApprovals.set(builder, rate);
  return null;
}

/**
 * usdSend, recorded as the venue records it: an `internalTransfer` delta on
 * both ledgers, with no nonce (only sendAsset's `send` carries one).
 */
export function usdSend(
  state: SimState,
  user: SimUser,
  action: { destination: string; amount: string },
  nonce: number,
): string | null {
  return moveUsdc(state, user, action, nonce, (fee) => ({
    type: "internalTransfer",
    usdc: wire(action.amount),
    user: user.address,
    destination: action.destination.toLowerCase(),
    fee: wire(fee),
  }));
}

export interface SendAssetFields {
  destination: string;
  sourceDex: string;
  destinationDex: string;
  token: string;
  amount: string;
  fromSubAccount: string;
}

/** The venue's refusal of a sendAsset from a pooled account that names a perp dex. */
const POOLED_SEND_REFUSAL = "Unified account only supports sending assets through spot";
/** `sendAsset`'s name of the spot balance; "" is the main perp dex. */
const SPOT_DEX = "spot";

/**
 * sendAsset of USDC, recorded as a `send` delta carrying the signed nonce and
 * the dexes it names. What the venue takes follows the sender's mode: a
 * unified-account or portfolio-margin account keeps its USDC in spot and may
 * send only through spot (sourceDex and destinationDex "spot"); a standard one
 * (default, disabled, dexAbstraction) sends from its main perp balance, to the
 * destination's perp or spot balance. The simulator keeps one USDC balance per
 * account, so the receiving dex changes only what the ledger says. Other
 * dexes, tokens and sub-accounts are beyond this simulator and refused.
 */
export function sendAsset(state: SimState, user: SimUser, action: SendAssetFields, nonce: number): string | null {
  if (usesSpotCollateral(user)) {
    if (action.sourceDex !== SPOT_DEX || action.destinationDex !== SPOT_DEX) return POOLED_SEND_REFUSAL;
  } else {
    if (action.sourceDex !== "") return "Sends from a standard account's spot or HIP-3 balance are not simulated.";
    if (action.destinationDex !== "" && action.destinationDex !== SPOT_DEX) {
      return "Sends to a HIP-3 dex are not simulated.";
    }
  }
  if (action.fromSubAccount !== "") return "Sub-account transfers are not simulated.";
  if (action.token !== (state.isMainnet ? USDC_TOKEN.mainnet : USDC_TOKEN.testnet)) return "Invalid token.";
  return moveUsdc(state, user, action, nonce, (fee) => ({
    type: "send",
    user: user.address,
    destination: action.destination.toLowerCase(),
    sourceDex: action.sourceDex,
    destinationDex: action.destinationDex,
    token: "USDC",
    amount: wire(action.amount),
    usdcValue: wire(action.amount),
    fee: wire(fee),
    nativeTokenFee: "0.0",
    nonce,
    feeToken: "USDC",
  }));
}

/**
 * Move USDC from `user` to the destination (a new account costs the sender
 * the activation fee) and write the transfer's delta on both ledgers. The
 * control route's list of sends keeps every transfer with the nonce it was
 * signed with, whatever the ledger shows.
 */
function moveUsdc(
  state: SimState,
  user: SimUser,
  action: { destination: string; amount: string },
  nonce: number,
  delta: (fee: string) => WireLedgerUpdate["delta"],
): string | null {
  if (!/^0x[0-9a-fA-F]{40}$/.test(action.destination)) return "Invalid destination address.";
  if (!isDecimal(action.amount) || cmp(action.amount, "0") <= 0) return "Invalid amount.";
  const destination = action.destination.toLowerCase() as HexAddress;
  if (destination === user.address) return "Cannot self-transfer.";
  const fee = findUser(state, destination) ? "0" : NEW_ACCOUNT_FEE;
  if (cmp(add(action.amount, fee), withdrawable(state, user)) > 0) return "Insufficient balance for withdrawal.";
  const receiver = ensureUser(state, destination);
  user.usdc = sub(user.usdc, add(action.amount, fee));
  receiver.usdc = add(receiver.usdc, action.amount);
  const time = state.now();
  const hash = nextHash(state);
  const entry = { time, hash, delta: delta(fee) };
  user.ledger.push(entry);
  receiver.ledger.push(entry);
  state.sends.push({ time, hash, user: user.address, destination, amount: wire(action.amount), fee: wire(fee), nonce });
  return null;
}
