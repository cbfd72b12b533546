/**
 * `POST /v1/users/:id/obligations/:obligationId/payment-instructions` for an
 * EVM transfer (spec, Billing and payments): the exact amount of the
 * obligation still owed, in the token's smallest units, plus a tag in the
 * trailing digits that no other open instruction of that token and network
 * carries, so the transfer that pays it names it. The recipient and its
 * version are frozen into the instruction; it expires after an hour.
 */
import { and, eq } from "drizzle-orm";
import type { Hex } from "viem";
import { EVM_NETWORKS, type EvmNetwork, type EvmToken } from "../../config.ts";
import { isUniqueViolation } from "../../db/client.ts";
import { rowInsert } from "../../db/row_insert.ts";
import { obligations, payments } from "../../db/schema.ts";
import { CHAIN_IDS, NETWORK_NAMES } from "../../venues/evm/transfers.ts";
import { formatDec } from "../../venues/decimal.ts";
import { HOUR_MS, wallClockNow } from "../clock.ts";
import { loadClient } from "../clients/load_client.ts";
import { withPartnerTransaction } from "../credentials/partner_transaction.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { ApiError } from "../errors.ts";
import { newId } from "../ids.ts";
import { reducedSoFar } from "../billing/fee_obligations.ts";
import { evmReaderOf } from "./evm_networks.ts";
import { paymentView } from "./payment_view.ts";
import { recipientOf } from "./recipients.ts";

export const INSTRUCTION_TTL_MS = HOUR_MS;
const TAG_ATTEMPTS = 8;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export interface InstructionInput {
  externalUserId: string;
  obligationId: string;
  method?: "EVM_TRANSFER" | "VENUE_B_USD_SEND" | "DEPOSIT_INVOICE";
  networkId?: string;
  token?: string;
  payerAddress?: string;
  returnUrl?: string;
}

const paymentInsert = rowInsert(payments);

export async function createPaymentInstructions(ctx: Ctx, input: InstructionInput) {
  await ctx.idempotency?.claim();
  const partnerId = partnerOf(ctx);
  const client = await loadClient(ctx.db.read, partnerId, input.externalUserId);
  const owed = await openObligation(ctx, client.id, input.obligationId);
  const method = input.method ?? "EVM_TRANSFER";
  if (method !== "EVM_TRANSFER") {
    throw new ApiError("VALIDATION_ERROR", { message: `method: ${method} ainda não está disponível neste serviço.` });
  }
  const network = enabledNetwork(ctx, input.networkId);
  const token = input.token as EvmToken;
  const tokenAddress = ctx.config.evmTokens[network][token];
  if (!tokenAddress) throw new ApiError("TOKEN_NOT_SUPPORTED");
  if (token !== owed.row.currency) {
    throw new ApiError("CURRENCY_MISMATCH", { message: `Esta cobrança é em ${owed.row.currency}, não em ${token}.` });
  }
  if (!input.payerAddress || !EVM_ADDRESS.test(input.payerAddress) || /^0x0{40}$/.test(input.payerAddress)) {
    throw new ApiError("INVALID_PAYER");
  }
  const recipient = await recipientOf(ctx.db.read, network);
  if (!recipient) throw new ApiError("RECIPIENT_NOT_CONFIGURED");
  const decimals = await tokenDecimals(ctx, network, tokenAddress);
  const base = BigInt(owed.remainingMicros) * 10n ** BigInt(decimals - 6);
  const issuedAt = ctx.clock.now();
  const draft = {
    partnerId,
    clientId: client.id,
    obligationId: owed.row.obligationId,
    method,
    status: "PENDING",
    amountMicros: owed.remainingMicros,
    networkId: network,
    tokenSymbol: token,
    tokenAddress,
    tokenDecimals: decimals,
    recipient: recipient.address,
    receiverVersion: recipient.receiverVersion,
    payerAddress: input.payerAddress.toLowerCase(),
    issuedAt,
    issuedWallAt: wallClockNow(),
    expiresAt: issuedAt + INSTRUCTION_TTL_MS,
    updatedAt: issuedAt,
  };
  for (let attempt = 0;; attempt++) {
    const tokenAmount = (base + uniqueTag(decimals)).toString();
    try {
      return await withPartnerTransaction(ctx, async (tx) => {
        const row = await paymentInsert.insert(tx, { ...draft, paymentId: newId("pay", issuedAt), tokenAmount });
        const result = {
          externalUserId: client.externalUserId,
          tenantId: client.tenantId,
          payment: paymentView(row),
          instructions: sentence(row.tokenAmount!, decimals, token, network, draft.payerAddress, row.recipient!, row),
        };
        await ctx.idempotency?.record(tx, result);
        return result;
      });
    } catch (error) {
      // Another open instruction asks for this very amount: draw another tag.
      if (attempt < TAG_ATTEMPTS && isUniqueViolation(error, "payments.network_id, payments.token_address")) continue;
      throw error;
    }
  }
}

/** The client's obligation, open, with what is still owed on it (its amount less reductions). */
export async function openObligation(ctx: Ctx, clientId: number, obligationId: string) {
  const [found] = await ctx.db.read.select({ row: obligations, reduced: reducedSoFar }).from(obligations)
    .where(and(eq(obligations.obligationId, obligationId), eq(obligations.clientId, clientId)));
  if (!found) throw new ApiError("NOT_FOUND");
  if (found.row.status !== "OPEN") throw new ApiError("OBLIGATION_NOT_OPEN");
  return { row: found.row, remainingMicros: found.row.amountMicros - found.reduced };
}

/** A payment network this service can verify transfers on: a known network with a node configured. */
function enabledNetwork(ctx: Ctx, networkId: string | undefined): EvmNetwork {
  const network = EVM_NETWORKS.find((known) => known === networkId);
  if (!network || !ctx.config.evmRpc[network]) throw new ApiError("NETWORK_NOT_ENABLED");
  return network;
}

async function tokenDecimals(ctx: Ctx, network: EvmNetwork, token: string): Promise<number> {
  let decimals: number;
  try {
    decimals = await evmReaderOf(ctx, network).decimals(token as Hex);
  } catch {
    throw new ApiError("PROVIDER_DOWN", {
      status: 503,
      message: `Não foi possível consultar a rede ${NETWORK_NAMES[network]} agora; tente de novo.`,
    });
  }
  // Below micro-units a charge could not be stated exactly.
  if (decimals < 6) throw new ApiError("TOKEN_NOT_SUPPORTED");
  return decimals;
}

/**
 * The trailing tag: under a cent on a 6-decimal token (at most 9,999 units),
 * under a billionth of a dollar on an 18-decimal one.
 */
function uniqueTag(decimals: number): bigint {
  const space = 10n ** BigInt(Math.min(decimals - 2, 9)) - 1n;
  const random = crypto.getRandomValues(new BigUint64Array(1))[0];
  return 1n + random % space;
}

function sentence(
  tokenAmount: string,
  decimals: number,
  token: string,
  network: EvmNetwork,
  payer: string,
  recipient: string,
  row: { expiresAt: number },
): string {
  const exact = formatDec({ units: BigInt(tokenAmount), scale: decimals });
  const until = new Date(row.expiresAt).toISOString().replace("T", " ").slice(0, 16);
  return `Envie exatamente ${exact} ${token} (${tokenAmount} na menor unidade do token) na rede ` +
    `${NETWORK_NAMES[network]} (chain id ${CHAIN_IDS[network]}), da carteira ${payer} para ${recipient}, ` +
    `até ${until} UTC. Outro valor, outra rede ou outra carteira não quitam esta cobrança.`;
}
