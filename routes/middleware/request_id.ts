/**
 * Every response carries `X-Request-Id`. A caller's id is echoed when it is
 * well formed (1-128 of `A-Z a-z 0-9 . _ : -`); anything else is replaced, so
 * a header can never smuggle text into our logs or responses. JSON answers
 * set the header themselves (routes/respond.ts); others get it here.
 */
import type { MiddlewareHandler } from "hono";
import type { Deps } from "../../domain/context.ts";
import type { AppEnv } from "../env.ts";
import { routePath } from "hono/route";
import { recordAnsweredRequest } from "../../domain/telemetry/requests.ts";
import { TELEMETRY_EXPORTED } from "../../domain/telemetry/tracing.ts";

const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

/** `req_` and 24 random hex characters. */
export function newRequestId(): string {
  return `req_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
}

/** The first middleware of every request: its dependencies, its id, and its span's route and latency. */
export function requestContext(deps: Deps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const startedMs = performance.now();
    c.set("deps", deps);
    const given = c.req.header("x-request-id");
    const id = given && WELL_FORMED.test(given) ? given : newRequestId();
    c.set("requestId", id);
    await next();
    if (!c.get("requestIdSent")) c.header("X-Request-Id", id);
    if (!TELEMETRY_EXPORTED) return;
    recordAnsweredRequest({
      method: c.req.method,
      route: routePath(c, -1),
      status: c.res.status,
      partnerId: c.get("partner")?.partnerId,
      startedMs,
    });
  };
}
