/**
 * The test suite's check of every JSON answer against the schema its route
 * declares for that status. Production does not parse its answers (that cost
 * ~8 % of the CPU under the partner mix): the domain builds each view to
 * its schema, TypeScript holds the shapes, and this middleware, switched on
 * by the tests' app (`AppOptions.checkResponses`), holds the values: an
 * answer the schema refuses, or one carrying a field the schema does not
 * declare (a parse would have stripped it; without the parse it would
 * reach the partner), becomes a 500 naming the route and the difference, so
 * the test that asked fails.
 */
import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../env.ts";

interface RouteDefinition {
  method: string;
  path: string;
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

/** The registry of an OpenAPIHono app: one entry per `app.openapi(route, …)`. */
export interface DeclaredRoutes {
  openAPIRegistry: { definitions: readonly { type: string; route?: unknown }[] };
}

/** `METHOD /path/:param status` → the zod schema of that answer. */
export function declaredAnswers(...apis: DeclaredRoutes[]): Map<string, z.ZodType> {
  const answers = new Map<string, z.ZodType>();
  for (const api of apis) {
    for (const definition of api.openAPIRegistry.definitions) {
      if (definition.type !== "route") continue;
      const route = definition.route as RouteDefinition;
      const path = route.path.replace(/\{(\w+)\}/g, ":$1");
      for (const [status, response] of Object.entries(route.responses ?? {})) {
        const schema = response.content?.["application/json"]?.schema;
        if (schema instanceof z.ZodType) answers.set(`${route.method.toUpperCase()} ${path} ${status}`, schema);
      }
    }
  }
  return answers;
}

export function responseCheck(answers: Map<string, z.ZodType>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    if (!c.res.headers.get("content-type")?.startsWith("application/json")) return;
    const key = `${c.req.method} ${routePath(c, -1)} ${c.res.status}`;
    const schema = answers.get(key);
    if (!schema) return;
    const body = await c.res.clone().json();
    const problem = mismatch(schema, body);
    if (!problem) return;
    console.error(`Answer of ${key} does not match its declared schema: ${problem}`);
    c.res = new Response(JSON.stringify({ error: { code: "INTERNAL_ERROR", message: problem } }), {
      status: 500,
      headers: { "content-type": "application/json" },
    });
  };
}

/** Why `body` is not exactly what `schema` declares, or undefined when it is. */
export function mismatch(schema: z.ZodType, body: unknown): string | undefined {
  const parsed = schema.safeParse(body);
  if (!parsed.success) return z.prettifyError(parsed.error);
  const extra = undeclared(body, parsed.data, "");
  return extra ? `undeclared or changed by the schema: ${extra}` : undefined;
}

/** The first path where `sent` differs from what the schema kept of it. */
function undeclared(sent: unknown, kept: unknown, path: string): string | undefined {
  if (Array.isArray(sent) && Array.isArray(kept)) {
    for (const [i, item] of sent.entries()) {
      const found = undeclared(item, kept[i], `${path}[${i}]`);
      if (found) return found;
    }
    return sent.length === kept.length ? undefined : path;
  }
  if (isRecord(sent) && isRecord(kept)) {
    for (const key of new Set([...Object.keys(sent), ...Object.keys(kept)])) {
      const found = undeclared(sent[key], kept[key], path ? `${path}.${key}` : key);
      if (found) return found;
    }
    return undefined;
  }
  return Object.is(sent, kept) ? undefined : path || "(the answer)";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
