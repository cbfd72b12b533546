/**
 * Turning anything thrown into the error envelope `{error:{code,message,requestId}}`.
 * Unexpected exceptions are logged with the request id and answered with a
 * generic 500: their text may hold internals and is never echoed.
 */
import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { ApiError, type ErrorCode } from "../../domain/errors.ts";
import { randomToken } from "../../domain/ids.ts";
import type { AppEnv } from "../env.ts";

export function errorBody(code: ErrorCode, message: string, requestId: string) {
  return { error: { code, message, requestId } };
}

export function respondWithError(c: Context<AppEnv>, error: ApiError): Response {
  const requestId = c.get("requestId") ?? `req_${randomToken(24)}`;
  c.header("X-Request-Id", requestId);
  return c.json(
    { ...error.extra, ...errorBody(error.code, error.message, requestId) },
    error.status as 400,
  );
}

export const onError: ErrorHandler<AppEnv> = (error, c) => {
  if (error instanceof ApiError) return respondWithError(c, error);
  if (error instanceof HTTPException && error.status < 500) {
    // Hono's own refusals (e.g. a malformed JSON body caught by a validator).
    return respondWithError(c, new ApiError("VALIDATION_ERROR", { status: error.status }));
  }
  const deps = c.get("deps");
  const log = deps?.logger.error ?? console.error;
  log("Unexpected error", {
    requestId: c.get("requestId"),
    method: c.req.method,
    path: c.req.path,
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  return respondWithError(c, new ApiError("INTERNAL_ERROR"));
};

export const notFound: NotFoundHandler<AppEnv> = (c) =>
  respondWithError(c, new ApiError("NOT_FOUND", { message: "Rota não encontrada." }));
