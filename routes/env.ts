/** The Hono environment shared by every route: per-request variables. */
import type { Ctx, Deps } from "../domain/context.ts";
import type { PartnerPrincipal } from "../domain/credentials/authenticate_partner.ts";
import type { IdempotentAnswer } from "../domain/idempotency/idempotency_keys.ts";

export interface AppEnv {
  Variables: {
    requestId: string;
    deps: Deps;
    partner: PartnerPrincipal;
    /** The JSON body as parsed once by the body guard (undefined when there is none). */
    jsonBody: unknown;
    /** Set when the response was built with its X-Request-Id (routes/respond.ts). */
    requestIdSent: boolean;
    /** On IK routes: the answer to store for the request's Idempotency-Key. */
    idempotency: IdempotentAnswer | undefined;
    /** Hosted pages: the nonce their CSP allows scripts and styles by. */
    cspNonce: string;
  };
}

/** Domain context for the current request, acting as the authenticated partner. */
export function partnerCtx(c: { get<K extends keyof AppEnv["Variables"]>(key: K): AppEnv["Variables"][K] }): Ctx {
  const partner = c.get("partner");
  return {
    ...c.get("deps"),
    actor: { kind: "partner", partnerId: partner.partnerId, clientId: partner.clientId },
    requestId: c.get("requestId"),
  };
}

/** Domain context of a hosted page: the end user, who is known only through the page's ticket. */
export function hostedPageCtx(c: { get<K extends keyof AppEnv["Variables"]>(key: K): AppEnv["Variables"][K] }): Ctx {
  return { ...c.get("deps"), actor: { kind: "hostedPage" }, requestId: c.get("requestId") };
}

export function operatorCtx(c: { get<K extends keyof AppEnv["Variables"]>(key: K): AppEnv["Variables"][K] }): Ctx {
  return { ...c.get("deps"), actor: { kind: "operator" }, requestId: c.get("requestId") };
}
