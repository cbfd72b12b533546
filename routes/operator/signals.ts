/** Operator: signals of the engine, and the admission records that say who traded them and why not. */
import { routeGroup } from "../route_group.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { admissionsOfClient, admissionsOfSignal } from "../../domain/engine/admission_reads.ts";
import { receiveSignal } from "../../domain/engine/evaluate_signal.ts";
import { formatDec, parseDec } from "../../venues/decimal.ts";
import { operatorCtx } from "../env.ts";
import { json, shaped } from "../respond.ts";
import { jsonBody, jsonContent, operatorErrors, ProviderIdSchema, RequestId, ShortId } from "../schemas/common.ts";
import * as examples from "../schemas/examples.ts";

const tags = ["Operator: signals"];
const Price = z.number().positive();
/** A JSON number as the exact decimal of its shortest form. */
const decimal = (value: number) => formatDec(parseDec(value));

const SignalBody = z.object({
  signalId: z.string().regex(/^[A-Za-z0-9_.:-]{4,64}$/),
  strategyId: ShortId,
  providerId: ProviderIdSchema,
  symbol: z.string().regex(/^[A-Z0-9]{2,20}$/),
  side: z.enum(["BUY", "SELL"]),
  entryPrice: Price,
  stopLossPrice: Price.nullable().optional(),
  takeProfits: z.array(z.object({ price: Price, share: z.number().gt(0).max(1) })).max(5).default([]),
  confidence: z.number().int().min(0).max(100),
}).strict().openapi("SignalInput");

const SignalSummary = z.object({
  signalId: z.string(),
  evaluated: z.number().int(),
  admitted: z.number().int().openapi({
    description: "Admitted by gates, sizing and admission (some may then fail at dispatch).",
  }),
  dispatched: z.number().int().openapi({ description: "Entries sent to the venue." }),
  refused: z.record(z.string(), z.number().int()).openapi({ description: "Refusals by code." }),
  requestId: RequestId,
});

const AdmissionRecord = z.object({
  signalId: z.string(),
  partnerId: z.string(),
  externalUserId: z.string(),
  providerId: z.string(),
  decision: z.enum(["ADMITTED", "REFUSED"]),
  code: z.string().nullable(),
  stage: z.string().nullable().openapi({ description: "GATE_<n>, SIZING or ADMISSION; null when admitted." }),
  detail: z.string().nullable(),
  quantity: z.string().nullable(),
  price: z.string().nullable(),
  evaluatedAt: z.string(),
}).openapi("AdmissionRecord");
const AdmissionsResponse = z.object({ admissions: z.array(AdmissionRecord), requestId: RequestId });

const app = routeGroup();

app.openapi(
  createRoute({
    method: "post",
    path: "/operator/v1/signals",
    operationId: "publishSignal",
    description: "Stores the signal once by `signalId`, judges every candidate account (clients running the " +
      "strategy at the provider) through the entry gates, sizing and admission, records each verdict as an " +
      "admission record, and sends the admitted entries with their stops and targets; answers when the fan-out " +
      "is done. Position events follow for each client (`position.opened`, `protection.degraded`). Posting the " +
      "same signal again resumes a fan-out cut short and answers the summary; no entry is sent twice." +
      "\n\nErrors: 400 VALIDATION_ERROR (e.g. the strategy is not published for this provider or market), 409 " +
      "STATE_CONFLICT (the signalId was used with other content).",
    tags,
    summary: "Post a signal: stored once by signalId, every candidate account evaluated; answers the fan-out summary",
    request: {
      body: jsonBody(SignalBody, {
        signalId: "demo-0001",
        strategyId: "demo-trend",
        providerId: "VENUE_A",
        symbol: "BTCUSDT",
        side: "BUY",
        entryPrice: 65010,
        stopLossPrice: 63010,
        takeProfits: [{ price: 67010, share: 0.5 }, { price: 69010, share: 0.5 }],
        confidence: 80,
      }),
    },
    responses: { 200: jsonContent(SignalSummary, "Fan-out summary.", examples.signalPublished), ...operatorErrors },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const summary = await receiveSignal(operatorCtx(c), {
      ...body,
      entryPrice: decimal(body.entryPrice),
      stopLossPrice: body.stopLossPrice == null ? null : decimal(body.stopLossPrice),
      takeProfits: body.takeProfits.map((target) => ({ price: decimal(target.price), share: decimal(target.share) })),
    });
    return json(c, shaped(SignalSummary, { ...summary, requestId: c.get("requestId") }), 200);
  },
);

app.openapi(
  createRoute({
    method: "get",
    path: "/operator/v1/signals/{signalId}/admissions",
    operationId: "listSignalAdmissions",
    description: "Why each candidate account traded the signal or not: the decision, the refusal code and the " +
      "stage that refused (GATE_<n>, SIZING, ADMISSION), the quantity and price admitted. Changes nothing; an " +
      "unknown signal has no records.",
    tags,
    summary: "Admission records of a signal (up to 500), optionally by decision or code",
    request: {
      params: z.object({ signalId: z.string().max(64) }),
      query: z.object({ decision: z.enum(["ADMITTED", "REFUSED"]).optional(), code: z.string().max(64).optional() }),
    },
    responses: { 200: jsonContent(AdmissionsResponse, "Records.", examples.signalAdmissions), ...operatorErrors },
  }),
  async (c) => {
    const records = await admissionsOfSignal(operatorCtx(c), { ...c.req.valid("param"), ...c.req.valid("query") });
    return json(c, shaped(AdmissionsResponse, { admissions: records, requestId: c.get("requestId") }), 200);
  },
);

app.openapi(
  createRoute({
    method: "get",
    path: "/operator/v1/partners/{partnerId}/clients/{externalUserId}/admissions",
    operationId: "listClientAdmissions",
    description: "The same records for one client across signals: what the engine decided for it each time and " +
      "why. Changes nothing; an unknown client has no records.",
    tags,
    summary: "A client's admission records across signals, newest first (up to 500)",
    request: { params: z.object({ partnerId: ShortId, externalUserId: z.string().max(480) }) },
    responses: { 200: jsonContent(AdmissionsResponse, "Records.", examples.clientAdmissions), ...operatorErrors },
  }),
  async (c) => {
    const records = await admissionsOfClient(operatorCtx(c), c.req.valid("param"));
    return json(c, shaped(AdmissionsResponse, { admissions: records, requestId: c.get("requestId") }), 200);
  },
);

export const operatorSignals = app;
