/**
 * `Idempotency-Key` on the mutations the spec marks IK: same key and same body
 * replays the stored status and body; see domain/idempotency for the rules.
 */
import type { MiddlewareHandler } from "hono";
import { ApiError } from "../../domain/errors.ts";
import {
  claimKey,
  completeKey,
  isStorableOutcome,
  KEY_PATTERN,
  releaseKey,
  requestHash,
} from "../../domain/idempotency/idempotency_keys.ts";
import type { AppEnv } from "../env.ts";

export function idempotent(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const key = c.req.header("idempotency-key");
    if (!key) throw new ApiError("IDEMPOTENCY_KEY_REQUIRED");
    if (!KEY_PATTERN.test(key)) {
      throw new ApiError("VALIDATION_ERROR", {
        message: "A Idempotency-Key deve ter de 8 a 128 caracteres entre A-Z a-z 0-9 . _ : -",
      });
    }
    const { db, clock } = c.get("deps");
    const scope = { partnerId: c.get("partner").partnerId, route: `${c.req.method} ${c.req.path}`, key };
    const claim = await claimKey(db, scope, requestHash(c.get("jsonBody")), clock.now());
    if (claim.kind === "replay") {
      c.header("Idempotent-Replayed", "true");
      return c.body(claim.body, claim.status as 200, { "content-type": "application/json" });
    }
    try {
      await next();
    } finally {
      const body = await c.res.clone().text();
      const code = c.res.status >= 400 ? errorCode(body) : undefined;
      if (isStorableOutcome(c.res.status, code)) await completeKey(db, scope, c.res.status, body);
      else await releaseKey(db, scope);
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
