/**
 * Checks on the request body before any handler sees it: size, content type,
 * UTF-8, well-formed JSON, nesting depth, text the service can store whole,
 * and the platform-controlled fields a partner must never send (spec,
 * Authentication item 9), at any depth, including inside arrays. The parsed
 * body is kept on the context, so it is read exactly once. Every API that reads
 * a body goes through here: partner, operator and the hosted pages'.
 *
 * The spec answers an invalid body with 400 VALIDATION_ERROR, so a body that is
 * not `application/json` or not UTF-8 gets that too (not 415). Only a body over
 * MAX_BODY_BYTES has a status of its own, 413, still VALIDATION_ERROR: the
 * spec sets no size, and 413 tells a client the body itself, not its content,
 * is the problem. Both OpenAPI documents declare it on every route that reads
 * a body (declareBodyLimit, routes/schemas/common.ts).
 *
 * A request for a route that does not exist skips all of this and answers 404:
 * what its body holds does not matter, so it is not even read.
 */
import type { Context, MiddlewareHandler, Next } from "hono";
import { matchedRoutes } from "hono/route";
import { ApiError } from "../../domain/errors.ts";
import type { AppEnv } from "../env.ts";

export const MAX_BODY_BYTES = 64 * 1024;

/** Exact names (compared case-insensitively) and prefixes the partner may never send. */
const FORBIDDEN_FIELDS = new Set([
  "principalid",
  "partnerid",
  "allowedproviders",
  "riskenvelope",
  "beneficiary",
  "performancefeepercent",
  "carrypolicy",
  "performanceperiod",
  "subscriptionmonthlyusd",
  "subscriptionproviders",
  "paymentrecipient",
  "obligationstatus",
  "grants",
  "contractversion",
  "commercialstatus",
]);
const FORBIDDEN_PREFIXES = ["builder", "performancefee", "subscription"];

/**
 * Deeper than any body the API defines; a deeper one is refused rather than
 * walked, so no later code (validators, hashing, logging) meets it.
 */
export const MAX_BODY_DEPTH = 32;

type BodyProblem =
  | { kind: "forbidden"; field: string }
  | { kind: "tooDeep" }
  | { kind: "unstorableText" };

/**
 * The problem of a parsed body, walked without recursion: nesting beyond
 * MAX_BODY_DEPTH, a string (key or value) with NUL or an unpaired surrogate
 * (the database driver would cut it short or rewrite it), or a
 * platform-controlled field name. A body that is too deep is refused as such
 * whatever else it holds, so the answer never depends on the walk's order.
 */
