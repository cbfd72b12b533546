/**
 * `POST /v1/users/:id/obligations/:obligationId/payment-instructions` for an
 * EVM transfer (spec, Billing and payments): the exact amount of the
 * obligation still owed, in the token's smallest units, plus a tag in the
 * trailing digits that no other open instruction of that token and network
 * carries, so the transfer that pays it names it. The recipient and its
 * version are frozen into the instruction; it expires after an hour. Every
 * instruction opens its hosted payment page (`paymentUrl`, the link token
 * only in its fragment): the checkout for an EVM transfer or an invoice
 * (checkout_page.ts), the signing page for a VENUE_B send.
 */
import { and, eq } from "drizzle-orm";
import type { Hex } from "viem";
import { EVM_NETWORKS, type EvmNetwork, type EvmToken } from "../../config.ts";
import { isUniqueViolation } from "../../db/client.ts";
import { rowInsert } from "../../db/row_insert.ts";
import { obligations, partners, payments } from "../../db/schema.ts";
import { CHAIN_IDS, NETWORK_NAMES } from "../../venues/evm/transfers.ts";
import { formatDec } from "../../venues/decimal.ts";
import { HOUR_MS, wallClockNow } from "../clock.ts";
import { type ClientRow, loadClient } from "../clients/load_client.ts";
import { allowedReturnUrl } from "../connect/return_url.ts";
import { withPartnerTransaction } from "../credentials/partner_transaction.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { ApiError } from "../errors.ts";
import { newId } from "../ids.ts";
import { reducedSoFar } from "../billing/fee_obligations.ts";
import { obligationNotOpen } from "./superseded_instructions.ts";
import { evmReaderOf } from "./evm_networks.ts";
import { invoiceView, paymentView } from "./payment_view.ts";
import { claimInvoiceAddress } from "./deposit_invoices.ts";
import { createSendInstruction } from "./venue_b_send.ts";
import { openPageSession } from "./payment_page_session.ts";
import { brasiliaTime, ptBrAmount } from "./pt_br_text.ts";
import { recipientOf } from "./recipients.ts";

export const INSTRUCTION_TTL_MS = HOUR_MS;
/** A deposit invoice's address is exclusive: a late deposit still names it, so it waits a day. */
export const INVOICE_TTL_MS = 24 * HOUR_MS;
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

/**
 * The answers in the contract's order: the body's own rules (network, a named
 * token, payer) before anything is read, then the client and the obligation
 * (404), whether this charge takes the token (CURRENCY_MISMATCH) and, for a
 * VENUE_B send, the returnUrl (403), then the obligation's state (409) and the
 * rest of the service's (422, RECIPIENT_NOT_CONFIGURED).
 */
