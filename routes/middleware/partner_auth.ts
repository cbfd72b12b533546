/**
 * Partner authentication: `Authorization: Basic base64(clientId:clientSecret)`
 * or the `X-Client-Id` / `X-Client-Secret` pair.
 */
import type { MiddlewareHandler } from "hono";
import { authenticatePartner } from "../../domain/credentials/authenticate_partner.ts";
import type { AppEnv } from "../env.ts";

/** The pair from `Authorization: Basic`, else from the X-Client-* headers (read only then: each read costs). */
export function presentedCredential(header: (name: string) => string | undefined): {
  clientId: string;
  clientSecret: string;
} | null {
  const authorization = header("authorization");
  const basic = authorization && /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization);
  if (basic) {
    let decoded: string;
    try {
      decoded = atob(basic[1]);
    } catch {
      return null;
    }
    const colon = decoded.indexOf(":");
    if (colon <= 0) return null;
    return { clientId: decoded.slice(0, colon), clientSecret: decoded.slice(colon + 1) };
  }
  const clientId = header("x-client-id");
  const clientSecret = clientId && header("x-client-secret");
  return clientId && clientSecret ? { clientId, clientSecret } : null;
}

export function partnerAuth(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const deps = c.get("deps");
    const presented = presentedCredential((name) => c.req.header(name));
    c.set("partner", await authenticatePartner(deps.db.read, deps.caches, presented, deps.clock.now()));
    await next();
  };
}
