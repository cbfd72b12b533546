/** Wire schemas shared by every route: the error envelope and common fields. */
import { z } from "@hono/zod-openapi";

export const RequestId = z.string().openapi({ description: "Id of this request; also in the X-Request-Id header." });

export const ErrorResponse = z.object({
  error: z.object({
    code: z.string().openapi({ description: "Stable code to branch on.", example: "VALIDATION_ERROR" }),
    message: z.string().openapi({ description: "Portuguese text ready for display." }),
    requestId: RequestId,
  }),
}).openapi("Error");

const errorContent = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorResponse } },
});

/** Failures any partner route can answer; spread into every route's responses. */
export const partnerErrors = {
  400: errorContent("Invalid body, query or header (VALIDATION_ERROR) and other 400 codes."),
  401: errorContent("B2B_CREDENTIAL_INVALID"),
  403: errorContent("PRINCIPAL_NOT_ACTIVE, SCOPE_FIELD_REJECTED and other 403 codes."),
  404: errorContent("NOT_FOUND: nonexistent or outside the caller's scope."),
  429: errorContent("RATE_LIMITED, with Retry-After."),
  500: errorContent("INTERNAL_ERROR"),
} as const;

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
} as const;

export { errorContent };

export const IdempotencyKeyHeader = z.object({
  "idempotency-key": z.string().optional().openapi({
    description: "Required: 8-128 characters of A-Z a-z 0-9 . _ : -",
    example: "create-user-42-0001",
  }),
});

export const jsonContent = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

export const jsonBody = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { "application/json": { schema } },
});

export const ProviderIdSchema = z.enum(["VENUE_A", "VENUE_B"]).openapi({ description: "Provider id." });

/** A USD amount: a number with at most 6 decimals. */
export const UsdAmount = z.number().min(0).refine(
  (n) => Number.isFinite(n) && Math.abs(n * 1e6 - Math.round(n * 1e6)) < 1e-6,
  {
    message: "no máximo 6 casas decimais",
  },
).openapi({ description: "USD, up to 6 decimals." });
