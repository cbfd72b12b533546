/** Payments of a client's obligations: instructions, confirmation by transaction hash, and reads. */
import { routeGroup } from "./route_group.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { confirmPayment } from "../domain/payments/confirm_payment.ts";
import { createPaymentInstructions } from "../domain/payments/instructions.ts";
import { getPayment } from "../domain/payments/payment_view.ts";
import { partnerCtx } from "./env.ts";
import { idempotentRoute } from "./middleware/idempotency.ts";
import { idempotentJson, json, shaped } from "./respond.ts";
import {
  errorContent,
  idempotencyErrors,
  identifier,
  IK_BEHAVIOUR,
  jsonBody,
  jsonContent,
  partnerErrors,
  RequestId,
} from "./schemas/common.ts";
import * as examples from "./schemas/examples.ts";
import { ExternalUserId } from "./users.ts";

const tags = ["Billing"];

const PaymentStatus = z.enum(["PENDING", "SUBMITTED", "CONFIRMED", "EXPIRED", "SUPERSEDED", "REVIEW"]).openapi({
  description: "CONFIRMED: its transfer paid the obligation. SUPERSEDED: the obligation was reduced or settled after " +
    "the instruction (failureReason PAYMENT_SUPERSEDED or OBLIGATION_NOT_OPEN); ask for a new one if it is still " +
    "open; a transfer already made for it is still honoured. REVIEW: a transfer arrived after the obligation was " +
    "settled: it paid nothing and all of it (overpaidTokenAmount) waits for manual review. SUBMITTED or EXPIRED " +
    "with review REORGED: its credited transfer was taken away by a reorg (EXPIRED when a newer open instruction " +
    "asks for the same amount meanwhile); mined again in time, it credits again.",
});

export const PaymentSchema = z.object({
  paymentId: z.string(),
  obligationId: z.string(),
  method: z.enum(["EVM_TRANSFER", "VENUE_B_USD_SEND", "DEPOSIT_INVOICE"]),
  status: PaymentStatus,
  amountUsd: z.number(),
  tokenSymbol: z.string().nullable(),
  tokenAddress: z.string().nullable(),
  tokenDecimals: z.number().int().nullable(),
  tokenAmount: z.string().nullable().openapi({ description: "Exact amount in the token's smallest units." }),
  networkId: z.string().nullable(),
  recipient: z.string().nullable(),
  receiverVersion: z.number().int().nullable(),
  payerAddress: z.string().nullable(),
  txHash: z.string().nullable(),
  expiresAt: z.string(),
  confirmedAt: z.string().nullable(),
  finalAt: z.string().nullable().openapi({
    description: "EVM: when the credited transfer lay under the network's finality depth (EVM_FINALITY). Until then " +
      "a reorg can still take it away: the payment goes back to SUBMITTED with review REORGED (EXPIRED when a newer " +
      "open instruction asks for the same amount; SUPERSEDED when a transfer held for review settles the " +
      "obligation instead), the obligation is open again unless such a held transfer covers it, and the event " +
      "payment.reversed says so. A node that only misses the receipt while its block is unchanged reverses nothing.",
  }),
  review: z.string().nullable().openapi({
    description: "Why a received transfer needs a person (OVERPAID, OBLIGATION_ALREADY_SETTLED), or REORGED: a " +
      "credited transfer a reorg took away; null otherwise.",
  }),
  overpaidTokenAmount: z.string().nullable(),
  failureReason: z.string().nullable(),
}).openapi("Payment");

const Owner = { externalUserId: z.string(), tenantId: z.string().nullable() };
const ObligationParams = z.object({ id: ExternalUserId, obligationId: identifier(64) });
const PaymentParams = z.object({ id: ExternalUserId, paymentId: identifier(64) });

const InstructionBody = z.object({
  method: z.enum(["EVM_TRANSFER", "VENUE_B_USD_SEND", "DEPOSIT_INVOICE"]).optional(),
  networkId: z.string().max(32).optional().openapi({ description: "bnb or arbitrum" }),
  token: z.string().max(16).optional().openapi({ description: "USDT or USDC (billing.payment.tokens)" }),
  payerAddress: z.string().max(128).optional().openapi({ description: "0x and 40 hex: the wallet that pays" }),
  returnUrl: z.string().url().max(2048).optional().openapi({
    description: "Any method: the payment page's back button (https, an origin registered in the contract, else " +
      "403 RETURN_URL_NOT_ALLOWED).",
  }),
});
const InvoiceSchema = z.object({
  invoiceId: z.string(),
  paymentId: z.string().openapi({ description: "Confirm the deposit's transaction under this id." }),
  obligationId: z.string(),
  status: PaymentStatus,
  amountUsd: z.number(),
  networkId: z.string().nullable(),
  tokenSymbol: z.string().nullable(),
  tokenAddress: z.string().nullable(),
  tokenDecimals: z.number().int().nullable(),
  tokenAmount: z.string().nullable(),
  address: z.string().nullable().openapi({ description: "Exclusive to this invoice." }),
  derivationIndex: z.number().int().nullable(),
  expiresAt: z.string(),
}).openapi("DepositInvoice");

