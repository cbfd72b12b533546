/**
 * The property-based test of issue 9: generated `externalUserId` values and
 * request bodies with unknown keys, deep nesting and extreme numbers, sent
 * over real HTTP to every operation the partner OpenAPI document lists (read
 * from the running service, so a new route is covered without touching this
 * file). Properties: no 5xx, every refusal in the error envelope, no client
 * secret in any answer, every accepted id read back byte for byte, and the id,
 * unknown-key and platform-field rules of the spec.
 *
 * One service for the whole file and a fresh partner for each route's
 * properties. Runs of a property share that partner's state (clients created,
 * suspended, restricted), so fast-check's seed and path replay the generated
 * values, not necessarily the outcome.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner, operator } from "../_helpers/http.ts";

/** Fixed, so a failure names a reproducible seed (fast-check prints it with the path). */
const SEED = 909_2026;
/** Runs per property: the whole file stays well under 20 s on two cores. */
const RUNS = { ids: 120, route: 60, unknownKeys: 60, platformFields: 60 };
/** Nesting the spec's body guard accepts; deeper bodies are refused with 400 (levels count containers). */
const MAX_LEVELS = 32;
const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const OPENAPI_METHODS = ["get", "put", "post", "patch", "delete"];

// ---------------------------------------------------------------------------
// A JSON model whose numbers keep their literal text (`-0`, `1e308` and 2^53+1
// reach the server as written) and whose objects may repeat or tag keys.

/** An object entry; `extra` marks an unknown key, so a body can be sent with and without them. */
type Entry = [key: string, value: Json, extra?: boolean];
type Json = null | boolean | string | { num: string } | Json[] | { obj: Entry[] };

function isObj(value: Json): value is { obj: Entry[] } {
  return value !== null && typeof value === "object" && "obj" in value;
}

function jsonText(value: Json, withExtras = true): string {
  if (value === null || typeof value === "boolean") return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => jsonText(item, withExtras)).join(",")}]`;
  if ("num" in value) return value.num;
  const entries = value.obj.filter(([, , extra]) => withExtras || !extra);
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${jsonText(item, withExtras)}`).join(",")}}`;
}

/** Containers on the deepest path, the body itself included (`{}` is 1, `{"a":[1]}` is 2). */
function levels(value: Json): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(levels));
  if (isObj(value)) return 1 + Math.max(0, ...value.obj.map(([, item]) => levels(item)));
  return 0;
}

function fromPlain(value: unknown): Json {
  if (value === null || typeof value === "boolean" || typeof value === "string") return value;
  if (typeof value === "number") return { num: Object.is(value, -0) ? "-0" : JSON.stringify(value) };
  if (Array.isArray(value)) return value.map(fromPlain);
  if (typeof value === "object") {
    return {
      obj: Object.entries(value as Record<string, unknown>).map((
        [key, item],
      ) => [isPlatformField(key) ? `x-${key}` : key, fromPlain(item)]),
    };
  }
  return null;
}

// ---------------------------------------------------------------------------
// The rules the test holds the service to.

/** Platform-controlled body fields (spec, Authentication item 9, and the fields the contract itself names). */
const PLATFORM_FIELDS = [
  "principalId",
  "partnerId",
  "grants",
  "allowedProviders",
  "riskEnvelope",
  "beneficiary",
  "performanceFeePercent",
  "carryPolicy",
  "performancePeriod",
  "subscriptionMonthlyUsd",
  "paymentRecipient",
  "obligationStatus",
];

/** Broad on purpose: an "unknown" key must not be one the service may lawfully refuse as platform-controlled. */
function isPlatformField(key: string): boolean {
  const lower = key.toLowerCase();
  return PLATFORM_FIELDS.some((field) => field.toLowerCase() === lower) ||
    ["builder", "performancefee", "subscription", "contract", "commercial"].some((prefix) => lower.startsWith(prefix));
}

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

/** Why the spec refuses an `externalUserId` (400 VALIDATION_ERROR), or null when it must be accepted. */
function idRefusal(id: string): string | null {
  const codePoints = [...id];
  if (codePoints.length === 0) return "empty";
  if (codePoints.length > 120) return "longer than 120 code points";
  if (!id.isWellFormed()) return "unpaired surrogate";
  if (codePoints.some((c) => c.codePointAt(0)! <= 0x1f)) return "C0 control character";
  if (codePoints.some((c) => c.codePointAt(0)! >= 0x7f && c.codePointAt(0)! <= 0x9f)) return "DEL or C1 control";
  if (id === "." || id === "..") return "dot segment";
  if (EMAIL.test(id)) return "e-mail address";
  return null;
}

// ---------------------------------------------------------------------------
// Generators.

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
const controlChar = fc.oneof(fc.integer({ min: 0, max: 0x1f }), fc.integer({ min: 0x7f, max: 0x9f }))
  .map((code) => String.fromCharCode(code));
const specialPiece = fc.constantFrom(
  " ",
  "/",
  "?",
  "#",
  "%",
  "\\",
  ".",
  "..",
  "&",
  "=",
  "+",
  ";",
  ":",
  "@",
  "'",
  '"',
  "<",
  "`",
  "%2F",
  "%25",
  "%ED%A0%80",
  "%zz",
  "😀",
  "👩‍👩‍👧",
  "🇧🇷",
  "日本",
  "é",
  "e\u0301",
  "\u00a0",
  "\u200b",
  "\ufeff",
  "\u2028",
  "\uffff",
  "\u{10ffff}",
  "\u{1d11e}",
);
/** One printable piece: ASCII, any grapheme, any code point above the controls, or a troublesome one. */
const printablePiece = fc.oneof(
  { weight: 5, arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }) },
  {
    weight: 2,
    arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }).filter((c) => idRefusal(c) === null),
  },
  { weight: 3, arbitrary: specialPiece },
);
const anyPiece = fc.oneof(
  { weight: 6, arbitrary: printablePiece },
  { weight: 1, arbitrary: controlChar },
  { weight: 1, arbitrary: loneSurrogate },
);

