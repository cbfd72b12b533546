/** Wire schemas shared by every route: the error envelope and common fields. */
import { z } from "@hono/zod-openapi";
import { isUsdAmount } from "../../domain/money.ts";
import { isPrintableText } from "../../domain/text.ts";
import { MAX_BODY_BYTES } from "../middleware/body_guard.ts";

export const RequestId = z.string().openapi({ description: "Id of this request; also in the X-Request-Id header." });

export const ErrorResponse = z.object({
  error: z.object({
    code: z.string().openapi({ description: "Stable code to branch on.", example: "VALIDATION_ERROR" }),
    message: z.string().openapi({ description: "Portuguese text ready for display." }),
    requestId: RequestId,
  }),
  obligationStatus: z.enum(["PAID", "CANCELLED"]).optional().openapi({
    description: "OBLIGATION_NOT_OPEN only: what became of the obligation (PAID: settled by a payment; CANCELLED: " +
      "reductions took all of it).",
  }),
}).openapi("Error");

const errorContent = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorResponse } },
});

const STORAGE_503 = "SERVICE_UNAVAILABLE: the database is locked, full or failing and the request's change was not " +
  "recorded; retry after Retry-After seconds with the same Idempotency-Key (an order already sent is answered, " +
  "never sent twice).";

/** Failures any partner route can answer; spread into every route's responses. */
export const partnerErrors = {
  400: errorContent(
    "VALIDATION_ERROR: invalid query, header or body (a body must be JSON in UTF-8, sent with Content-Type: " +
      "application/json); and other 400 codes.",
  ),
  401: errorContent("B2B_CREDENTIAL_INVALID"),
  403: errorContent("PRINCIPAL_NOT_ACTIVE, SCOPE_FIELD_REJECTED and other 403 codes."),
  404: errorContent("NOT_FOUND: nonexistent or outside the caller's scope."),
  429: errorContent("RATE_LIMITED, with Retry-After."),
  500: errorContent("INTERNAL_ERROR"),
  503: errorContent(STORAGE_503),
} as const;

const BODY_METHODS = ["post", "put", "patch", "delete"] as const;

const BODY_TOO_LARGE = {
  description: `VALIDATION_ERROR: the body is over ${MAX_BODY_BYTES / 1024} KiB (a limit of this service; the ` +
    "spec sets none). Not retryable with the same body.",
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
};

/**
 * Declares `413` on every operation of a generated OpenAPI document whose body
 * the body guard reads (routes/middleware/body_guard.ts: any method but GET,
 * HEAD and OPTIONS, with or without a declared body). Added to the document,
 * not spread route by route like partnerErrors, so that no such route can be
 * left without it and no GET claims it. Both APIs' documents go through here.
 */
export function declareBodyLimit<T extends { paths?: unknown }>(document: T): T {
  type Operation = { responses?: Record<string, unknown> };
  for (const item of Object.values((document.paths ?? {}) as Record<string, Record<string, Operation | undefined>>)) {
    for (const method of BODY_METHODS) {
      const operation = item[method];
      if (operation) operation.responses = { ...operation.responses, 413: BODY_TOO_LARGE };
    }
  }
  return document;
}

/** The response headers the service sends, declared once and referenced from every response. */
const RESPONSE_HEADERS = {
  "X-Request-Id": {
    description: "Id of the request (the caller's own when well formed); quote it to support. On a replayed " +
      "idempotent answer, the id of the request that produced it.",
    schema: { type: "string", example: "req_3f9c2a7d41b84e0f9a6c1d2e" },
  },
  "Retry-After": {
    description: "Seconds to wait before trying again: always with 429 RATE_LIMITED (until the minute's window " +
      "resets) and with 503 SERVICE_UNAVAILABLE; 503 PROVIDER_DOWN sends none.",
    schema: { type: "integer", minimum: 1, example: 12 },
  },
  "Idempotent-Replayed": {
    description: "`true` when this is the stored answer of an earlier request with the same Idempotency-Key and body.",
    schema: { type: "string", enum: ["true"] },
  },
} as const;

/**
 * Declares the response headers on every response of a generated document:
 * X-Request-Id everywhere (routes/respond.ts, middleware/request_id.ts),
 * Retry-After on 429 and 503 (middleware/errors.ts), Idempotent-Replayed on
 * the answers of operations that take an Idempotency-Key (a replay keeps the
 * first status). The service sends no other rate-limit header.
 */
export function declareResponseHeaders<T extends { paths?: unknown; components?: unknown }>(document: T): T {
  type Operation = { parameters?: { in: string; name: string }[]; responses?: Record<string, object> };
  const used = new Set<keyof typeof RESPONSE_HEADERS>();
  const ref = (name: keyof typeof RESPONSE_HEADERS) => (used.add(name), { $ref: `#/components/headers/${name}` });
  for (const item of Object.values((document.paths ?? {}) as Record<string, Record<string, Operation>>)) {
    for (const operation of Object.values(item)) {
      const takesKey = operation.parameters?.some((p) => p.in === "header" && p.name === "idempotency-key") ?? false;
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const headers: Record<string, unknown> = { "X-Request-Id": ref("X-Request-Id") };
        if (status === "429" || status === "503") headers["Retry-After"] = ref("Retry-After");
        if (takesKey && status !== "429") headers["Idempotent-Replayed"] = ref("Idempotent-Replayed");
        operation.responses![status] = { ...response, headers };
      }
    }
  }
  const components = (document.components ?? {}) as Record<string, unknown>;
  const headers = Object.fromEntries([...used].map((name) => [name, RESPONSE_HEADERS[name]]));
  document.components = { ...components, headers };
  return document;
}

