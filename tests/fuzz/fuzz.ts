/**
 * Hostile input at volume, generated from the service's own OpenAPI
 * documents (partner and operator): every operation gets requests with
 * random and boundary values, wrong types, missing and extra fields, huge
 * strings and arrays, unicode and control characters, platform-controlled
 * fields at any depth, bad Idempotency-Keys and bad ids in paths. Each
 * answer must be a documented status (never 5xx) with the error envelope
 * when it refuses, must not echo a secret, and a refused request must leave
 * the database as it was (a digest of the tables a request can change).
 */
import fc from "fast-check";
import { sql } from "drizzle-orm";
import { sha256Hex } from "../../domain/ids.ts";
import { type TestEnv } from "../_helpers/env.ts";
import { OPERATOR_TOKEN } from "../_helpers/env.ts";
import type { TestPartner } from "../_helpers/http.ts";

// deno-lint-ignore no-explicit-any
type Schema = any;

interface Operation {
  api: "partner" | "operator";
  method: string;
  path: string;
  parameters: { name: string; in: string; schema: Schema; required?: boolean }[];
  body: Schema | null;
  documented: Set<string>;
}

export interface FuzzRequest {
  operation: Operation;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** Statuses any route may answer whatever its document lists: body guard, content type, rate limit. */
const CROSS_CUTTING = new Set(["413", "415", "429"]);
/** Keys the platform controls: refused at any depth of a partner body. */
const FORBIDDEN_KEYS = ["performanceFeePercent", "builderFeeTenthsBps", "subscriptionMonthlyUsd", "obligationStatus"];
/** Tables a refused request may still touch by design: request counts and stored idempotent answers. */
const DIGEST_EXCLUDED = new Set(["usage_buckets", "idempotency_keys", "__drizzle_migrations", "egress_budgets"]);

export async function operationsOf(env: TestEnv): Promise<Operation[]> {
  const operations: Operation[] = [];
  for (const [api, url] of [["partner", "/v1/openapi.json"], ["operator", "/operator/v1/openapi.json"]] as const) {
    const doc = await (await env.app.request(url)).json();
    const resolve = (schema: Schema): Schema =>
      schema?.$ref ? resolve(doc.components.schemas[schema.$ref.split("/").pop()]) : schema;
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
      for (const [method, op] of Object.entries(methods)) {
        // The QA-only operator routes move the clock and run jobs: fuzzing them fuzzes time, not input.
        if (path.includes("/clock") || path.includes("/jobs/")) continue;
        operations.push({
          api,
          method: method.toUpperCase(),
          path,
          parameters: (op.parameters ?? []).map((p: Schema) => ({ ...p, schema: resolve(p.schema) })),
          body: resolveDeep(op.requestBody?.content?.["application/json"]?.schema ?? null, resolve),
          documented: new Set(Object.keys(op.responses ?? {})),
        });
      }
    }
  }
  return operations;
}

function resolveDeep(schema: Schema, resolve: (s: Schema) => Schema, depth = 0): Schema {
  if (!schema || depth > 8) return schema;
  const s = resolve(schema);
  const out: Schema = { ...s };
  if (s.properties) {
    out.properties = Object.fromEntries(
      Object.entries(s.properties).map(([k, v]) => [k, resolveDeep(v, resolve, depth + 1)]),
    );
  }
  if (s.items) out.items = resolveDeep(s.items, resolve, depth + 1);
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    if (s[key]) out[key] = s[key].map((v: Schema) => resolveDeep(v, resolve, depth + 1));
  }
  return out;
}

// ------------------------------------------------------------------ values

const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "a\u0000b",
    "\u202e",
    "😀",
    "\ud800",
    "%00",
    "%E0%A4%A",
    "../..",
    "<script>",
    "' OR 1=1 --",
    "0x",
    "1e309",
    "-0",
    "NaN",
    "ana@example.com",
  ),
  fc.integer({ min: 121, max: 70_000 }).map((n) => "x".repeat(n)),
);

const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(1e300, -1, 0, 49.9999999999999, 1e-7, Number.MAX_SAFE_INTEGER + 2),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.integer({ min: 1_000, max: 20_000 }).map((n) => Array.from({ length: n }, () => 1)),
);

/** A value the schema describes, with some of the time something it does not. */
function valueOf(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return anyJson;
  const options: fc.Arbitrary<unknown>[] = [];
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) options.push(fc.oneof(...alternatives.map((s: Schema) => valueOf(s, depth + 1))));
  if (schema.enum) options.push(fc.constantFrom(...schema.enum));
  switch (schema.type) {
    case "object":
      options.push(objectOf(schema, depth));
      break;
    case "array":
      options.push(fc.array(valueOf(schema.items, depth + 1), { maxLength: 4 }));
      break;
    case "string":
      options.push(schema.example ? fc.constant(schema.example) : fc.string({ maxLength: 20 }), hostileString);
      break;
    case "integer":
    case "number":
      options.push(
        fc.integer({ min: schema.minimum ?? -5, max: schema.maximum ?? 1_000 }),
        fc.constantFrom(schema.minimum ?? 0, schema.maximum ?? 0, -1, 0.5, 1e15),
      );
      break;
    case "boolean":
      options.push(fc.boolean());
      break;
  }
  if (!options.length) options.push(anyJson);
  // One time in five, something of another kind altogether.
  return fc.oneof({ arbitrary: fc.oneof(...options), weight: 4 }, { arbitrary: anyJson, weight: 1 });
}