/** Printable ids only: the ones a valid-looking body carries. */
const printableIdArb = fc.array(printablePiece, { minLength: 1, maxLength: 30 }).map((pieces) => pieces.join(""));

/** `externalUserId` candidates from the whole of Unicode, lengths 0 to 130 code points and beyond. */
const externalUserIdArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.array(printablePiece, { maxLength: 40 }).map((pieces) => pieces.join("")) },
  { weight: 3, arbitrary: fc.array(anyPiece, { maxLength: 40 }).map((pieces) => pieces.join("")) },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.integer({ min: 110, max: 130 }), fc.constantFrom("a", "😀", "日", " ", "%", "é"))
      .map(([count, piece]) => piece.repeat(count)),
  },
  {
    weight: 1,
    arbitrary: fc.array(fc.constantFrom("a", "😀", "/", "日"), { minLength: 115, maxLength: 125 })
      .map((pieces) => pieces.join("")),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(printableIdArb, fc.oneof(controlChar, loneSurrogate), fc.nat())
      .map(([id, bad, at]) => id.slice(0, at % (id.length + 1)) + bad + id.slice(at % (id.length + 1))),
  },
  { weight: 1, arbitrary: fc.constantFrom("", ".", "..", "...", " ", "a@b.co", "user@example.com", "@", "a@b") },
  { weight: 1, arbitrary: fc.emailAddress() },
);

const EXTREME_NUMBERS = [
  "1e308",
  "-1e308",
  "-0",
  "5e-324",
  "1e-13",
  "49.9999999999999",
  "100.0000000000001",
  "9007199254740993",
  "-9007199254740993",
  "1e999",
  "-1e999",
  "123456789012345678901234567890",
  "1.1234567",
  "1e-7",
  "0.000001",
  "1E+2",
];
const numberTextArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...EXTREME_NUMBERS) },
  { weight: 2, arbitrary: fc.integer({ min: -5, max: 1000 }).map(String) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)) },
).map((num): Json => ({ num }));

const longString = fc.constantFrom(501, 10_000, 70_000).map((length) => "x".repeat(length));

/** Key names that are not platform fields and that a JSON body may carry without breaking the storage rules. */
const SPECIAL_KEYS = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "requestId",
  "error",
  "id",
  "EXTERNALUSERID",
  "externalUserID",
  "Reason",
  "",
  " ",
  "$ref",
  "0",
  "clientSecret",
  "\u0001",
  "😀",
];

function unknownKeyArb(documented: ReadonlySet<string>): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...SPECIAL_KEYS),
    fc.string({ unit: "grapheme", maxLength: 16 }),
    fc.string({ unit: "binary", maxLength: 8 }),
  ).filter((key) => !documented.has(key) && !isPlatformField(key) && !key.includes("\0"));
}

