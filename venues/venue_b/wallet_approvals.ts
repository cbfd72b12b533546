/**
 * The approvals a client's principal wallet signs on the hosted pages: an
 * agent (approveAgent) that may trade but never withdraw or transfer, the
 * builder fee (approveBuilderFee), and a payment's USDC send (sendAsset).
 * Built here, in the venue's protocol; the wallet signs them on its own chain
 * (`signatureChainId`), which the venue accepts for user-signed actions.
 */
import type { HexAddress, UserSignedAction, WalletApprovals } from "../types.ts";
import { keepsCollateralInSpot } from "./account.ts";
import { AGENT_VALIDITY_MS } from "./constants.ts";
import {
  approveAgentAction,
  approveBuilderFeeAction,
  generateAgentKey,
  recoverUserSignedActionSigner,
  sendUsdcAction,
  splitSignature,
  userSignedActionNonce,
  walletTypedData,
} from "./signing.ts";
import type { WireUserAbstraction } from "./wire.ts";

/**
 * The name the venue shows for our agent in the client's wallet settings (at
 * most 16 characters). One name: a reconnection replaces our earlier agent.
 */
const AGENT_NAME = "automation";

/** `sendAsset`'s name of the spot balance; "" names the main perp dex. */
const SPOT_DEX = "spot";

/**
 * The balances a USDC payment moves between, by the payer's mode. A unified
 * or portfolio-margin account keeps its USDC in spot, and the venue refuses
 * its sendAsset naming a perp dex ("Unified account only supports sending
 * assets through spot"): spot to spot. A standard account (default, disabled,
 * and the legacy dexAbstraction, whose USDC stays with the perps) sends from
 * its main perp balance to the destination's.
 */
export function usdcSendDexes(payerMode: WireUserAbstraction): { sourceDex: string; destinationDex: string } {
  return keepsCollateralInSpot(payerMode)
    ? { sourceDex: SPOT_DEX, destinationDex: SPOT_DEX }
    : { sourceDex: "", destinationDex: "" };
}

/**
 * `now` is the venue-facing clock: user-signed nonces must be near the venue's
 * time. `accountMode` reads a user's abstraction mode from the venue.
 */
export function walletApprovals(
  isMainnet: boolean,
  now: () => number,
  accountMode: (user: HexAddress) => Promise<WireUserAbstraction>,
): WalletApprovals {
  return {
    newAgentKey: generateAgentKey,
    agentApproval: ({ agentAddress, signatureChainId }) => {
      // Its validity is explicit: an approval without one gets the venue's default lifetime, which nothing records.
      const validUntil = now() + AGENT_VALIDITY_MS;
      const agentName = AGENT_NAME;
      const action = approveAgentAction({
        isMainnet,
        signatureChainId,
        agentAddress,
        agentName,
        validUntil,
        nonce: now(),
      });
      return { action, name: agentName, validUntil };
    },
    builderApproval: ({ builder, maxFeeTenthsBps, signatureChainId }) =>
      approveBuilderFeeAction({ isMainnet, signatureChainId, builder, maxFeeTenthsBps, nonce: now() }),
    usdcTransfer: async ({ from, destination, amount, signatureChainId }) => {
      const dexes = usdcSendDexes(await accountMode(from));
      return sendUsdcAction({ isMainnet, signatureChainId, destination, amount, ...dexes, nonce: now() });
    },
    typedDataForWallet: (action) => walletTypedData(action),
    withSignature(action, signature): UserSignedAction {
      const nonce = userSignedActionNonce(action);
      if (nonce === undefined) throw new RangeError("User-signed action has no nonce");
      return { action, nonce, signature: splitSignature(signature) };
    },
    signerOf: (signed) => recoverUserSignedActionSigner(signed) as HexAddress,
  };
}