export async function createPaymentInstructions(ctx: Ctx, input: InstructionInput) {
  const method = input.method ?? "EVM_TRANSFER";
  const invoice = method === "DEPOSIT_INVOICE";
  const network = method === "VENUE_B_USD_SEND" ? null : enabledNetwork(ctx, input.networkId);
  // A transfer names its token; an invoice may (else the obligation's currency, known once it is read).
  if (network && (input.token !== undefined || !invoice)) supportedToken(ctx, network, input.token);
  const payer = method === "EVM_TRANSFER" ? validPayer(input.payerAddress) : null;
  await ctx.idempotency?.claim();
  const partnerId = partnerOf(ctx);
  const client = await loadClient(ctx.db.read, partnerId, input.externalUserId);
  const owed = await clientObligation(ctx, client.id, input.obligationId);
  if (!network) return await createSendInstruction(ctx, client, owed, input.returnUrl);
  // An invoice is paid in the obligation's own currency; a transfer names its token.
  const token = (invoice ? input.token ?? owed.row.currency : input.token) as EvmToken;
  const tokenAddress = supportedToken(ctx, network, token);
  if (token !== owed.row.currency) {
    throw new ApiError("CURRENCY_MISMATCH", { message: `Esta cobrança é em ${owed.row.currency}, não em ${token}.` });
  }
  const back = await pageReturnUrl(ctx, client, input.returnUrl);
  assertOpen(owed);
  const recipient = invoice ? null : await recipientOf(ctx.db.read, network);
  if (!invoice && !recipient) throw new ApiError("RECIPIENT_NOT_CONFIGURED");
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
    recipient: recipient?.address ?? null,
    receiverVersion: recipient?.receiverVersion ?? null,
    payerAddress: payer,
    issuedAt,
    issuedWallAt: wallClockNow(),
    expiresAt: issuedAt + (invoice ? INVOICE_TTL_MS : INSTRUCTION_TTL_MS),
    updatedAt: issuedAt,
  };
  for (let attempt = 0;; attempt++) {
    // An invoice's address is its own: its amount needs no tag.
    const tokenAmount = (invoice ? base : base + uniqueTag(decimals)).toString();
    try {
      return await withPartnerTransaction(ctx, async (tx) => {
        const address = invoice ? await claimInvoiceAddress(tx, network) : null;
        if (invoice && !address) throw new ApiError("RECIPIENT_NOT_CONFIGURED");
        const row = await paymentInsert.insert(tx, {
          ...draft,
          paymentId: newId("pay", issuedAt),
          tokenAmount,
          ...(address ? { recipient: address.address, derivationIndex: address.index } : {}),
        });
        const result = {
          externalUserId: client.externalUserId,
          tenantId: client.tenantId,
          ...(invoice ? { invoice: invoiceView(row) } : { payment: paymentView(row) }),
          paymentUrl: await openPageSession(ctx, tx, row, back),
          instructions: sentence(row, token, network),
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

/** The client's obligation with what is still owed on it (its amount less reductions), whatever its status. */
async function clientObligation(ctx: Ctx, clientId: number, obligationId: string): Promise<OwedObligation> {
  const [found] = await ctx.db.read.select({ row: obligations, reduced: reducedSoFar }).from(obligations)
    .where(and(eq(obligations.obligationId, obligationId), eq(obligations.clientId, clientId)));
  if (!found) throw new ApiError("NOT_FOUND");
  return { row: found.row, remainingMicros: found.row.amountMicros - found.reduced };
}

interface OwedObligation {
  row: typeof obligations.$inferSelect;
  remainingMicros: number;
}

/** The partner's back button on the payment page: only to an origin its contract registered. */
async function pageReturnUrl(ctx: Ctx, client: ClientRow, returnUrl: string | undefined): Promise<string | null> {
  if (returnUrl === undefined) return null;
  const [partner] = await ctx.db.read.select().from(partners).where(eq(partners.partnerId, client.partnerId));
  return allowedReturnUrl(returnUrl, partner.returnUrlOrigins);
}

/** Only an open obligation takes a new instruction (OBLIGATION_NOT_OPEN says what became of it). */
function assertOpen(owed: OwedObligation): void {
  if (owed.row.status !== "OPEN") throw obligationNotOpen(owed.row.status);
}

/** The token's contract on the network, when this service accepts that token there. */
function supportedToken(ctx: Ctx, network: EvmNetwork, token: string | undefined): string {
  const address = token === undefined ? undefined : ctx.config.evmTokens[network][token as EvmToken];
  if (!address) throw new ApiError("TOKEN_NOT_SUPPORTED");
  return address;
}

/** The declared payer of a transfer: an address that can sign (not the zero address). */
function validPayer(address: string | undefined): string {
  if (!address || !EVM_ADDRESS.test(address) || /^0x0{40}$/.test(address)) throw new ApiError("INVALID_PAYER");
  return address.toLowerCase();
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

/** The instruction in one pt-BR sentence: the exact amount in Brazilian digits, the expiry on Brasília's clock. */
function sentence(
  row: {
    tokenAmount: string | null;
    tokenDecimals: number | null;
    recipient: string | null;
    payerAddress: string | null;
    expiresAt: number;
  },
  token: string,
  network: EvmNetwork,
): string {
  const exact = ptBrAmount(formatDec({ units: BigInt(row.tokenAmount!), scale: row.tokenDecimals! }));
  const from = row.payerAddress ? `da carteira ${row.payerAddress} ` : "de qualquer carteira ";
  const warning = row.payerAddress
    ? "Outro valor, outra rede ou outra carteira não quitam esta cobrança."
    : "Este endereço é exclusivo desta fatura; outro valor ou outra rede não a quitam.";
  return `Envie exatamente ${exact} ${token} (${row.tokenAmount} na menor unidade do token) na rede ` +
    `${NETWORK_NAMES[network]} (chain id ${CHAIN_IDS[network]}), ${from}para ${row.recipient}, ` +
    `até ${brasiliaTime(row.expiresAt)}. ${warning} Ou abra o link de pagamento, que mostra tudo isso com um ` +
    "QR code e acompanha a confirmação.";
}
