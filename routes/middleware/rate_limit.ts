/**
 * Per-partner limits: every call counts as a request, calls to order routes
 * also as an order. Refused calls are not counted and answer 429 with
 * `Retry-After` (seconds until the window resets). The count is shared by
 * every instance (domain/usage/rate_limiter.ts): most calls are decided from
 * room this instance already claimed, without a promise; a call that needs a
 * new claim waits for that one database write.
 */
import type { MiddlewareHandler, Next } from "hono";
import { ApiError } from "../../domain/errors.ts";
import type { LimitDecision } from "../../domain/usage/rate_limiter.ts";
import type { AppEnv } from "../env.ts";

const ORDER_ROUTE = /^\/v1\/orders(\/|$)/;

export function rateLimit(): MiddlewareHandler<AppEnv> {
  // Synchronous while the decision is (most calls: room already claimed), so it adds no promise of its own.
  return (c, next) => {
    const { rateLimiter, clock } = c.get("deps");
    const partner = c.get("partner");
    const isOrder = c.req.method === "POST" && ORDER_ROUTE.test(c.req.path);
    const decision = rateLimiter.consume(
      partner.partnerId,
      isOrder
        ? { REQUEST: partner.requestsPerMinute, ORDER: partner.ordersPerMinute }
        : { REQUEST: partner.requestsPerMinute },
      clock.now(),
    );
    return decision instanceof Promise ? decision.then((settled) => admit(settled, next)) : admit(decision, next);
  };
}

function admit(decision: LimitDecision, next: Next): Promise<void> {
  if (!decision.allowed) throw new ApiError("RATE_LIMITED", { retryAfterSeconds: decision.retryAfterSeconds });
  return next();
}
