/**
 * Validation failures of any route's zod schemas become `400 VALIDATION_ERROR`
 * with a Portuguese message naming the offending fields.
 */
import { z } from "@hono/zod-openapi";
import { ApiError } from "../domain/errors.ts";

z.config(z.locales.pt());

export function validationError(error: z.ZodError): ApiError {
  const details = error.issues.slice(0, 5).map((issue) => {
    const path = issue.path.map(String).join(".");
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  return new ApiError("VALIDATION_ERROR", { message: `Dados inválidos. ${details.join("; ")}` });
}

/** `defaultHook` of every OpenAPIHono: throw instead of answering zod's own shape. */
export function throwOnInvalid(result: { success: boolean; error?: unknown }): void {
  if (!result.success) throw validationError(result.error as z.ZodError);
}
