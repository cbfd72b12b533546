/**
 * Values an OpenAPI schema accepts (enums, bounds, lengths, patterns,
 * required fields), so requests get past validation into the domain; and the
 * same with one field pushed just over an edge: a bound or length off by
 * one, a required field gone, null, a lower-case enum, a platform-controlled
 * field slipped in at that depth. Names the world knows (`known`: users,
 * providers, symbols...) are used where a field or parameter has one.
 */
import fc from "fast-check";
import { START } from "../_helpers/env.ts";

// deno-lint-ignore no-explicit-any
type Schema = any;
export type Known = Record<string, string[]>;

/** Keys the platform controls: refused at any depth of a partner body. */
export const FORBIDDEN_KEYS = [
  "performanceFeePercent",
  "builderFeeTenthsBps",
  "subscriptionMonthlyUsd",
  "obligationStatus",
  "partnerId",
];
const ALPHANUMERIC = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_");

/** A value `schema` accepts; `name` is the field's or parameter's name. */
export function validValueOf(schema: Schema, known: Known, name = "", depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 8) return fc.constant(null);
  const alternatives = (schema.anyOf ?? schema.oneOf)?.filter((s: Schema) => s.type !== "null");
  if (alternatives?.length) {
    return fc.oneof(...alternatives.map((s: Schema) => validValueOf(s, known, name, depth + 1)));
  }
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const value = plainValueOf(schema, known, name, depth);
  return schema.nullable
    ? fc.oneof({ weight: 9, arbitrary: value }, { weight: 1, arbitrary: fc.constant(null) })
    : value;
}

function plainValueOf(schema: Schema, known: Known, name: string, depth: number): fc.Arbitrary<unknown> {
  switch (schema.type) {
    case "object":
      return objectOf(schema, known, depth);
    case "array": {
      const items = validValueOf(schema.items, known, name, depth + 1);
      // Items are distinct (grants and lists of codes must be): no more than an enum has.
      const distinct = schema.items?.enum?.length ?? Infinity;
      const minLength = Math.min(schema.minItems ?? 0, distinct);
      const maxLength = Math.min(schema.maxItems ?? 4, minLength + 4, distinct);
      return fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) });
    }
    case "string":
      return stringOf(schema, known[name]);
    case "integer":
    case "number":
      return numberOf(schema);
    case "boolean":
      return fc.boolean();
    default:
      return fc.constant(known[name]?.[0] ?? "x");
  }
}

function objectOf(schema: Schema, known: Known, depth: number): fc.Arbitrary<unknown> {
  const properties: Record<string, Schema> = schema.properties ?? {};
  const required: string[] = schema.required ?? [];
  const arbitraries = Object.fromEntries(
    Object.entries(properties).map(([key, s]) => [key, validValueOf(s, known, key, depth + 1)]),
  );
  return fc.record(arbitraries, { requiredKeys: required.filter((key) => key in properties) });
}

function stringOf(schema: Schema, names: string[] | undefined): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = schema.maxLength ?? Infinity;
  const fits = (s: string) => s.length >= minLength && s.length <= maxLength;
  const options: fc.Arbitrary<string>[] = [];
  if (names?.length) options.push(fc.constantFrom(...names));
  if (schema.format === "uri") options.push(fc.constant("https://app.partner.example/volta"));
  else if (schema.format === "date-time") {
    options.push(fc.integer({ min: -86_400_000, max: 86_400_000 }).map((ms) => new Date(START + ms).toISOString()));
  } else if (schema.pattern) options.push(fc.stringMatching(new RegExp(schema.pattern)).filter(fits));
  else {
    const shortest = Math.max(minLength, 1);
    const length = { minLength: shortest, maxLength: Math.min(maxLength, shortest + 16) };
    options.push(fc.string({ unit: ALPHANUMERIC, ...length }));
  }
  // A known name first: it names something that exists; the schema's own kind of value second.
  return options.length > 1 ? fc.oneof({ weight: 3, arbitrary: options[0] }, ...options.slice(1)) : options[0];
}

