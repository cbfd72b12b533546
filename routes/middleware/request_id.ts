/**
 * Every response carries `X-Request-Id`. A caller's id is echoed when it is
 * well formed (1-128 of `A-Z a-z 0-9 . _ : -`); anything else is replaced, so
 * a header can never smuggle text into our logs or responses.
 */
import type { MiddlewareHandler } from "hono";
import { randomToken } from "../../domain/ids.ts";
import type { AppEnv } from "../env.ts";

const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const given = c.req.header("x-request-id");
    const id = given && WELL_FORMED.test(given) ? given : `req_${randomToken(24)}`;
    c.set("requestId", id);
    c.header("X-Request-Id", id);
    await next();
    c.header("X-Request-Id", id);
  };
}