/**
 * How a route marked IK behaves on a retry, for its description (the
 * retention is domain/idempotency RETENTION_MS).
 */
export const IK_BEHAVIOUR = "Idempotency: `Idempotency-Key` is required. A retry with the same key and body within " +
  "24 hours answers the stored status and body (with `Idempotent-Replayed: true`) and acts no second time; the " +
  "same key with another body answers 409 IDEMPOTENCY_CONFLICT, while the first is still running 409 " +
  "IDEMPOTENCY_IN_PROGRESS; a missing key 400 IDEMPOTENCY_KEY_REQUIRED.";

/** Extra failures of routes marked IK. */
export const idempotencyErrors = {
  409: errorContent("IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS and other 409 codes."),
} as const;

export const operatorErrors = {
  400: errorContent("VALIDATION_ERROR"),
  401: errorContent("OPERATOR_UNAUTHORIZED"),
  404: errorContent("NOT_FOUND"),
  409: errorContent("Conflicting state."),
  500: errorContent("INTERNAL_ERROR"),
  503: errorContent(STORAGE_503),
} as const;

export { errorContent };

/**
 * Optional for zod on purpose: a missing key must answer the spec's 400 IDEMPOTENCY_KEY_REQUIRED (the
 * middleware), not VALIDATION_ERROR; the document still states the contract: required.
 */
export const IdempotencyKeyHeader = z.object({
  "idempotency-key": z.string().optional().openapi({
    param: { required: true },
    description: "Required: 8-128 characters of A-Z a-z 0-9 . _ : -. The same key and body replays the stored " +
      "answer (status and body); another body answers 409 IDEMPOTENCY_CONFLICT; a missing key 400 " +
      "IDEMPOTENCY_KEY_REQUIRED.",
    example: "create-user-42-0001",
  }),
});

export const OptionalIdempotencyKeyHeader = z.object({
  "idempotency-key": z.string().optional().openapi({
    description: "Optional: 8-128 characters of A-Z a-z 0-9 . _ : -; when sent, a retry replays the first answer",
    example: "connect-user-42-0001",
  }),
});

/**
 * Every example a route declares, with the schema it must satisfy:
 * tests/openapi/examples_test.ts parses each with its zod schema, so an
 * example cannot drift from what the route validates or answers.
 */
export const declaredExamples: { schema: z.ZodType; example: unknown }[] = [];

function mediaType<T extends z.ZodType>(schema: T, example: unknown) {
  if (example === undefined) return { schema };
  declaredExamples.push({ schema, example });
  return { schema, example };
}

/** A value or a read-only view of it: examples may be declared `as const` (routes/schemas/examples.ts). */
type ReadonlyDeep<T> = T extends (infer U)[] ? readonly ReadonlyDeep<U>[]
  : T extends object ? { readonly [K in keyof T]: ReadonlyDeep<T[K]> }
  : T;

/** A JSON answer; `example` is a real answer of the service (ids and times from a QA run). */
export const jsonContent = <T extends z.ZodType>(
  schema: T,
  description: string,
  example?: ReadonlyDeep<z.input<T>>,
) => ({
  description,
  content: { "application/json": mediaType(schema, example) },
});

/** A required JSON body; `example` is a request the service accepts. */
export const jsonBody = <T extends z.ZodType>(schema: T, example?: ReadonlyDeep<z.input<T>>) => ({
  required: true,
  content: { "application/json": mediaType(schema, example) },
});

/** An optional JSON body (the route reads it itself); `example` is a request the service accepts. */
export const optionalJsonBody = <T extends z.ZodType>(schema: T, example?: ReadonlyDeep<z.input<T>>) => ({
  required: false,
  content: { "application/json": mediaType(schema, example) },
});

export const ProviderIdSchema = z.enum(["VENUE_A", "VENUE_B"]).openapi({ description: "Provider id." });

/**
 * A USD amount: a finite number, at least 0, with at most 6 decimals once
 * written in exact decimal, and small enough to count in micro-units. The same
 * test the domain converts with, so whatever passes converts.
 */
export const UsdAmount = z.number().min(0).refine(isUsdAmount, {
  message: "deve ser um valor em USD com no máximo 6 casas decimais",
}).openapi({ description: "USD, up to 6 decimals." });

/**
 * An identifier a partner chooses or sends back: 1 to `max` characters
 * (Unicode code points, so an emoji counts once), printable.
 */
export function identifier(max: number) {
  return z.string().superRefine((value, context) => {
    const length = [...value].length;
    if (length === 0) context.addIssue({ code: "custom", message: "não pode ser vazio" });
    else if (length > max) context.addIssue({ code: "custom", message: `deve ter no máximo ${max} caracteres` });
    else if (!isPrintableText(value)) {
      context.addIssue({ code: "custom", message: "não pode conter caracteres de controle nem Unicode inválido" });
    }
  }).openapi({ minLength: 1, maxLength: max });
}

/**
 * A JSON object with free keys and any values. Declared with an explicit
 * `additionalProperties: true`: zod's `unknown` alone would be written as
 * `{nullable: true}` without a type, which OpenAPI 3.0 does not allow.
 */
export const FreeObject = z.record(z.string(), z.unknown()).openapi({ type: "object", additionalProperties: true });

/** Ids of the platform's own catalogs and of tenants: 1-64 printable characters. */
export const ShortId = identifier(64);
