/**
 * The approvals a client's principal wallet signs on the hosted page: an agent
 * (approveAgent) that may trade but never withdraw or transfer, and the
 * builder fee (approveBuilderFee). Built here, in the venue's protocol; the
 * wallet signs them on its own chain (`signatureChainId`), which the venue
 * accepts for user-signed actions.
 */
import type { HexAddress, UserSignedAction, WalletApprovals } from "../types.ts";
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

/**
 * The name the venue shows for our agent in the client's wallet settings (at
 * most 16 characters). One name: a reconnection replaces our earlier agent.
 */
const AGENT_NAME = "automation";

/** `now` is the venue-facing clock: user-signed nonces must be near the venue's time. */
export function walletApprovals(isMainnet: boolean, now: () => number): WalletApprovals {
  return {
    newAgentKey: generateAgentKey,
    agentApproval: ({ agentAddress, signatureChainId }) =>
      approveAgentAction({ isMainnet, signatureChainId, agentAddress, agentName: AGENT_NAME, nonce: now() }),
    builderApproval: ({ builder, maxFeeTenthsBps, signatureChainId }) =>
      approveBuilderFeeAction({ isMainnet, signatureChainId, builder, maxFeeTenthsBps, nonce: now() }),
    usdcTransfer: ({ destination, amount, signatureChainId }) =>
      sendUsdcAction({ isMainnet, signatureChainId, destination, amount, nonce: now() }),
    typedDataForWallet: (action) => walletTypedData(action),
    withSignature(action, signature): UserSignedAction {
      const nonce = userSignedActionNonce(action);
      if (nonce === undefined) throw new RangeError("User-signed action has no nonce");
      return { action, nonce, signature: splitSignature(signature) };
    },
    signerOf: (signed) => recoverUserSignedActionSigner(signed) as HexAddress,
  };
}
