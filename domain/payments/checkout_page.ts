/**
 * The hosted checkout of an on-chain payment (EVM_TRANSFER, DEPOSIT_INVOICE):
 * what the page shows once its link is exchanged (the exact amount, token
 * and network, where to send it, an EIP-681 payment URI and its QR code) and
 * the status it follows while the service detects the transfer
 * (checkout_status.ts).
 */
import type { EvmNetwork } from "../../config.ts";
import { CHAIN_IDS, NETWORK_NAMES } from "../../venues/evm/transfers.ts";
import { formatDec } from "../../venues/decimal.ts";
import { iso } from "../clock.ts";
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import { checkoutStatusOf } from "./checkout_status.ts";
import { partnerOfPayment, secondsLeft, type SessionRow, tokenAmountOf } from "./payment_page_session.ts";
import type { PaymentRow } from "./payment_view.ts";
import { qrSvgDataUrl } from "./qr_svg.ts";

/**
 * EIP-681's request for an ERC-20 transfer of the exact amount:
 * `ethereum:<token>@<chain id>/transfer?address=<recipient>&uint256=<smallest units>`.
 * A wallet that scans it fills in the token contract, the network, the
 * recipient and the amount; the payer only confirms.
 */
export function paymentUri(payment: PaymentRow): string {
  const chainId = CHAIN_IDS[payment.networkId as EvmNetwork];
  return `ethereum:${payment.tokenAddress}@${chainId}/transfer?address=${payment.recipient}` +
    `&uint256=${payment.tokenAmount}`;
}

/** The page's view of an on-chain payment (the API contract of `POST /pay/api/session` for these methods). */
export async function checkoutView(ctx: Ctx, session: SessionRow, payment: PaymentRow) {
  const network = payment.networkId as EvmNetwork;
  const partner = await partnerOfPayment(ctx.db.read, payment);
  const uri = paymentUri(payment);
  // The page asks again at once and then every few seconds: a node that cannot answer now is no reason to refuse
  // the page, and AWAITING claims nothing.
  const { status } = await checkoutStatusOf(ctx, payment).catch((error) => {
    if (error instanceof ApiError && error.code === "PROVIDER_DOWN") return { status: "AWAITING" as const };
    throw error;
  });
  return {
    method: payment.method as "EVM_TRANSFER" | "DEPOSIT_INVOICE",
    partnerName: partner.name,
    returnUrl: session.returnUrl,
    status,
    reference: payment.paymentId,
    amountUsd: formatDec({ units: BigInt(payment.amountMicros), scale: 6 }, 2),
    amount: tokenAmountOf(payment),
    token: payment.tokenSymbol!,
    tokenAddress: payment.tokenAddress!,
    tokenDecimals: payment.tokenDecimals!,
    tokenAmount: payment.tokenAmount!,
    networkId: network,
    networkName: NETWORK_NAMES[network],
    chainId: `0x${CHAIN_IDS[network].toString(16)}`,
    recipient: payment.recipient!,
    payerAddress: payment.payerAddress,
    expiresAt: iso(session.expiresAt),
    secondsLeft: secondsLeft(ctx, session),
    paymentUri: uri,
    qrSvgDataUrl: qrSvgDataUrl(uri),
    requiredConfirmations: ctx.config.evmConfirmations[network],
  };
}

export type CheckoutView = Awaited<ReturnType<typeof checkoutView>>;
