/**
 * `POST /exchange` of the simulator, following the venue's verification
 * order (facts §10): shape -> canonical action -> recovered signer -> who it
 * acts for -> nonce -> the action itself. Everything after parsing is
 * synchronous, so a nonce check and the change it guards cannot interleave
 * with another request.
 */
import type { HexAddress } from "../../types.ts";
import { recoverL1ActionSigner, recoverUserSignedActionSigner } from "../../venue_b/signing.ts";
import {
  cancelOrders,
  cancelOrdersByCloid,
  modifyOrder,
  placeOrders,
  runScheduledCancels,
  updateLeverage,
} from "./orders.ts";
import type { SimState, SimUser } from "./state.ts";
import { chargeAddress } from "./limits.ts";
import { approveAgent, approveBuilderFee, sendAsset, type SendAssetFields, usdSend } from "./user_actions.ts";
import {
  type CanonicalL1Action,
  canonicalL1Action,
  hex,
  hexNumber,
  integer,
  oneOf,
  record,
  text,
} from "./canonical.ts";
import { acceptNonce, parseSignature, resolveL1Actor, resolveUserSigner } from "./verify.ts";

const SCHEDULE_CANCEL_LEAD_MS = 5_000;

const ok = (response: unknown = { type: "default" }) => ({ status: "ok", response });
const err = (response: string) => ({ status: "err", response });
const statuses = (type: string, list: unknown[]) => ok({ type, data: { statuses: list } });

function optionalAddress(value: unknown): HexAddress | undefined {
  return value === undefined || value === null ? undefined : hex(value, 20, "vaultAddress");
}

function optionalInteger(value: unknown): number | undefined {
  return value === undefined || value === null ? undefined : integer(value, "expiresAfter");
}

/** The venue's answer to one /exchange body; throws WireShapeError for a 422. */
export function answerExchange(state: SimState, raw: unknown): unknown {
  runScheduledCancels(state);
  const envelope = record(raw, "body");
  const action = record(envelope.action, "action");
  const nonce = integer(envelope.nonce, "nonce");
  const signature = parseSignature(envelope.signature);
  const vaultAddress = optionalAddress(envelope.vaultAddress);
  const expiresAfter = optionalInteger(envelope.expiresAfter);
  if (USER_SIGNED_ACTIONS.has(action.type as string)) {
    if (vaultAddress || expiresAfter !== undefined) {
      return err("User-signed actions take no vaultAddress or expiresAfter.");
    }
    return userSigned(state, action, nonce, signature);
  }
  const canonical = canonicalL1Action(action);
  let signer: HexAddress;
  try {
    signer = recoverL1ActionSigner({
      action: canonical,
      nonce,
      isMainnet: state.isMainnet,
      vaultAddress,
      expiresAfter,
      signature,
    });
  } catch {
    return err("Invalid signature.");
  }
  const actor = resolveL1Actor(state, signer);
  if (typeof actor === "string") return err(actor);
  if (vaultAddress) return err(`Vault ${vaultAddress} does not exist.`);
  // The address's limit counts every action it signs, an expired one too (limits.ts).
  const overLimit = chargeAddress(state, actor, canonical);
  if (overLimit) return err(overLimit);
  if (expiresAfter !== undefined && expiresAfter < state.now()) {
    return err(`Action has expired: expiresAfter ${expiresAfter}.`);
  }
  const nonceError = acceptNonce(state, signer, nonce);
  if (nonceError) return err(nonceError);
  return applyL1(state, actor, canonical);
}