function numberOf(schema: Schema): fc.Arbitrary<number> {
  const exclusive = schema.exclusiveMinimum === true;
  const min = schema.minimum ?? 0;
  const max = schema.maximum ?? Math.max(min, 0) + 1_000;
  if (schema.type === "integer") {
    return fc.integer({ min: exclusive ? min + 1 : min, max }).filter((n) => !exclusive || n > min);
  }
  // Money travels with at most 6 decimals; cents are the common case.
  return fc.integer({ min: Math.ceil(min * 100), max: Math.floor(max * 100) })
    .map((cents) => cents / 100)
    .filter((n) => n >= min && n <= max && (!exclusive || n > min));
}

// ------------------------------------------------------------------ one field over the edge

/** A valid value with exactly one field changed to a value on or just past an edge of its schema. */
export function mutatedValueOf(schema: Schema, known: Known): fc.Arbitrary<unknown> {
  return fc.tuple(validValueOf(schema, known), fc.nat(), fc.nat()).map(([value, at, how]) => {
    const spots = spotsOf(value, schema, []);
    if (!spots.length) return value;
    const spot = spots[at % spots.length];
    const copy = structuredClone(value);
    const edges = edgesOf(spot.schema, spot.path.length ? spot.path.at(-1)! : "");
    return setAt(copy, spot.path, edges[how % edges.length], spot.parentRequired);
  });
}

interface Spot {
  path: string[];
  schema: Schema;
  /** Whether the field is required in its parent (so that removing it is a mutation). */
  parentRequired: boolean;
}

function spotsOf(value: unknown, schema: Schema, path: string[], required = true): Spot[] {
  const s = (schema?.anyOf ?? schema?.oneOf)?.find((a: Schema) => a.type !== "null") ?? schema;
  const spots: Spot[] = [{ path, schema: s, parentRequired: required }];
  if (s?.type === "object" && value && typeof value === "object" && !Array.isArray(value)) {
    for (const [key, item] of Object.entries(value)) {
      spots.push(...spotsOf(item, s.properties?.[key], [...path, key], (s.required ?? []).includes(key)));
    }
  }
  return spots;
}

const REMOVE = Symbol("remove");
const FORBIDDEN = Symbol("forbidden");

/** The values at and just past the edges a schema sets, plus the generic ones. */
function edgesOf(schema: Schema, name: string): unknown[] {
  const edges: unknown[] = [null, REMOVE];
  if (!schema) return edges;
  if (schema.enum) {
    const first = String(schema.enum[0]);
    edges.push(first.toLowerCase(), `${first} `, `${first}X`, "");
  }
  if (schema.type === "integer" || schema.type === "number") {
    const min = schema.minimum ?? 0;
    const max = schema.maximum;
    edges.push(min, min - 1, min - 0.000001, `${min}`, -0);
    if (max !== undefined) edges.push(max, max + 1, max + 0.000001);
    if (schema.type === "integer") edges.push(min + 0.5, 1e21);
    else edges.push(min + 0.0000001, 1e-7, 123.4567891);
  }
  if (schema.type === "string") {
    const minLength = schema.minLength ?? 0;
    const maxLength = schema.maxLength ?? 120;
    edges.push("x".repeat(Math.max(minLength - 1, 0)), "x".repeat(minLength), "x".repeat(maxLength));
    edges.push("x".repeat(maxLength + 1), ` ${name || "x"}`, 1);
  }
  if (schema.type === "array") {
    edges.push([], Array.from({ length: (schema.maxItems ?? 50) + 1 }, () => "x"), "x");
  }
  if (schema.type === "object") edges.push(FORBIDDEN, [], "x");
  if (schema.type === "boolean") edges.push("true", 1, 0);
  return edges;
}

function setAt(root: unknown, path: string[], edge: unknown, required: boolean): unknown {
  if (!path.length) return edge === REMOVE ? undefined : edge === FORBIDDEN ? withForbidden(root) : edge;
  let parent = root as Record<string, unknown>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string, unknown>;
  const key = path.at(-1)!;
  if (edge === REMOVE) {
    // An optional field gone is still valid: send it as null instead, which is not.
    if (required) delete parent[key];
    else parent[key] = null;
  } else if (edge === FORBIDDEN) parent[key] = withForbidden(parent[key]);
  else parent[key] = edge;
  return root;
}

function withForbidden(value: unknown): unknown {
  const key = FORBIDDEN_KEYS[JSON.stringify(value ?? "").length % FORBIDDEN_KEYS.length];
  return value && typeof value === "object" && !Array.isArray(value) ? { ...value, [key]: 1 } : { [key]: 1 };
}
