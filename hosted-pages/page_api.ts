/**
 * What the hosted pages' JSON APIs share: bodies checked against their
 * schema (the API's VALIDATION_ERROR), and the page ticket, which travels in
 * `Authorization: Bearer <ticket>`, never in a URL.
 */
import type { z } from "zod";
import { ApiError, type ErrorCode } from "../domain/errors.ts";
import { validationError } from "../routes/validation.ts";

export function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (!result.success) throw validationError(result.error);
  return result.data;
}

/** The page ticket of the request, or `invalid` (the page's own code for a link it cannot use). */
export function ticketOf(c: { req: { header(name: string): string | undefined } }, invalid: ErrorCode): string {
  const match = /^Bearer ([A-Za-z0-9_-]{43})$/.exec(c.req.header("authorization") ?? "");
  if (!match) throw new ApiError(invalid);
  return match[1];
}