const InstructionResponse = z.object({
  ...Owner,
  payment: PaymentSchema.optional().openapi({ description: "EVM_TRANSFER" }),
  invoice: InvoiceSchema.optional().openapi({ description: "DEPOSIT_INVOICE, instead of a payment" }),
  paymentUrl: z.string().openapi({
    description: "The hosted payment page, `{connect_url}/pay#<token>` (the single-use link token only in the " +
      "fragment; it lives as long as the instruction). VENUE_B_USD_SEND: the client signs the send there. " +
      "EVM_TRANSFER and DEPOSIT_INVOICE: a checkout with the exact amount, the recipient or invoice address, an " +
      "EIP-681 QR code, payment through the browser's wallet and the transfer followed to its confirmation.",
  }),
  instructions: z.string().openapi({ description: "Ready to show, in Portuguese." }),
  requestId: RequestId,
});
const ConfirmBody = z.object({ txHash: z.string().max(256).openapi({ description: "0x and 64 hex" }) });
const ConfirmResponse = z.object({
  ...Owner,
  payment: PaymentSchema,
  credited: z.boolean(),
  code: z.string().optional(),
  message: z.string().optional(),
  requestId: RequestId,
});
const PaymentResponse = z.object({ ...Owner, payment: PaymentSchema, requestId: RequestId });

export const paymentRoutes = routeGroup()
  .openapi(
    createRoute(idempotentRoute({
      method: "post",
      path: "/v1/users/{id}/obligations/{obligationId}/payment-instructions",
      operationId: "createPaymentInstructions",
      description:
        "Issues an instruction to pay an open obligation: the exact token amount, recipient, payer and expiry " +
        "(payment PENDING). A new instruction is needed once it expires. " + IK_BEHAVIOUR +
        "\n\nErrors: 404 unknown client or obligation, 409 OBLIGATION_NOT_OPEN (with `obligationStatus`), 422 " +
        "API_NOT_CONFIGURED (VENUE_B_USD_SEND without a connected VENUE_B account).",
      tags,
      summary: "Issue an instruction to pay an open obligation: exact token amount, recipient, payer, expiry",
      request: { params: ObligationParams, body: jsonBody(InstructionBody, examples.paymentInstructionRequest) },
      responses: {
        200: jsonContent(InstructionResponse, "The instruction.", examples.paymentInstruction),
        ...partnerErrors,
        ...idempotencyErrors,
        422: errorContent("API_NOT_CONFIGURED: VENUE_B_USD_SEND needs the client's connected VENUE_B account."),
      },
    })),
    (c) => {
      const { id, obligationId } = c.req.valid("param");
      return idempotentJson(
        c,
        200,
        (ctx) => createPaymentInstructions(ctx, { externalUserId: id, obligationId, ...c.req.valid("json") }),
        (result) => shaped(InstructionResponse, { ...result, requestId: c.get("requestId") }),
      );
    },
  )
  .openapi(
    createRoute(idempotentRoute({
      method: "post",
      path: "/v1/users/{id}/payments/{paymentId}/confirm",
      operationId: "confirmPayment",
      description:
        "Confirms an EVM transfer by its transaction hash, verified on chain. 200 when credited: the payment is " +
        "CONFIRMED, the obligation paid and `obligation.paid` emitted. 202 with `code` (e.g. PAYMENT_TX_NOT_FOUND) " +
        "while not credited: the payment is SUBMITTED and the same `txHash` may be sent again; it never credits " +
        "twice. " + IK_BEHAVIOUR +
        "\n\nErrors: 404 unknown client or payment, 409 PAYMENT_EXPIRED / TX_ALREADY_USED / TX_MISMATCH / " +
        "OBLIGATION_NOT_OPEN / PAYMENT_SUPERSEDED (ask for a new instruction).",

      tags,
      summary: "Confirm an EVM transfer by its transaction hash, verified on chain; 202 while not credited",
      request: {
        params: PaymentParams,
        body: jsonBody(ConfirmBody, { txHash: examples.paymentCredited.payment.txHash }),
      },
      responses: {
        200: jsonContent(ConfirmResponse, "Credited (the obligation is paid).", examples.paymentCredited),
        202: jsonContent(
          ConfirmResponse,
          "Not credited: see code. Most codes: the same txHash may be sent again. OBLIGATION_ALREADY_SETTLED: " +
            "the transfer arrived after the obligation was settled; it is held for review (status REVIEW), never " +
            "credited.",
          examples.paymentNotCredited,
        ),
        ...partnerErrors,
        ...idempotencyErrors,
        409: errorContent(
          "PAYMENT_EXPIRED, TX_ALREADY_USED, TX_MISMATCH; OBLIGATION_NOT_OPEN (the obligation was settled after " +
            "this instruction; the body also carries obligationStatus) and PAYMENT_SUPERSEDED (it was reduced " +
            "after this instruction: ask for a new one), when no transfer for it arrived; IDEMPOTENCY_CONFLICT, " +
            "IDEMPOTENCY_IN_PROGRESS.",
        ),
      },
    })),
    (c) => {
      const { id, paymentId } = c.req.valid("param");
      return idempotentJson(
        c,
        (output: { status: 200 | 202 }) => output.status,
        (ctx) => confirmPayment(ctx, { externalUserId: id, paymentId, txHash: c.req.valid("json").txHash }),
        (output) => shaped(ConfirmResponse, { ...output.body, requestId: c.get("requestId") }),
      );
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/users/{id}/payments/{paymentId}",
      operationId: "getPayment",
      description: "A payment of the client as recorded: its method, status (see Payment.status), exact token " +
        "amount, recipient, the transaction credited and when it became final, and any review. Changes nothing; " +
        "on-chain progress arrives through POST confirm and the payments job (events `obligation.paid`, " +
        "`payment.reversed`).\n\nErrors: 404 unknown client or payment.",
      tags,
      summary: "A payment and its status",
      request: { params: PaymentParams },
      responses: { 200: jsonContent(PaymentResponse, "The payment.", examples.payment), ...partnerErrors },
    }),
    async (c) => {
      const { id, paymentId } = c.req.valid("param");
      const out = await getPayment(partnerCtx(c), { externalUserId: id, paymentId });
      return json(c, shaped(PaymentResponse, { ...out, requestId: c.get("requestId") }), 200);
    },
  );
