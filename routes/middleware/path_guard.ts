/**
 * A path whose percent-encoding does not decode (a stray `%`, or bytes that
 * are not UTF-8, such as an encoded lone surrogate) names no resource: 404.
 * Hono would pass such a segment through undecoded, giving one id two
 * spellings (`%ED` raw and `%25ED` encoded); refusing it keeps every id
 * addressable by exactly one encoding, its `encodeURIComponent`.
 */
import type { MiddlewareHandler } from "hono";
import { ApiError } from "../../domain/errors.ts";
import type { AppEnv } from "../env.ts";

export function pathGuard(): MiddlewareHandler<AppEnv> {
  // Synchronous: on every partner request, so it adds no promise of its own.
  return (c, next) => {
    const url = c.req.url;
    const pathStart = url.indexOf("/", url.indexOf("//") + 2);
    const pathEnd = url.indexOf("?", pathStart);
    const path = url.slice(pathStart, pathEnd === -1 ? undefined : pathEnd);
    if (path.includes("%") && !path.split("/").every(decodes)) throw new ApiError("NOT_FOUND");
    return next();
  };
}

function decodes(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}
