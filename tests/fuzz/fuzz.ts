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
import { FORBIDDEN_KEYS, type Known, mutatedValueOf, validValueOf } from "./valid_values.ts";

// deno-lint-ignore no-explicit-any
type Schema = any;

export interface Operation {
  api: "partner" | "operator" | "hosted";
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
  /** Made of values the schema accepts, every one (what VALIDATION_ERROR should then not refuse). */
  valid?: boolean;
  /** What the server sees of the connection (the hosted pages limit requests per peer address). */
  env?: { remoteAddr: { hostname: string } };
}

/** Statuses any route may answer whatever its document lists: body size, rate limit (a wrong content type is 400). */
const CROSS_CUTTING = new Set(["413", "429"]);
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

/** A value of `arbitrary` one time in `n`, else null (fc.option is the other way round: null one time in `freq`). */
export function oneIn<T>(n: number, arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | null> {
  return fc.oneof({ weight: n - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary });
}

export const hostileString: fc.Arbitrary<string> = fc.oneof(
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

export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
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
export function valueOf(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
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
    oneIn(3, fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 3 })),
    oneIn(5, fc.tuple(fc.constantFrom(...FORBIDDEN_KEYS), anyJson)),
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

/** Hostile requests, with valid ones and valid ones with one field over an edge mixed in (half as many each). */
export function requestOf(operation: Operation, partner: TestPartner, known: Known): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(
    { weight: 2, arbitrary: hostileRequestOf(operation, partner) },
    { weight: 1, arbitrary: validRequestOf(operation, partner, known, validValueOf) },
    { weight: 1, arbitrary: validRequestOf(operation, partner, known, mutatedValueOf) },
  );
}

function hostileRequestOf(operation: Operation, partner: TestPartner): fc.Arbitrary<FuzzRequest> {
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
    rawBody: oneIn(10, fc.constantFrom("{", "not json", "[]", "null", '{"a":' + "[".repeat(100))),
    contentType: fc.constantFrom("application/json", "application/json", "application/json", "text/plain"),
    auth: fc.constantFrom("good", "good", "good", "good", "bad", "none"),
  }).map(({ segments, query, key, body, rawBody, contentType, auth }) => {
    let index = 0;
    const path = operation.path.replace(/\{[^}]+\}/g, () => encodeSegment(String(segments[index++ % 4])));
    const search = new URLSearchParams(query.map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
    const headers: Record<string, string> = {
      ...(auth === "good"
        ? goodAuth(operation, partner)
        : auth === "bad"
        ? { authorization: "Basic Zm9vOmJhcg==" }
        : {}),
      "content-type": contentType,
      ...(key === undefined ? {} : { "idempotency-key": key }),
    };
    const text = operation.method === "GET" || operation.method === "DELETE"
      ? undefined
      : rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
    return { operation, path: `${path}${search.size ? `?${search}` : ""}`, headers, body: text };
  });
}

/** Good credentials, path and query values the world knows or the schema accepts, a fresh key, a body from `bodyOf`. */
function validRequestOf(
  operation: Operation,
  partner: TestPartner,
  known: Known,
  bodyOf: (schema: Schema, known: Known) => fc.Arbitrary<unknown>,
): fc.Arbitrary<FuzzRequest> {
  const valueFor = (p: Operation["parameters"][number]) =>
    known[p.name] ? fc.constantFrom(...known[p.name]) : validValueOf(p.schema, known, p.name);
  const pathParams = operation.parameters.filter((p) => p.in === "path");
  const queryParams = operation.parameters.filter((p) => p.in === "query");
  return fc.record({
    path: fc.tuple(...pathParams.map(valueFor)),
    query: fc.tuple(...queryParams.map((p) => p.required ? valueFor(p) : fc.option(valueFor(p)))),
    key: fc.uuid(),
    body: operation.body ? bodyOf(operation.body, known) : fc.constant(undefined),
  }).map(({ path, query, key, body }) => {
    let index = 0;
    const filled = operation.path.replace(/\{[^}]+\}/g, () => encodeSegment(String(path[index++])));
    const search = new URLSearchParams(
      queryParams.flatMap((p, i) => query[i] === null ? [] : [[p.name, String(query[i])]]),
    );
    return {
      operation,
      path: `${filled}${search.size ? `?${search}` : ""}`,
      headers: {
        ...goodAuth(operation, partner),
        "content-type": "application/json",
        "idempotency-key": `fuzz-${key}`,
      },
      body: operation.method === "GET" || body === undefined ? undefined : JSON.stringify(body),
      valid: bodyOf === validValueOf,
    };
  });
}

function goodAuth(operation: Operation, partner: TestPartner): Record<string, string> {
  return operation.api === "operator" ? { authorization: `Bearer ${OPERATOR_TOKEN}` } : partner.headers;
}

// ------------------------------------------------------------------ checks

/**
 * What a refusal may still change, by design, and the view of each table
 * that leaves exactly that out. Nothing else: another table changed, or one
 * of these in another column, is a problem.
 * - `attempt`: a refused key or signature on a hosted connect page counts
 *   as an attempt (spec: 5, then CONNECT_ATTEMPTS_EXHAUSTED; the answer
 *   carries `attemptsLeft`): the session's `attempts` and `failure_code`.
 * - `lastAttempt` (`attemptsLeft: 0`): the fifth also fails the session
 *   (status, completion time, its agent key and pending message cleared) and
 *   emits one `provider.connect_failed`.
 * - `fixableRefusal`: a refusal the client fixes elsewhere (exchange
 *   settings, a wallet never deposited at the venue, the wrong wallet before
 *   anything was signed) costs no attempt but tells the partner why
 *   (`failure_code`).
 * - `paymentRejected` (PAYMENT_REJECTED: the venue refused a signed send):
 *   why, on the payment (`failure_reason`, `updated_at`), for the partner to
 *   read while the page stays open for a new signature.
 */