/** Storable values for unknown keys: clean scalars, small JSON trees, chains up to 28 levels. */
const unknownValueArb: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(null, true, false, "", "x"),
  numberTextArb,
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.jsonValue({ maxDepth: 3 }).map(fromPlain),
  fc.tuple(fc.integer({ min: 1, max: 28 }), fc.boolean()).map(([count, arrays]) => {
    let value: Json = { num: "1e308" };
    for (let i = 0; i < count; i++) value = arrays && i % 2 ? [value] : { obj: [["k", value]] };
    return value;
  }),
);

/** A subset of OpenAPI 3.0 schema objects, as zod-openapi writes them. */
interface Schema {
  $ref?: string;
  type?: string;
  enum?: unknown[];
  nullable?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
}

interface Operation {
  method: string;
  template: string;
  pathParams: string[];
  query: Parameter[];
  body: Schema | null;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, Schema>; parameters?: Record<string, Parameter> };
}

/** What a generated value is built from: the OpenAPI document and the values known to exist. */
interface World {
  doc: OpenApiDocument;
  /** Strings known to name something: the partner id, providers, strategies, existing clients. */
  known: string[];
}

function resolve<T>(doc: OpenApiDocument, value: T | { $ref: string }): T {
  let current: unknown = value;
  for (let hops = 0; hops < 10 && current && typeof current === "object" && "$ref" in current; hops++) {
    const ref = (current as { $ref: string }).$ref;
    const [, , kind, name] = ref.split("/");
    current = (doc.components as Record<string, Record<string, unknown>> | undefined)?.[kind]?.[name];
    assert.ok(current, `the OpenAPI document resolves ${ref}`);
  }
  return current as T;
}

/** Merge `allOf` parts into one object schema (zod-openapi writes `.extend()` that way). */
function flatten(world: World, schema: Schema): Schema {
  const resolved = resolve<Schema>(world.doc, schema);
  if (!resolved.allOf) return resolved;
  const parts = resolved.allOf.map((part) => flatten(world, part));
  return {
    ...resolved,
    type: "object",
    properties: Object.assign({}, ...parts.map((part) => part.properties ?? {})),
    required: parts.flatMap((part) => part.required ?? []),
  };
}

type Mode = "wild" | "clean";

function stringArb(world: World, schema: Schema, mode: Mode, name: string): fc.Arbitrary<Json> {
  if (name === "externalUserId") return mode === "wild" ? externalUserIdArb : printableIdArb;
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? 64;
  const options: fc.Arbitrary<Json>[] = [
    fc.constantFrom(...world.known),
    fc.string({ unit: "grapheme", minLength: min, maxLength: Math.min(max, 40) }),
    fc.constantFrom(Math.max(0, min - 1), min, max, max + 1).map((length) => "r".repeat(length)),
  ];
  if (mode === "wild") {
    options.push(
      fc.array(anyPiece, { maxLength: 20 }).map((pieces) => pieces.join("")),
      longString,
      fc.constantFrom("fraude\u0000oculta", "\ud800", "a\udc00b", "\u0085"),
    );
  }
  return fc.oneof(...options);
}

function numberArb(schema: Schema, integer: boolean): fc.Arbitrary<Json> {
  const min = Math.max(schema.minimum ?? -10, -1e6);
  const max = Math.min(schema.maximum ?? 1000, 1e6);
  return fc.oneof(
    numberTextArb,
    fc.integer({ min: Math.ceil(min), max: Math.floor(max) }).map((n): Json => ({ num: String(n) })),
    integer ? fc.constant<Json>({ num: "1.5" }) : fc.double({ min, max, noNaN: true }).map((n) => fromPlain(n)),
  );
}

/**
 * A value shaped by `schema`. Clean values are storable text, valid or
 * slightly off; wild ones also take the wrong type, control characters, lone
 * surrogates and very long strings. With `extras`, the body and every nested
 * object not documented as closed also carry tagged unknown keys.
 */
