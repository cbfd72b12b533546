/**
 * Partner authentication: `Authorization: Basic base64(clientId:clientSecret)`
 * or the `X-Client-Id` / `X-Client-Secret` pair.
 */
import type { MiddlewareHandler } from "hono";
import { authenticatePartner } from "../../domain/credentials/authenticate_partner.ts";
import type { AppEnv } from "../env.ts";

export function presentedCredential(headers: {
  authorization?: string;
  clientId?: string;
  clientSecret?: string;
}): { clientId: string; clientSecret: string } | null {
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(headers.authorization ?? "");
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
  if (headers.clientId && headers.clientSecret) {
    return { clientId: headers.clientId, clientSecret: headers.clientSecret };
  }
  return null;
}

export function partnerAuth(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const deps = c.get("deps");
    const presented = presentedCredential({
      authorization: c.req.header("authorization"),
      clientId: c.req.header("x-client-id"),
      clientSecret: c.req.header("x-client-secret"),
    });
    c.set("partner", await authenticatePartner(deps.db.read, deps.caches, presented, deps.clock.now()));
    await next();
  };
}