export function findBodyProblem(body: unknown, scopeGuard: boolean): BodyProblem | null {
  let found: BodyProblem | null = null;
  const note = (problem: BodyProblem) => {
    if (!found || (found.kind === "forbidden" && problem.kind === "unstorableText")) found = problem;
  };
  const pending: [value: unknown, depth: number][] = [[body, 0]];
  while (pending.length) {
    const [value, depth] = pending.pop()!;
    if (typeof value === "string") {
      if (!isStorableText(value)) note({ kind: "unstorableText" });
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (depth >= MAX_BODY_DEPTH) return { kind: "tooDeep" };
    if (Array.isArray(value)) {
      for (const item of value) pending.push([item, depth + 1]);
      continue;
    }
    for (const [name, item] of Object.entries(value)) {
      if (!isStorableText(name)) note({ kind: "unstorableText" });
      else if (scopeGuard && isForbiddenField(name)) note({ kind: "forbidden", field: name });
      pending.push([item, depth + 1]);
    }
  }
  return found;
}

function isForbiddenField(name: string): boolean {
  const lower = name.toLowerCase();
  return FORBIDDEN_FIELDS.has(lower) || FORBIDDEN_PREFIXES.some((prefix) => lower.startsWith(prefix));
}

function isStorableText(text: string): boolean {
  return !text.includes("\0") && text.isWellFormed();
}

/** Whether a handler (not only middleware) exists for this method and path. */
function routeExists(c: Context): boolean {
  return matchedRoutes(c).some((route) => route.method === c.req.method);
}

/** Parse and vet the JSON body. `scopeGuard` is on for partner routes. */
export function bodyGuard(options: { scopeGuard: boolean }): MiddlewareHandler<AppEnv> {
  // Not async where nothing is read: a request without a body passes on without a promise of its own.
  return (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD" || c.req.method === "OPTIONS") return next();
    if (!routeExists(c)) return next();
    return vetBody(c, next, options.scopeGuard);
  };
}

async function vetBody(c: Context<AppEnv>, next: Next, scopeGuard: boolean): Promise<void> {
  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const raw = await readUpTo(c.req.raw.body, MAX_BODY_BYTES);
  // Hono keeps promises in its body cache (its type says otherwise): later readers reuse these bytes.
  c.req.bodyCache.arrayBuffer = Promise.resolve(exactBuffer(raw)) as unknown as ArrayBuffer;
  const text = decodeUtf8(raw);
  if (text !== null && text.trim() === "") {
    c.set("jsonBody", undefined);
    return await next();
  }
  if (!isJsonMediaType(c.req.header("content-type"))) {
    throw new ApiError("VALIDATION_ERROR", {
      message: "O corpo deve ser JSON, enviado com o cabeçalho Content-Type: application/json.",
    });
  }
  // A lenient decoder would store each invalid byte as U+FFFD: what was sent would be lost without a word.
  if (text === null) {
    throw new ApiError("VALIDATION_ERROR", { message: "O corpo deve ser JSON em UTF-8 válido." });
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError("VALIDATION_ERROR", { message: "O corpo não é um JSON válido." });
  }
  const problem = findBodyProblem(body, scopeGuard);
  if (problem) throw refusal(problem);
  c.set("jsonBody", body);
  // Hand the parsed body to Hono's cache, so route validators do not parse it a second time.
  c.req.bodyCache.json = Promise.resolve(body);
  await next();
}

/**
 * The bytes as text, or null when they are not UTF-8 (an invalid or truncated
 * sequence, an encoded surrogate, an overlong form). A leading byte order mark
 * is dropped, as RFC 8259 section 8.1 allows a parser to; a UTF-16 one is not
 * UTF-8 and makes the body null.
 */
function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return null;
  }
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** `application/json`, with any parameters (`; charset=utf-8`), in any case. */
function isJsonMediaType(type: string | undefined): boolean {
  return type?.split(";")[0].trim().toLowerCase() === "application/json";
}

/**
 * The body's bytes, counted as they stream in: a body without Content-Length
 * (chunked) or with a false one is cut at `max` and the upload cancelled,
 * instead of being read whole first.
 */
async function readUpTo(body: ReadableStream<Uint8Array> | null, max: number): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const whole = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return whole;
}

/** The bytes as an ArrayBuffer of exactly their length (a chunk may be a view into a larger one). */
function exactBuffer(bytes: Uint8Array): ArrayBuffer {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return (whole ? bytes.buffer : bytes.slice().buffer) as ArrayBuffer;
}

function refusal(problem: BodyProblem): ApiError {
  switch (problem.kind) {
    case "forbidden":
      return new ApiError("SCOPE_FIELD_REJECTED", {
        message: `O campo "${problem.field.slice(0, 64)}" é controlado pela plataforma e não pode ser enviado.`,
      });
    case "tooDeep":
      return new ApiError("VALIDATION_ERROR", {
        message: `O corpo tem mais de ${MAX_BODY_DEPTH} níveis de aninhamento.`,
      });
    case "unstorableText":
      return new ApiError("VALIDATION_ERROR", {
        message: "O corpo contém texto com o caractere NUL ou Unicode inválido (surrogate isolado).",
      });
  }
}

function tooLarge(): ApiError {
  return new ApiError("VALIDATION_ERROR", {
    status: 413,
    message: `O corpo excede o limite de ${MAX_BODY_BYTES / 1024} KiB.`,
  });
}
