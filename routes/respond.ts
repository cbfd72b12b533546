/**
 * JSON answers of the API. Every response carries `X-Request-Id`; building
 * the response here with a plain header record (not Hono's `c.json`, which
 * turns two headers into a `Headers` object, nor `c.header`, which makes one
 * per request) keeps Deno.serve on its fast path: ~48k against ~39k req/s for
 * the same answer on the 2-core machine.
 */
import type { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { TypedResponse } from "hono/types";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { JSONParsed } from "hono/utils/types";
import type { Ctx } from "../domain/context.ts";
import { ApiError } from "../domain/errors.ts";
import { AnsweredMeanwhile, answerFromRow, type StoredAnswer } from "../domain/idempotency/idempotency_keys.ts";
import { type AppEnv, partnerCtx } from "./env.ts";

/**
 * `body` as the answer `schema` declares, without parsing it: production does
 * not pay for a parse of every answer. TypeScript holds the shape (every
 * field, its nullability and kind); the values a type cannot hold (a status
 * the database gives as a string, an id's pattern) and any field the schema
 * does not declare are held by the test suite, which checks every answer
 * against its route's schema (routes/middleware/response_check.ts).
 */
export function shaped<Schema extends z.ZodType>(_schema: Schema, body: Widened<z.output<Schema>>): z.output<Schema> {
  return body as z.output<Schema>;
}

/** A type with its string literal unions widened to string: what the domain's rows carry. */
type Widened<T> = T extends string ? string
  : T extends readonly (infer Item)[] ? Widened<Item>[]
  : T extends object ? { [K in keyof T]: Widened<T[K]> }
  : T;

export type JsonReply<T, S extends ContentfulStatusCode> = Response & TypedResponse<JSONParsed<T>, S, "json">;

export function json<T, S extends ContentfulStatusCode = 200>(
  c: Context<AppEnv>,
  body: T,
  status?: S,
): JsonReply<T, S> {
  return jsonText(c, JSON.stringify(body), status ?? 200) as JsonReply<T, S>;
}

/** An already serialised JSON body (stored idempotent answers). */
export function jsonText(
  c: Context<AppEnv>,
  text: string,
  status: number,
  extraHeaders?: Record<string, string>,
): Response {
  const requestId = c.get("requestId");
  c.set("requestIdSent", true);
  return new Response(text, {
    status,
    headers: { "content-type": "application/json", "x-request-id": requestId, ...extraHeaders },
  });
}

/**
 * A stored idempotent answer, exactly as first given: the same body, and the
 * X-Request-Id of the request that produced it, so header and body agree.
 */
export function replay(c: Context<AppEnv>, answer: StoredAnswer): Response {
  const original = requestIdIn(answer.body);
  if (original) c.set("requestId", original);
  return jsonText(c, answer.body, answer.status, { "idempotent-replayed": "true" });
}

function requestIdIn(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body);
    const id = parsed?.requestId ?? parsed?.error?.requestId;
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An IK route's answer: `verb` runs with the request's IdempotentAnswer on its
 * context and records `view(output)` inside the transaction of its effect. If
 * another request with the same key committed first, this one's effect was
 * rolled back and the other's answer is replayed (or, for another body,
 * IDEMPOTENCY_CONFLICT).
 */
export async function idempotentJson<T, V, S extends ContentfulStatusCode>(
  c: Context<AppEnv>,
  /** The answer's status, or how the verb's output decides it (200 credited, 202 not yet). */
  status: S | ((output: T) => S),
  verb: (ctx: Ctx) => Promise<T>,
  view: (output: T) => V,
): Promise<JsonReply<V, S>> {
  const statusOf = (output: T) => typeof status === "function" ? status(output) : status;
  const answer = c.get("idempotency");
  // An optional key that was not sent: the verb runs as a plain mutation.
  if (!answer) {
    const output = await verb(partnerCtx(c));
    return json(c, view(output), statusOf(output));
  }
  answer.encodeWith((output) => ({ status: statusOf(output as T), body: JSON.stringify(view(output as T)) }));
  const ctx = { ...partnerCtx(c), idempotency: answer };
  let output: T;
  try {
    output = await verb(ctx);
  } catch (error) {
    answer.stored = null;
    if (!(error instanceof AnsweredMeanwhile)) throw error;
    const stored = answerFromRow(error.row, answer.hash);
    if (!stored) throw new ApiError("IDEMPOTENCY_IN_PROGRESS");
    answer.stored = stored; // already stored: the middleware must not store it again
    return replay(c, stored) as JsonReply<V, S>;
  }
  if (answer.stored) return jsonText(c, answer.stored.body, answer.stored.status) as JsonReply<V, S>;
  // A verb that forgot to record: the middleware stores the answer afterwards, outside the effect's transaction.
  ctx.logger.error("An IK verb did not record its answer with its effect", { route: answer.scope.route });
  return json(c, view(output), statusOf(output));
}