function valueArb(
  world: World,
  raw: Schema,
  mode: Mode,
  extras: boolean,
  name = "",
  nested = false,
): fc.Arbitrary<Json> {
  const schema = flatten(world, raw);
  const alternatives = schema.anyOf ?? schema.oneOf;
  let main: fc.Arbitrary<Json>;
  if (alternatives) {
    main = fc.oneof(...alternatives.map((alternative) => valueArb(world, alternative, mode, extras, name, nested)));
  } else if (schema.enum) {
    main = fc.oneof(fc.constantFrom(...(schema.enum as Json[])), stringArb(world, {}, mode, name));
  } else if (schema.type === "string") {
    main = stringArb(world, schema, mode, name);
  } else if (schema.type === "number" || schema.type === "integer") {
    main = numberArb(schema, schema.type === "integer");
  } else if (schema.type === "boolean") {
    main = fc.boolean();
  } else if (schema.type === "array") {
    const item = valueArb(world, schema.items ?? {}, mode, extras, name, true);
    const arrays = [fc.array(item, { maxLength: 6 })];
    if (schema.maxItems !== undefined && schema.maxItems <= 200) {
      arrays.push(fc.array(item, { minLength: schema.maxItems + 1, maxLength: schema.maxItems + 1 }));
    }
    main = fc.oneof(
      { weight: 5, arbitrary: arrays[0] },
      ...arrays.slice(1).map((arbitrary) => ({ weight: 1, arbitrary })),
    );
  } else if (schema.type === "object" || schema.properties) {
    main = objectArb(world, schema, mode, extras, nested);
  } else {
    main = fc.oneof(
      fc.constantFrom<Json>(null, true, "x"),
      numberTextArb,
      fc.jsonValue({ maxDepth: 2 }).map(fromPlain),
    );
  }
  const variants: fc.WeightedArbitrary<Json>[] = [{ weight: 8, arbitrary: main }];
  if (schema.nullable) variants.push({ weight: 1, arbitrary: fc.constant(null) });
  if (mode === "wild") {
    variants.push({
      weight: 1,
      arbitrary: fc.oneof(fc.constantFrom<Json>(null, true, "10", [], { obj: [] }), numberTextArb),
    });
  }
  return fc.oneof(...variants);
}

function objectArb(world: World, schema: Schema, mode: Mode, extras: boolean, nested: boolean): fc.Arbitrary<Json> {
  const properties = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const fields = properties.map(([name, property]) => {
    const value = valueArb(world, property, mode, extras, name, true);
    const keep = required.has(name) && mode === "clean" ? fc.constant(true) : fc.boolean();
    return fc.tuple(keep, value).map(([present, item]) => (present ? [[name, item] as Entry] : []));
  });
  // The spec ignores unknown fields of every body; only a nested object documented as closed (the
  // restrictions envelope: "no other keys") may refuse them. A closed top level is itself a finding.
  const withExtras = extras && (!nested || schema.additionalProperties !== false);
  const unknown = withExtras
    ? fc.array(fc.tuple(unknownKeyArb(new Set(properties.map(([name]) => name))), unknownValueArb), {
      minLength: 1,
      maxLength: 4,
    })
    : fc.constant([]);
  return fc.tuple(fc.tuple(...fields), unknown).map(([known, more]): Json => ({
    obj: [...known.flat(), ...more.map(([key, value]): Entry => [key, value, true])],
  }));
}

/** A clean body of the schema with unknown keys, as sent with them and without them. */
function unknownKeysBodyArb(world: World, schema: Schema) {
  return valueArb(world, schema, "clean", true).map((value) => ({
    withUnknownKeys: jsonText(value),
    withoutThem: jsonText(value, false),
    levels: levels(value),
  }));
}

/**
 * A chain of `count` containers below a top-level key of `body`, with a
 * platform-controlled `field` in the object at level `at` (1 is the body
 * itself, so the field can sit at any depth, inside arrays too).
 */
function withChain(body: Json, carrier: string, count: number, arrays: boolean[], at: number, field: string): Json {
  const top: Entry[] = isObj(body) ? [...body.obj] : [["wrapped", body]];
  let inner: Json = "fim";
  for (let i = count - 1; i >= 0; i--) {
    const level = i + 2;
    if (arrays[i] && level !== at) {
      inner = [inner];
    } else {
      const entries: Entry[] = [["nivel", inner]];
      if (level === at) entries.unshift([field, "p"]);
      inner = { obj: entries };
    }
  }
  if (count > 0) top.push([carrier, inner]);
  if (at === 1) top.unshift([field, "p"]);
  return { obj: top };
}

const platformFieldArb = fc.oneof(
  fc.constantFrom(...PLATFORM_FIELDS),
  fc.string({ unit: "grapheme-ascii", maxLength: 12 }).map((suffix) => `builder${suffix}`),
);

interface DeepBody {
  text: string;
  levels: number;
  field: string;
  fieldLevel: number;
}

