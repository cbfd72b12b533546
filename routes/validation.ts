/**
 * Validation failures of any route's zod schemas become `400 VALIDATION_ERROR`
 * with a Portuguese message naming the offending fields.
 */
import { z } from "@hono/zod-openapi";
import { ApiError } from "../domain/errors.ts";

z.config(z.locales.ptBR());

export function validationError(error: z.ZodError): ApiError {
  const details = error.issues.slice(0, 5).map((issue) => {
    const path = issue.path.map(String).join(".");
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  return new ApiError("VALIDATION_ERROR", { message: `Dados inválidos. ${details.join("; ")}` });
}

/**
 * `defaultHook` of every OpenAPIHono: throw instead of answering zod's own
 * shape. A path parameter that fails its schema names a resource that cannot
 * exist, and the spec answers a nonexistent resource with 404: the same
 * answer as a well-formed id nobody has.
 */
export function throwOnInvalid(result: { success: boolean; error?: unknown; target?: string }): void {
  if (result.success) return;
  if (result.target === "param") throw new ApiError("NOT_FOUND");
  throw validationError(result.error as z.ZodError);
}
