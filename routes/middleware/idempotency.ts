/**
 * `Idempotency-Key` on the mutations the spec marks IK: same key and same body
 * replays the stored status and body; see domain/idempotency for the rules.
 *
 * The key is only read here. A verb that changes state stores its answer in
 * the transaction of its effect (routes/respond.ts `idempotentJson`); what is
 * left to store here are answers that changed nothing, once the handler is done.
 */
import type { RouteConfig } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { ApiError } from "../../domain/errors.ts";
import {
  answerFromRow,
  findKey,
  IdempotentAnswer,
  isStorableOutcome,
  KEY_PATTERN,
  requestHash,
} from "../../domain/idempotency/idempotency_keys.ts";
import type { AppEnv } from "../env.ts";
import { replay } from "../respond.ts";
import { IdempotencyKeyHeader, OptionalIdempotencyKeyHeader } from "../schemas/common.ts";

/**
 * Keys being worked on by each running service (one per database handle): a
 * concurrent duplicate is told to wait, not run. Across instances the check
 * under the write lock decides (domain/idempotency).
 */
const inFlightByService = new WeakMap<object, Set<string>>();

export interface IdempotencyOptions {
  leaseMs?: number;
  /** The key is honoured when sent but not required (a route the spec does not mark IK). */
  optional?: boolean;
}

export function idempotent(options: IdempotencyOptions = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const key = c.req.header("idempotency-key");
    if (!key && options.optional) return await next();
    if (!key) throw new ApiError("IDEMPOTENCY_KEY_REQUIRED");
    if (!KEY_PATTERN.test(key)) {
      throw new ApiError("VALIDATION_ERROR", {
        message: "A Idempotency-Key deve ter de 8 a 128 caracteres entre A-Z a-z 0-9 . _ : -",
      });
    }
    const { db, clock } = c.get("deps");
    let inFlight = inFlightByService.get(db);
    if (!inFlight) inFlightByService.set(db, inFlight = new Set());
    const now = clock.now();
    const scope = { partnerId: c.get("partner").partnerId, route: `${c.req.method} ${c.req.path}`, key };
    const hash = requestHash(c.get("jsonBody"));
    const stored = answerFromRow(await findKey(db.read, scope, now), hash);
    if (stored) return replay(c, stored);
    const flightKey = `${scope.partnerId}\u0000${scope.route}\u0000${key}`;
    if (inFlight.has(flightKey)) throw new ApiError("IDEMPOTENCY_IN_PROGRESS");
    inFlight.add(flightKey);
    const answer = new IdempotentAnswer(db, scope, hash, now, options.leaseMs);
    c.set("idempotency", answer);
    try {
      await next();
      if (answer.stored) return undefined;
      const body = await c.res.clone().text();
      const code = c.res.status >= 400 ? errorCode(body) : undefined;
      // Hono keeps the error its onError turned into this response.
      const uncertain = c.error instanceof ApiError && c.error.uncertain;
      if (uncertain || isStorableOutcome(c.res.status, code)) {
        await answer.storeAfterwards({ status: c.res.status, body });
      } else {
        await answer.release();
      }
    } finally {
      answer.endLease();
      inFlight.delete(flightKey);
    }
    return undefined;
  };
}

function errorCode(body: string): string | undefined {
  try {
    return JSON.parse(body)?.error?.code;
  } catch {
    return undefined;
  }
}

/**
 * Makes a route IK in its own definition (or, with `optional`, a route that
 * honours a key when one is sent): the Idempotency-Key header in its
 * OpenAPI description and the middleware that enforces it come together, so
 * one cannot be declared without the other (tests compare the documented IK
 * operations with the spec's list).
 */
export function idempotentRoute<R extends RouteConfig>(route: R, options: { optional?: boolean } = {}) {
  return {
    ...route,
    middleware: [idempotent(options)],
    request: { ...route.request, headers: options.optional ? OptionalIdempotencyKeyHeader : IdempotencyKeyHeader },
  } as R & {
    middleware: MiddlewareHandler<AppEnv>[];
    request: R["request"] & { headers: typeof IdempotencyKeyHeader };
  };
}
