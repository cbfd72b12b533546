/** The operator API: `Authorization: Bearer <OPERATOR_TOKEN>`, compared in constant time. */
import type { MiddlewareHandler } from "hono";
import { ApiError } from "../../domain/errors.ts";
import { constantTimeEqual } from "../../domain/ids.ts";
import type { AppEnv } from "../env.ts";

export function operatorAuth(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const expected = c.get("deps").config.operatorToken;
    const presented = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "")?.[1];
    if (!expected || !presented || !constantTimeEqual(presented, expected)) {
      throw new ApiError("OPERATOR_UNAUTHORIZED");
    }
    await next();
  };
}
