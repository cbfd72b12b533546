/**
 * Parsing of /exchange and /info bodies into the venue's typed forms, and the
 * canonical L1 action: known keys only, in the venue's order, lowercase hex,
 * normalised decimals, `f`/`a` only when true. The simulator hashes this
 * re-serialisation, never the received bytes, as the venue does (facts §4.2),
 * so a client that hashed anything else recovers a stranger.
 */
import { formatDec, isDecimal, parseDec } from "../../decimal.ts";
import type { HexAddress } from "../../types.ts";
import type { WireGrouping, WireOrder, WireOrderType } from "../../venue_b/wire.ts";

/** A body the venue could not deserialise: answered 422 text/plain. */
export class WireShapeError extends Error {}

/** Throws the 422 of a body the venue could not deserialise. */
export function fail(message: string): never {
  throw new WireShapeError(message);
}

/** A JSON object, or a 422. */
export function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail(`${what}: expected a map`);
  return value as Record<string, unknown>;
}

function list(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) fail(`${what}: expected a sequence`);
  return value;
}

/** A safe integer, or a 422. */
export function integer(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value)) fail(`${what}: expected an integer`);
  return value;
}

function bool(value: unknown, what: string): boolean {
  if (typeof value !== "boolean") fail(`${what}: expected a boolean`);
  return value;
}

function decimal(value: unknown, what: string): string {
  if (typeof value !== "string" || !isDecimal(value)) fail(`${what}: expected a decimal string`);
  return formatDec(parseDec(value));
}

/** Exactly `bytes` bytes of hex, lowercased, or a 422. */
export function hex(value: unknown, bytes: number, what: string): HexAddress {
  if (typeof value !== "string" || !new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`).test(value)) {
    fail(`${what}: expected ${bytes} bytes of hex`);
  }
  return value.toLowerCase() as HexAddress;
}

/** A string, or a 422. */
export function text(value: unknown, what: string): string {
  if (typeof value !== "string") fail(`${what}: expected a string`);
  return value;
}

/** A hex-encoded number such as a chain id ("0xa4b1"). */
export function hexNumber(value: unknown, what: string): string {
  if (typeof value !== "string" || !/^0x[0-9a-fA-F]+$/.test(value)) fail(`${what}: expected a hex number`);
  return value;
}

/** One of the allowed variants, or a 422. */
export function oneOf<T extends string>(value: unknown, allowed: readonly T[], what: string): T {
  if (!allowed.includes(value as T)) fail(`${what}: unknown variant "${String(value)}"`);
  return value as T;
}

type Flag<K extends string> = { [key in K]?: true };

/** An L1 action as the venue re-serialises it for hashing. */
export type CanonicalL1Action =
  | {
    type: "order";
    orders: WireOrder[];
    grouping: WireGrouping | { p: number };
    builder?: { b: HexAddress; f: number };
  }
  | { type: "cancel"; cancels: { a: number; o: number }[] } & Flag<"f">
  | { type: "cancelByCloid"; cancels: { asset: number; cloid: HexAddress }[] } & Flag<"f">
  | { type: "modify"; oid: number | HexAddress; order: WireOrder } & Flag<"a">
  | { type: "batchModify"; modifies: { oid: number | HexAddress; order: WireOrder }[] } & Flag<"a">
  | { type: "updateLeverage"; asset: number; isCross: boolean; leverage: number }
  | { type: "updateIsolatedMargin"; asset: number; isBuy: boolean; ntli: number }
  | { type: "scheduleCancel"; time?: number }
  | { type: "noop" };

/** Only a true flag is part of the venue's serialisation. */
function flag<K extends string>(source: Record<string, unknown>, key: K): Flag<K> {
  if (source[key] === undefined || source[key] === null) return {};
  return (bool(source[key], key) ? { [key]: true } : {}) as Flag<K>;
}

function orderType(raw: unknown): WireOrderType {
  const t = record(raw, "t");
  if (t.limit !== undefined) {
    return { limit: { tif: oneOf(record(t.limit, "limit").tif, ["Gtc", "Ioc", "Alo"], "tif") } };
  }
  const trigger = record(t.trigger, "trigger");
  return {
    trigger: {
      isMarket: bool(trigger.isMarket, "isMarket"),
      triggerPx: decimal(trigger.triggerPx, "triggerPx"),
      tpsl: oneOf(trigger.tpsl, ["tp", "sl"], "tpsl"),
    },
  };
}

function order(raw: unknown): WireOrder {
  const o = record(raw, "order");
  return {
    a: integer(o.a, "a"),
    b: bool(o.b, "b"),
    p: decimal(o.p, "p"),
    s: decimal(o.s, "s"),
    r: bool(o.r, "r"),
    t: orderType(o.t),
    ...(o.c === undefined || o.c === null ? {} : { c: hex(o.c, 16, "c") }),
  };
}

function orderId(raw: unknown): number | HexAddress {
  return typeof raw === "string" ? hex(raw, 16, "oid") : integer(raw, "oid");
}

function grouping(raw: unknown): WireGrouping | { p: number } {
  if (typeof raw === "object" && raw !== null) return { p: integer(record(raw, "grouping").p, "p") };
  return oneOf<WireGrouping>(raw, ["na", "normalTpsl", "positionTpsl"], "grouping");
}

/** The action as the venue re-serialises it for hashing; throws WireShapeError. */
export function canonicalL1Action(raw: Record<string, unknown>): CanonicalL1Action {
  switch (raw.type) {
    case "order": {
      const builder = raw.builder === undefined || raw.builder === null ? null : record(raw.builder, "builder");
      return {
        type: "order",
        orders: list(raw.orders, "orders").map(order),
        grouping: grouping(raw.grouping),
        ...(builder ? { builder: { b: hex(builder.b, 20, "builder.b"), f: integer(builder.f, "builder.f") } } : {}),
      };
    }
    case "cancel":
      return {
        type: "cancel",
        cancels: list(raw.cancels, "cancels").map((c) => ({
          a: integer(record(c, "cancel").a, "a"),
          o: integer(record(c, "cancel").o, "o"),
        })),
        ...flag(raw, "f"),
      };
    case "cancelByCloid":
      return {
        type: "cancelByCloid",
        cancels: list(raw.cancels, "cancels").map((c) => ({
          asset: integer(record(c, "cancel").asset, "asset"),
          cloid: hex(record(c, "cancel").cloid, 16, "cloid"),
        })),
        ...flag(raw, "f"),
      };
    case "modify":
      return { type: "modify", oid: orderId(raw.oid), order: order(raw.order), ...flag(raw, "a") };
    case "batchModify":
      return {
        type: "batchModify",
        modifies: list(raw.modifies, "modifies").map((m) => ({
          oid: orderId(record(m, "modify").oid),
          order: order(record(m, "modify").order),
        })),
        ...flag(raw, "a"),
      };
    case "updateLeverage":
      return {
        type: "updateLeverage",
        asset: integer(raw.asset, "asset"),
        isCross: bool(raw.isCross, "isCross"),
        leverage: integer(raw.leverage, "leverage"),
      };
    case "updateIsolatedMargin":
      return {
        type: "updateIsolatedMargin",
        asset: integer(raw.asset, "asset"),
        isBuy: bool(raw.isBuy, "isBuy"),
        ntli: integer(raw.ntli, "ntli"),
      };
    case "scheduleCancel":
      return {
        type: "scheduleCancel",
        ...(raw.time === undefined || raw.time === null ? {} : { time: integer(raw.time, "time") }),
      };
    case "noop":
      return { type: "noop" };
    default:
      fail(`action: unknown variant "${String(raw.type)}"`);
  }
}