function deepBodyArb(world: World, schema: Schema): fc.Arbitrary<DeepBody> {
  return fc.record({
    base: valueArb(world, schema, "clean", false),
    count: fc.integer({ min: 0, max: 99 }),
    arrays: fc.array(fc.boolean(), { minLength: 100, maxLength: 100 }),
    at: fc.nat(),
    field: platformFieldArb,
  }).map(({ base, count, arrays, at, field }) => {
    const fieldLevel = 1 + (at % (count + 1));
    const body = withChain(base, "extra", count, arrays, fieldLevel, field);
    return { text: jsonText(body), levels: levels(body), field, fieldLevel };
  });
}

/** Raw texts a JSON body may be: odd but legal grammar, and deeper than any generator goes. */
const oddBodyArb = fc.constantFrom(
  "",
  "null",
  "[]",
  "{}",
  "0",
  '"x"',
  "1e999",
  '"\\ud800"',
  '{"a":1,"a":2}',
  '{"__proto__":{"x":1}}',
  "{",
  "[".repeat(5000) + "]".repeat(5000),
  '{"k":'.repeat(3000) + "1" + "}".repeat(3000),
);

/** A path segment or query value: `encodeURIComponent`, or the WTF-8 bytes of a lone surrogate (`%ED%A0%80`). */
function encodePiece(value: string): string {
  if (value.isWellFormed()) return encodeURIComponent(value);
  let out = "";
  for (const char of value) {
    const code = char.charCodeAt(0);
    if (char.length === 1 && code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase()}`).join("");
    } else {
      out += encodeURIComponent(char);
    }
  }
  return out;
}

function fillPath(template: string, values: Record<string, string>): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => encodePiece(values[name]));
}

function pathValueArb(world: World, name: string, pool: string[]): fc.Arbitrary<string> {
  if (name === "id") {
    return fc.oneof({ weight: 3, arbitrary: externalUserIdArb }, { weight: 2, arbitrary: fc.constantFrom(...pool) });
  }
  return fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(...world.known) },
    { weight: 2, arbitrary: fc.array(anyPiece, { maxLength: 70 }).map((pieces) => pieces.join("")) },
  );
}

function queryValueArb(world: World, parameter: Parameter): fc.Arbitrary<string> {
  const schema = parameter.schema ? flatten(world, parameter.schema) : {};
  const options: fc.Arbitrary<string>[] = [
    fc.constantFrom(...world.known),
    fc.array(anyPiece, { maxLength: 20 }).map((pieces) => pieces.join("")),
    fc.constantFrom(
      "",
      "0",
      "-1",
      "1",
      "1.5",
      "1e3",
      "500",
      "501",
      "1441",
      "9007199254740993",
      "abc",
      "x".repeat(5000),
    ),
  ];
  if (schema.enum) options.push(fc.constantFrom(...schema.enum.map(String)));
  if (schema.type === "integer" || schema.type === "number") {
    options.push(
      fc.integer({ min: schema.minimum ?? 0, max: schema.maximum ?? 1000 }).map(String),
      fc.constantFrom(...EXTREME_NUMBERS),
    );
  }
  return fc.oneof(...options);
}

/** One request: what fast-check prints as the counterexample. */
interface Plan {
  method: string;
  path: string;
  body?: string;
}

function routePlanArb(world: World, operation: Operation, pool: string[]): fc.Arbitrary<Plan> {
  const pathValues = fc.record(
    Object.fromEntries(operation.pathParams.map((name) => [name, pathValueArb(world, name, pool)])),
  );
  const query = fc.tuple(
    ...operation.query.map((parameter) =>
      fc.option(queryValueArb(world, parameter), { freq: parameter.required ? 10 : 2, nil: undefined })
        .map((value) => (value === undefined ? null : `${parameter.name}=${encodePiece(value)}`))
    ),
    fc.option(fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })), { nil: undefined })
      .map((pair) => (pair ? `${encodePiece(pair[0])}=${encodePiece(pair[1])}` : null)),
  ).map((parts) => parts.filter((part) => part !== null).join("&"));
  const body: fc.Arbitrary<string | undefined> = operation.body
    ? fc.oneof(
      { weight: 4, arbitrary: valueArb(world, operation.body, "wild", true).map((value) => jsonText(value)) },
      { weight: 1, arbitrary: valueArb(world, operation.body, "clean", false).map((value) => jsonText(value)) },
      { weight: 2, arbitrary: deepBodyArb(world, operation.body).map((deep) => deep.text) },
      { weight: 1, arbitrary: oddBodyArb },
    )
    : fc.constant(undefined);
  return fc.tuple(pathValues, query, body).map(([values, search, text]) => ({
    method: operation.method,
    path: fillPath(operation.template, values) + (search ? `?${search}` : ""),
    ...(text === undefined ? {} : { body: text }),
  }));
}

/** Path values known to exist, so a request reaches the body rules instead of a 404. */
function knownPath(world: World, operation: Operation, pool: string[]): string {
  const values: Record<string, string> = {};
  for (const name of operation.pathParams) values[name] = name === "id" ? pool[0] : world.known[0];
  return fillPath(operation.template, values);
}

// ---------------------------------------------------------------------------
// The OpenAPI document as a list of operations.

function operationsOf(doc: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [template, rawItem] of Object.entries(doc.paths)) {
    // The partner document lists /v1 only; operator (/operator/v1) and simulator (/sim) routes never belong here.
    if (!template.startsWith("/v1/")) continue;
    const item = rawItem as Record<string, unknown> & { parameters?: Parameter[] };
    for (const method of OPENAPI_METHODS) {
      const operation = item[method] as
        | { parameters?: Parameter[]; requestBody?: { content?: Record<string, { schema?: Schema }> } }
        | undefined;
      if (!operation) continue;
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])]
        .map((parameter) => resolve<Parameter>(doc, parameter));
      const requestBody = operation.requestBody && resolve(doc, operation.requestBody);
      operations.push({
        method: method.toUpperCase(),
        template,
        pathParams: [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]),
        query: parameters.filter((parameter) => parameter.in === "query"),
        body: requestBody?.content?.["application/json"]?.schema ?? null,
      });
    }
  }
  return operations;
}

// ---------------------------------------------------------------------------

interface Answer {
  status: number;
  contentType: string;
  requestId: string | null;
  text: string;
  json: unknown;
}

/** One partner and what the properties learned about it. */
interface Session {
  world: World;
  /** Clients created up front, so path values that exist reach deeper than a 404. */
  pool: string[];
  /** Every id a POST /v1/users answered 201 for. */
  accepted: Set<string>;
  /** Send over HTTP as this partner and hold the answer to the properties every response must have. */
  send(plan: Plan): Promise<Answer>;
}

const POOL_IDS = ["pool-1", "ana maria", "a/b?c#d%e\\f", "😀 emoji", "日本語"];
/** The origin `partnerBody()` registers, so a generated returnUrl can be accepted. */
const RETURN_URL = "https://app.partner.example/volta";

Deno.test("partner API properties over every operation of its OpenAPI document (issue 9)", async (t) => {
  const env = await startTestEnv();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => env.app.fetch(request));
  const baseUrl = `http://127.0.0.1:${server.addr.port}`;
  const client = Deno.createHttpClient({});
  /** Every partner's client secret: no answer, to any partner, may hold one. */
  const clientSecrets: string[] = [];
  const sessions: Session[] = [];
  try {
    const published = await operator(env, "PUT", "/operator/v1/strategies/trend-follow", {
      version: "1.0.0",
      status: "PUBLISHED",
      displayName: "Trend",
      summary: "t",
      supportedProviders: ["VENUE_A", "VENUE_B"],
      supportedMarkets: ["BTCUSDT"],
      configurableParameters: [],
      riskRequirements: {},
    });
    assert.equal(published.status, 200, await published.text());

    const docResponse = await fetch(`${baseUrl}/v1/openapi.json`, { client });
    assert.equal(docResponse.status, 200);
    const doc = await docResponse.json() as OpenApiDocument;
    const operations = operationsOf(doc);
    assert.ok(operations.length > 0, "the partner OpenAPI document lists operations");
    assert.ok(
      operations.some((operation) => operation.method === "POST" && operation.template === "/v1/users"),
      "POST /v1/users is in the document",
    );

    /**
     * A fresh partner for each group of properties: one route's writes
     * (restrictions, suspensions) then never decide another route's answers.
     */
    const openSession = async (): Promise<Session> => {
      // Limits far above what the runs send: the clock is frozen, so every call lands in the same minute.
      const partner = await createPartner(env, {
        limits: { requestsPerMinute: 1_000_000, ordersPerMinute: 1_000_000 },
      });
      clientSecrets.push(partner.clientSecret);
      const accepted = new Set<string>();

      const send = async (plan: Plan): Promise<Answer> => {
        const headers: Record<string, string> = { ...partner.headers };
        if (WRITE_METHODS.has(plan.method)) headers["idempotency-key"] = `prop-${crypto.randomUUID()}`;
        if (plan.body !== undefined) headers["content-type"] = "application/json";
        env.watchedSecrets.addFromHeaders(headers);
        const response = await fetch(`${baseUrl}${plan.path}`, {
          method: plan.method,
          headers,
          body: plan.body,
          client,
        });
        const text = await response.text();
        const contentType = response.headers.get("content-type") ?? "";
        const where = `${plan.method} ${plan.path} answered ${response.status}: ${text.slice(0, 300)}`;
        let json: unknown = undefined;
        if (/application\/json/i.test(contentType)) {
          try {
            json = JSON.parse(text);
          } catch {
            assert.fail(`${where} (a JSON content type, no JSON)`);
          }
          env.watchedSecrets.addFromJson(json);
        }
        const answer = {
          status: response.status,
          contentType,
          requestId: response.headers.get("x-request-id"),
          text,
          json,
        };
        assert.ok(answer.status < 500, where);
        assert.ok(answer.requestId, `${where} (no X-Request-Id)`);
        for (const secret of clientSecrets) {
          assert.ok(!text.includes(secret), `${plan.method} ${plan.path}: the answer holds a client secret`);
        }
        if (answer.status < 200 || answer.status > 299) assertEnvelope(answer, where);
        if (plan.method === "POST" && plan.path.split("?")[0] === "/v1/users" && answer.status === 201) {
          checkCreated(plan, answer, where, accepted);
        }
        return answer;
      };

      const pool: string[] = [];
      for (const id of POOL_IDS) {
        const answer = await send({ method: "POST", path: "/v1/users", body: JSON.stringify({ externalUserId: id }) });
        if (answer.status === 201) pool.push(id);
      }
      assert.equal(pool[0], "pool-1", "a plain id can be created");
      const known = [partner.partnerId, "VENUE_A", "VENUE_B", "trend-follow", "mean-revert", "BTCUSDT", RETURN_URL];
      const session = { world: { doc, known: [...known, ...pool] }, pool, accepted, send };
      sessions.push(session);
      return session;
    };
    const params = (numRuns: number) => ({ seed: SEED, numRuns });

    const ids = await openSession();
    await t.step(
      "POST /v1/users: generated externalUserId values follow the id rules and read back byte for byte",
      async () => {
        await fc.assert(
          fc.asyncProperty(externalUserIdArb, async (id) => {
            const refusal = idRefusal(id);
            const answer = await ids.send({
              method: "POST",
              path: "/v1/users",
              body: JSON.stringify({ externalUserId: id }),
            });
            const segment = encodePiece(id);
            if (refusal) {
              const code = (answer.json as { error?: { code?: string } } | undefined)?.error?.code;
              assert.deepEqual([answer.status, code], [400, "VALIDATION_ERROR"], `${refusal}: ${answer.text}`);
              // Refused means never stored: the id names nothing (unless URL resolution turns it into another route).
              if (segment !== "" && segment !== "." && segment !== "..") {
                const read = await ids.send({ method: "GET", path: `/v1/users/${segment}` });
                assert.equal(read.status, 404, `GET /v1/users/${segment} of a refused id answered ${read.status}`);
              }
              return;
            }
            assert.equal(answer.status, 201, answer.text);
            for (const read of ["", "/status", "/commercial", "/strategies"]) {
              const got = await ids.send({ method: "GET", path: `/v1/users/${segment}${read}` });
              assert.equal(got.status, 200, `GET /v1/users/${segment}${read} answered ${got.status}: ${got.text}`);
              const body = got.json as { externalUserId?: unknown };
              if (read === "" || read === "/status" || "externalUserId" in body) {
                assert.ok(
                  body.externalUserId === id,
                  `GET /v1/users/${segment}${read} read back ${JSON.stringify(body.externalUserId)}`,
                );
              }
            }
            const listed = await listAll(ids, 500);
            const found = listed.filter((listedId) => listedId === id).length;
            assert.equal(found, 1, `GET /v1/users lists it ${found} times`);
          }),
          params(RUNS.ids),
        );
      },
    );

    for (const operation of operations) {
      const name = `${operation.method} ${operation.template}`;
      const session = await openSession();
      const { world, pool } = session;
      await t.step(`${name}: no 5xx, every refusal in the error envelope, no secret in any answer`, async () => {
        await fc.assert(
          fc.asyncProperty(routePlanArb(world, operation, pool), async (plan) => {
            await session.send(plan);
          }),
          params(RUNS.route),
        );
      });
      if (!operation.body) continue;
      const body = operation.body;
      const path = knownPath(world, operation, pool);

      await t.step(`${name}: unknown keys are ignored (a 400 with them is a 400 without them)`, async () => {
        await fc.assert(
          fc.asyncProperty(unknownKeysBodyArb(world, body), async (pair) => {
            const plan = { method: operation.method, path, body: pair.withUnknownKeys };
            const withExtras = await session.send(plan);
            if (pair.levels > MAX_LEVELS) {
              assert.equal(withExtras.status, 400, `${pair.levels} levels answered ${withExtras.status}`);
              return;
            }
            if (withExtras.status !== 400) return;
            const without = await session.send({ ...plan, body: pair.withoutThem });
            assert.equal(without.status, 400, `400 with unknown keys (${withExtras.text}), ${without.status} without`);
          }),
          params(RUNS.unknownKeys),
        );
      });

      await t.step(
        `${name}: a platform-controlled field at any depth is 403, a body deeper than 32 levels 400`,
        async () => {
          await fc.assert(
            fc.asyncProperty(deepBodyArb(world, body), async (deep) => {
              const answer = await session.send({ method: operation.method, path, body: deep.text });
              const code = (answer.json as { error?: { code?: string } } | undefined)?.error?.code;
              const expected = deep.levels > MAX_LEVELS ? [400, "VALIDATION_ERROR"] : [403, "SCOPE_FIELD_REJECTED"];
              assert.deepEqual(
                [answer.status, code],
                expected,
                `"${deep.field}" at level ${deep.fieldLevel} of ${deep.levels}: ${answer.text}`,
              );
            }),
            params(RUNS.platformFields),
          );
        },
      );
    }

    await t.step("GET /v1/users pages, followed by cursor, list each partner's accepted ids exactly once", async () => {
      for (const session of sessions) {
        assert.deepEqual((await listAll(session, 7)).sort(), [...session.accepted].sort());
      }
    });
  } finally {
    client.close();
    await server.shutdown();
    await env.close();
  }
});