export type Allowance = "attempt" | "lastAttempt" | "fixableRefusal" | "paymentRejected";
const BY_DESIGN: Record<Allowance, Record<string, { omit: string[]; where?: string }>> = {
  attempt: { connect_sessions: { omit: ["attempts", "failure_code"] } },
  fixableRefusal: { connect_sessions: { omit: ["failure_code"] } },
  lastAttempt: {
    connect_sessions: {
      omit: ["attempts", "failure_code", "status", "completed_at", "sealed_agent_key", "pending_action"],
    },
    events: { omit: [], where: "event_type <> 'provider.connect_failed'" },
  },
  paymentRejected: { payments: { omit: ["failure_reason", "updated_at"] } },
};

/** Connect-page refusals that spend no attempt (domain/connect, recordFixableRefusal). */
const FIXABLE_REFUSALS = new Set(["ACCOUNT_SETTINGS_INVALID", "WALLET_NOT_ON_VENUE", "WALLET_MISMATCH"]);

/** The allowance a refusal's answer claims: it must still match what changed. */
export function allowanceOf(text: string): Allowance | null {
  try {
    const body = JSON.parse(text);
    if (typeof body.attemptsLeft === "number") return body.attemptsLeft === 0 ? "lastAttempt" : "attempt";
    if (body.error?.code === "PAYMENT_REJECTED") return "paymentRejected";
    if (FIXABLE_REFUSALS.has(body.error?.code)) return "fixableRefusal";
  } catch {
    // not JSON: no allowance
  }
  return null;
}

/** Per table, a hash of its rows (and, with `views`, of each by-design view): what a refusal must leave as it was. */
export type Digest = Map<string, string>;

export async function digest(env: TestEnv, views = false): Promise<Digest> {
  const tables = (await env.deps.db.read.values<[string]>(
    sql`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`,
  )).map(([name]) => name).filter((name) => !DIGEST_EXCLUDED.has(name));
  const out: Digest = new Map();
  const hash = async (query: string) => sha256Hex(JSON.stringify(await env.deps.db.read.values(sql.raw(query))));
  for (const table of tables) out.set(table, await hash(`SELECT * FROM "${table}"`));
  if (!views) return out;
  for (const [allowance, tableViews] of Object.entries(BY_DESIGN)) {
    for (const [table, view] of Object.entries(tableViews)) {
      const columns = (await env.deps.db.read.values<[number, string]>(sql.raw(`PRAGMA table_info("${table}")`)))
        .map(([, name]) => name).filter((name) => !view.omit.includes(name));
      const where = view.where ? ` WHERE ${view.where}` : "";
      out.set(
        `${allowance}:${table}`,
        await hash(`SELECT ${columns.map((c) => `"${c}"`).join(", ")} FROM "${table}"${where}`),
      );
    }
  }
  return out;
}

/** The tables a refusal changed beyond what its allowance permits. */
export function changedBeyond(before: Digest, after: Digest, allowance: Allowance | null): string[] {
  return [...before.keys()].filter((table) => {
    if (table.includes(":") || before.get(table) === after.get(table)) return false;
    const key = `${allowance}:${table}`;
    return !(allowance && before.has(key) && before.get(key) === after.get(key));
  });
}

export interface Verdict {
  status: number;
  problem: string | null;
  text: string;
}

/** Send one request and judge its answer; `secrets` must never come back. */
export async function send(env: TestEnv, request: FuzzRequest, secrets: string[]): Promise<Verdict> {
  const response = await env.app.request(request.path, {
    method: request.operation.method,
    headers: request.headers,
    body: request.body,
  }, request.env);
  const text = await response.text();
  const status = response.status;
  const where = whereOf(request);
  const verdict = (problem: string | null) => ({ status, problem, text });
  if (status >= 500) return verdict(`${status} on ${where}: ${text.slice(0, 300)}`);
  const code = String(status);
  if (!request.operation.documented.has(code) && !CROSS_CUTTING.has(code)) {
    return verdict(`undocumented ${status} on ${where}: ${text.slice(0, 200)}`);
  }
  if (status >= 400) {
    let body: { error?: { code?: unknown; message?: unknown; requestId?: unknown } } = {};
    try {
      body = JSON.parse(text);
    } catch {
      return verdict(`${status} without JSON on ${where}`);
    }
    const error = body.error;
    if (typeof error?.code !== "string" || typeof error.message !== "string" || typeof error.requestId !== "string") {
      return verdict(`${status} without the error envelope on ${where}: ${text.slice(0, 200)}`);
    }
  }
  return verdict(echoIn(text, secrets, where));
}

/** A problem if the answer holds one of the secrets. */
export function echoIn(text: string, secrets: string[], where: string): string | null {
  return secrets.some((secret) => secret.length >= 16 && text.includes(secret)) ? `a secret echoed by ${where}` : null;
}

export function whereOf(request: FuzzRequest): string {
  return `${request.operation.method} ${request.path.slice(0, 120)}`;
}
