/**
 * A group of documented routes: `@hono/zod-openapi`'s OpenAPIHono, whose
 * `openapi(route, handler)` registers the route in the OpenAPI document and
 * validates its request against the same schemas, with one change for
 * routes without a body (every read): their path parameters, query and
 * headers are checked synchronously, in the handler's own call.
 *
 * The library checks each part in a middleware of its own, through zod's
 * `safeParseAsync`: two or three extra promise hops and an async parse per
 * request, ~10 µs of a status read's ~55. The schemas here are all
 * synchronous (no async refinement), so `safeParse` gives the same verdict
 * and the same data. Routes with a body keep the library's validation,
 * which must read the body (a promise in any case) and check its media type.
 */
import { OpenAPIHono, type z } from "@hono/zod-openapi";
import type { Context, Handler } from "hono";
import type { AppEnv } from "./env.ts";
import { throwOnInvalid } from "./validation.ts";

type Target = "param" | "query" | "header";

interface RequestParts {
  params?: z.ZodType;
  query?: z.ZodType;
  headers?: z.ZodType;
  body?: unknown;
  cookies?: unknown;
}

interface RouteConfig {
  method: string;
  path: string;
  request?: RequestParts;
  middleware?: Handler | Handler[];
  hide?: boolean;
}

export function routeGroup(): OpenAPIHono<AppEnv> {
  const group = new OpenAPIHono<AppEnv>({ defaultHook: throwOnInvalid });
  const documented = group.openapi;
  group.openapi = ((route: RouteConfig, handler: Handler, hook?: unknown) => {
    if (route.request?.body || route.request?.cookies || hook) {
      return documented(route as never, handler as never, hook as never);
    }
    const { middleware, hide, ...documentedRoute } = route;
    if (!hide) group.openAPIRegistry.registerPath(documentedRoute as never);
    const checks = checksOf(route.request ?? {});
    const validated: Handler = (c, next) => {
      for (const check of checks) {
        const result = check.schema.safeParse(check.read(c));
        if (!result.success) throwOnInvalid({ success: false, error: result.error, target: check.target });
        c.req.addValidatedData(check.target, result.data as never);
      }
      return handler(c, next);
    };
    const before = middleware ? [middleware].flat() : [];
    group.on([route.method], [route.path.replaceAll(/\/{(.+?)}/g, "/:$1")], ...before, validated);
    return group;
  }) as typeof group.openapi;
  return group;
}

interface Check {
  target: Target;
  schema: z.ZodType;
  read: (c: Context) => unknown;
}

/** What each part is read as, exactly as `hono/validator` reads it for the library. */
function checksOf(request: RequestParts): Check[] {
  const checks: Check[] = [];
  if (request.query) checks.push({ target: "query", schema: request.query, read: queryOf });
  if (request.params) checks.push({ target: "param", schema: request.params, read: (c) => c.req.param() });
  if (request.headers) {
    // Header names arrive lower-cased; the schema names them as declared (`Idempotency-Key`).
    const declared = "shape" in request.headers ? Object.keys(request.headers.shape as object) : [];
    const named = new Map(declared.map((name) => [name.toLowerCase(), name]));
    const read = (c: Context) =>
      Object.fromEntries(Object.entries(c.req.header()).map(([name, value]) => [named.get(name) ?? name, value]));
    checks.push({ target: "header", schema: request.headers, read });
  }
  return checks;
}

/** A name given once is a string, given several times an array. */
function queryOf(c: Context): Record<string, string | string[]> {
  return Object.fromEntries(
    Object.entries(c.req.queries()).map(([name, values]) => [name, values.length === 1 ? values[0] : values]),
  );
}
