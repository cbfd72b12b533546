/**
 * Checks on the request body before any handler sees it: size, content type,
 * well-formed JSON, and the platform-controlled fields a partner must never
 * send (spec, Authentication item 9), at any depth, including inside arrays.
 * The parsed body is kept on the context, so it is read exactly once.
 */
import type { MiddlewareHandler } from "hono";
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

export function findForbiddenField(value: unknown, depth = 0): string | null {
  if (depth > 32 || value === null || typeof value !== "object") return null;
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = findForbiddenField(item, depth + 1);
      if (found) return found;
    }
    return null;
  }
  for (const [name, item] of Object.entries(value)) {
    const lower = name.toLowerCase();
    if (FORBIDDEN_FIELDS.has(lower) || FORBIDDEN_PREFIXES.some((p) => lower.startsWith(p))) return name;
    const found = findForbiddenField(item, depth + 1);
    if (found) return found;
  }
  return null;
}

/** Parse and vet the JSON body. `scopeGuard` is on for partner routes. */
export function bodyGuard(options: { scopeGuard: boolean }): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD" || c.req.method === "OPTIONS") return await next();
    const declared = Number(c.req.header("content-length") ?? "0");
    if (declared > MAX_BODY_BYTES) throw tooLarge();
    const raw = await readUpTo(c.req.raw.body, MAX_BODY_BYTES);
    // Hono keeps promises in its body cache (its type says otherwise): later readers reuse these bytes.
    c.req.bodyCache.arrayBuffer = Promise.resolve(exactBuffer(raw)) as unknown as ArrayBuffer;
    const text = new TextDecoder().decode(raw);
    if (text.trim() === "") {
      c.set("jsonBody", undefined);
      return await next();
    }
    const type = c.req.header("content-type") ?? "";
    if (!/^application\/json\b/i.test(type)) {
      throw new ApiError("VALIDATION_ERROR", { status: 415, message: "O Content-Type deve ser application/json." });
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ApiError("VALIDATION_ERROR", { message: "O corpo não é um JSON válido." });
    }
    if (options.scopeGuard) {
      const field = findForbiddenField(body);
      if (field) {
        throw new ApiError("SCOPE_FIELD_REJECTED", {
          message: `O campo "${field.slice(0, 64)}" é controlado pela plataforma e não pode ser enviado.`,
        });
      }
    }
    c.set("jsonBody", body);
    // Hand the parsed body to Hono's cache, so route validators do not parse it a second time.
    c.req.bodyCache.json = Promise.resolve(body);
    await next();
  };
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

function tooLarge(): ApiError {
  return new ApiError("VALIDATION_ERROR", {
    status: 413,
    message: `O corpo excede o limite de ${MAX_BODY_BYTES / 1024} KiB.`,
  });
}