function objectOf(schema: Schema, depth: number): fc.Arbitrary<unknown> {
  const properties: Record<string, Schema> = schema.properties ?? {};
  const entries = Object.entries(properties).map(([key, s]) => [key, valueOf(s, depth + 1)] as const);
  const record = fc.record(Object.fromEntries(entries), { requiredKeys: [] });
  return fc.tuple(
    record,
    fc.option(fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 3 })),
    fc.option(fc.tuple(fc.constantFrom(...FORBIDDEN_KEYS), anyJson)),
  ).map(([base, extra, forbidden]) => {
    const out: Record<string, unknown> = { ...base, ...(extra ?? {}) };
    if (forbidden) out[forbidden[0]] = forbidden[1];
    return out;
  });
}

// ------------------------------------------------------------------ requests

const pathSegment = fc.oneof(
  fc.constantFrom("ana", "bia", "VENUE_A", "VENUE_B", "fuzz-partner", "obl_x", "pay_x", "bnb"),
  hostileString.map((s) => s.slice(0, 300)),
);

const idempotencyKey = fc.oneof(
  fc.uuid().map((u) => `fuzz-${u}`),
  fc.constantFrom("", "short", "has space key 123", "ü".repeat(10), "k".repeat(200)),
  fc.constant(undefined),
);

/** Percent-encoded; a lone surrogate (which cannot be) becomes the bytes a broken client would send. */
function encodeSegment(segment: string): string {
  try {
    return encodeURIComponent(segment);
  } catch {
    return "%ED%A0%80";
  }
}

export function requestOf(operation: Operation, partner: TestPartner): fc.Arbitrary<FuzzRequest> {
  const params = operation.parameters;
  return fc.record({
    segments: fc.array(pathSegment, { minLength: 4, maxLength: 4 }),
    query: fc.array(
      fc.tuple(fc.constantFrom(...params.filter((p) => p.in === "query").map((p) => p.name), "x"), anyJson),
      {
        maxLength: 3,
      },
    ),
    key: idempotencyKey,
    body: operation.body ? valueOf(operation.body) : fc.option(anyJson),
    rawBody: fc.option(fc.constantFrom("{", "not json", "[]", "null", '{"a":' + "[".repeat(100))),
    contentType: fc.constantFrom("application/json", "application/json", "application/json", "text/plain"),
    auth: fc.constantFrom("good", "good", "good", "good", "bad", "none"),
  }).map(({ segments, query, key, body, rawBody, contentType, auth }) => {
    let index = 0;
    const path = operation.path.replace(/\{[^}]+\}/g, () => encodeSegment(String(segments[index++ % 4])));
    const search = new URLSearchParams(query.map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
    const good = operation.api === "partner" ? partner.headers : { authorization: `Bearer ${OPERATOR_TOKEN}` };
    const headers: Record<string, string> = {
      ...(auth === "good" ? good : auth === "bad" ? { authorization: "Basic Zm9vOmJhcg==" } : {}),
      "content-type": contentType,
      ...(key === undefined ? {} : { "idempotency-key": key }),
    };
    const text = operation.method === "GET" || operation.method === "DELETE"
      ? undefined
      : rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
    return { operation, path: `${path}${search.size ? `?${search}` : ""}`, headers, body: text };
  });
}

// ------------------------------------------------------------------ checks

/** A digest of every table a request could change (what a refusal must leave as it was). */
export async function digest(env: TestEnv): Promise<string> {
  const tables = (await env.deps.db.read.values<[string]>(
    sql`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`,
  )).map(([name]) => name).filter((name) => !DIGEST_EXCLUDED.has(name));
  const parts: string[] = [];
  for (const table of tables) {
    const rows = await env.deps.db.read.values(sql.raw(`SELECT * FROM "${table}"`));
    parts.push(`${table}:${JSON.stringify(rows)}`);
  }
  return sha256Hex(parts.join("\n"));
}

export interface Verdict {
  status: number;
  problem: string | null;
}

/** Send one request and judge its answer; `secrets` must never come back. */
export async function send(env: TestEnv, request: FuzzRequest, secrets: string[]): Promise<Verdict> {
  const response = await env.app.request(request.path, {
    method: request.operation.method,
    headers: request.headers,
    body: request.body,
  });
  const text = await response.text();
  const status = response.status;
  const where = `${request.operation.method} ${request.path.slice(0, 120)}`;
  if (status >= 500) return { status, problem: `${status} on ${where}: ${text.slice(0, 300)}` };
  const code = String(status);
  if (!request.operation.documented.has(code) && !CROSS_CUTTING.has(code)) {
    return { status, problem: `undocumented ${status} on ${where}` };
  }
  if (status >= 400) {
    let body: { error?: { code?: unknown; message?: unknown; requestId?: unknown } } = {};
    try {
      body = JSON.parse(text);
    } catch {
      return { status, problem: `${status} without JSON on ${where}` };
    }
    const error = body.error;
    if (typeof error?.code !== "string" || typeof error.message !== "string" || typeof error.requestId !== "string") {
      return { status, problem: `${status} without the error envelope on ${where}: ${text.slice(0, 200)}` };
    }
  }
  for (const secret of secrets) {
    if (text.includes(secret)) return { status, problem: `a secret echoed by ${where}` };
  }
  return { status, problem: null };
}