function applyL1(state: SimState, user: SimUser, action: CanonicalL1Action): unknown {
  switch (action.type) {
    case "order": {
      const result = placeOrders(state, user, action);
      return typeof result === "string" ? err(result) : statuses("order", result);
    }
    case "cancel":
      return statuses("cancel", cancelOrders(state, user, action.cancels));
    case "cancelByCloid":
      return statuses("cancel", cancelOrdersByCloid(state, user, action.cancels));
    case "modify": {
      const result = modifyOrder(state, user, action);
      return typeof result === "object" && "error" in result ? err(result.error) : ok();
    }
    case "batchModify":
      // `a` is the batch's: every replacement in it is placed whatever became of its cancel (SDK batchModify.d.ts).
      return statuses(
        "order",
        action.modifies.map((modify) => modifyOrder(state, user, action.a ? { ...modify, a: true } : modify)),
      );
    case "updateLeverage": {
      const refusal = updateLeverage(state, user, action);
      return refusal ? err(refusal) : ok();
    }
    case "updateIsolatedMargin": {
      const market = state.markets[action.asset];
      const isolated = market && user.positions.has(market.coin) && user.leverage.get(market.coin)?.type === "isolated";
      return isolated ? ok() : err("Cannot update margin of a position that is not isolated.");
    }
    case "scheduleCancel":
      if (action.time !== undefined && action.time < state.now() + SCHEDULE_CANCEL_LEAD_MS) {
        return err("Scheduled cancel time too early, must be at least 5 seconds from now.");
      }
      user.scheduledCancel = action.time ?? null;
      return ok();
    case "noop":
      return ok();
  }
}

/** The user-signed actions the simulator takes (signed by the principal's wallet, not an agent). */
const USER_SIGNED_ACTIONS = new Set(["approveAgent", "approveBuilderFee", "usdSend", "sendAsset"]);

function userSigned(
  state: SimState,
  action: Record<string, unknown>,
  nonce: number,
  signature: ReturnType<typeof parseSignature>,
): unknown {
  const type = action.type as "approveAgent" | "approveBuilderFee" | "usdSend" | "sendAsset";
  oneOf(action.hyperliquidChain, ["Mainnet", "Testnet"], "hyperliquidChain");
  hexNumber(action.signatureChainId, "signatureChainId");
  const fields = type === "approveAgent"
    ? {
      agentAddress: hex(action.agentAddress, 20, "agentAddress"),
      agentName: text(action.agentName ?? "", "agentName"),
    }
    : type === "approveBuilderFee"
    ? { maxFeeRate: text(action.maxFeeRate, "maxFeeRate"), builder: hex(action.builder, 20, "builder") }
    : type === "sendAsset"
    ? {
      destination: text(action.destination, "destination"),
      sourceDex: text(action.sourceDex, "sourceDex"),
      destinationDex: text(action.destinationDex, "destinationDex"),
      token: text(action.token, "token"),
      amount: text(action.amount, "amount"),
      fromSubAccount: text(action.fromSubAccount, "fromSubAccount"),
    }
    : { destination: text(action.destination, "destination"), amount: text(action.amount, "amount") };
  const actionNonce = integer(type === "usdSend" ? action.time : action.nonce, type === "usdSend" ? "time" : "nonce");
  // Replay protection across networks: a testnet signature means nothing here.
  if (action.hyperliquidChain !== (state.isMainnet ? "Mainnet" : "Testnet")) return err("Invalid hyperliquidChain.");
  if (actionNonce !== nonce) return err("Action nonce does not match the request nonce.");
  let signer: HexAddress;
  try {
    // Hashes the received strings verbatim: destination and amount are signed as text.
    signer = recoverUserSignedActionSigner({ action: action as { type: string }, nonce, signature });
  } catch {
    return err("Invalid signature.");
  }
  const user = resolveUserSigner(state, signer);
  if (typeof user === "string") return err(user);
  const nonceError = acceptNonce(state, signer, nonce);
  if (nonceError) return err(nonceError);
  const refusal = type === "approveAgent"
    ? approveAgent(state, user, fields as { agentAddress: HexAddress; agentName: string })
    : type === "approveBuilderFee"
    ? approveBuilderFee(state, user, fields as { maxFeeRate: string; builder: HexAddress })
    : type === "sendAsset"
    ? sendAsset(state, user, fields as SendAssetFields, nonce)
    : usdSend(state, user, fields as { destination: string; amount: string }, nonce);
  return refusal ? err(refusal) : ok();
}