/** Every externalUserId of GET /v1/users, page after page by `nextCursor`. */
async function listAll(session: Session, limit: number): Promise<string[]> {
  const listed: string[] = [];
  let cursor: string | null = null;
  do {
    const query = `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const page = await session.send({ method: "GET", path: `/v1/users?${query}` });
    assert.equal(page.status, 200, page.text);
    const body = page.json as { users: { externalUserId: string }[]; nextCursor?: string | null };
    listed.push(...body.users.map((user) => user.externalUserId));
    cursor = body.nextCursor ?? null;
    assert.ok(listed.length <= session.accepted.size + limit, "the pages end");
  } while (cursor);
  return listed;
}

/** A 201 from POST /v1/users names exactly the id that was sent, and only one the rules accept. */
function checkCreated(plan: Plan, answer: Answer, where: string, accepted: Set<string>): void {
  const created = answer.json as { externalUserId?: unknown; created?: unknown };
  assert.equal(typeof created.externalUserId, "string", where);
  const id = created.externalUserId as string;
  let sent: unknown = undefined;
  try {
    sent = (JSON.parse(plan.body ?? "") as { externalUserId?: unknown }).externalUserId;
  } catch {
    // Not JSON: nothing was sent to compare with, and the check below fails.
  }
  assert.ok(id === sent, `${where}: answered id ${JSON.stringify(id)} !== sent ${JSON.stringify(sent)}`);
  assert.equal(idRefusal(id), null, `${where}: accepted an id the rules refuse (${idRefusal(id)})`);
  assert.equal(created.created, !accepted.has(id), `${where}: created is true exactly for a new id`);
  accepted.add(id);
}

function assertEnvelope(answer: Answer, where: string): void {
  assert.match(answer.contentType, /^application\/json/i, where);
  const body = answer.json as Record<string, unknown>;
  assert.deepEqual(Object.keys(body), ["error"], where);
  const error = body.error as Record<string, unknown>;
  assert.deepEqual(Object.keys(error).sort(), ["code", "message", "requestId"], where);
  assert.equal(typeof error.code, "string", where);
  assert.equal(typeof error.message, "string", where);
  assert.equal(error.requestId, answer.requestId, `${where} (requestId differs from X-Request-Id)`);
}
