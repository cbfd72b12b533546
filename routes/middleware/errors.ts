/**
 * Turning anything thrown into the error envelope `{error:{code,message,requestId}}`.
 * A database that is locked, full or failing answers 503 SERVICE_UNAVAILABLE
 * with Retry-After. Other unexpected exceptions are logged with the request id and answered with a
 * generic 500: their text may hold internals and is never echoed, nor logged
 * (a drizzle error's message quotes every bound parameter), so the log has
 * their class, code and stack frames only.
 */
import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { ApiError, type ErrorCode, storageUnavailable } from "../../domain/errors.ts";
import { createLogger, errorFields } from "../../domain/logger.ts";
import type { AppEnv } from "../env.ts";
import { jsonText } from "../respond.ts";
import { newRequestId } from "./request_id.ts";

export function errorBody(code: ErrorCode, message: string, requestId: string) {
  return { error: { code, message, requestId } };
}

export function respondWithError(c: Context<AppEnv>, error: ApiError): Response {
  // An error can happen before the request context middleware ran (e.g. inside Hono itself).
  if (!c.get("requestId")) c.set("requestId", newRequestId());
  return jsonText(
    c,
    JSON.stringify({ ...error.extra, ...errorBody(error.code, error.message, c.get("requestId")) }),
    error.status,
    error.retryAfterSeconds === undefined ? undefined : { "retry-after": String(error.retryAfterSeconds) },
  );
}

/** For failures before the request context middleware gave the request its dependencies. */
const contextlessLogger = createLogger("error");

export const onError: ErrorHandler<AppEnv> = (error, c) => {
  if (error instanceof ApiError) return respondWithError(c, error);
  if (error instanceof HTTPException && error.status < 500) {
    // Hono's own refusals (e.g. a malformed JSON body caught by a validator).
    return respondWithError(c, new ApiError("VALIDATION_ERROR", { status: error.status }));
  }
  const logger = c.get("deps")?.logger ?? contextlessLogger;
  const storage = storageUnavailable(error);
  if (storage) {
    // Not a bug of the request: the database is locked by another process, full or failing. The caller
    // hears it may try again (503 with Retry-After); the operator reads the cause in the log.
    const fields = { requestId: c.get("requestId"), method: c.req.method, path: c.req.path, ...errorFields(error) };
    if (storage.cause === "BUSY") logger.warn("Storage unavailable", fields);
    else logger.error("Storage unavailable", fields);
    return respondWithError(c, storage.error);
  }
  logger.error("Unexpected error", {
    requestId: c.get("requestId"),
    method: c.req.method,
    path: c.req.path,
    ...errorFields(error),
  });
  return respondWithError(c, new ApiError("INTERNAL_ERROR"));
};

export const notFound: NotFoundHandler<AppEnv> = (c) =>
  respondWithError(c, new ApiError("NOT_FOUND", { message: "Rota não encontrada." }));
