/**
 * Values between drizzle's bindings and rows and the Hrana protocol, as
 * `@libsql/client` converted them (db/remote.ts).
 */
import type * as hrana from "@libsql/hrana-client";

export type ProtoStmt = Parameters<hrana.WsStream["_execute"]>[0];
export type ProtoResult = Awaited<ReturnType<hrana.WsStream["_execute"]>>;
export type ProtoValue = ProtoStmt["args"][number];

const MIN_INTEGER = -9223372036854775808n;
const MAX_INTEGER = 9223372036854775807n;

/** As `@libsql/hrana-client` converts arguments (`valueToProto`), for the values drizzle binds. */
export function toProto(value: unknown): ProtoValue {
  if (value === null || typeof value === "string" || value instanceof Uint8Array) return value;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) {
      throw new RangeError("Only finite numbers (not Infinity or NaN) can be passed as arguments");
    }
    return value;
  }
  if (typeof value === "bigint") {
    if (value < MIN_INTEGER || value > MAX_INTEGER) {
      throw new RangeError(
        "This bigint value is too large to be represented as a 64-bit integer and passed as argument",
      );
    }
    return value;
  }
  if (typeof value === "boolean") return value ? 1n : 0n;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (value instanceof Date) return value.valueOf();
  if (typeof value === "object") return String(value);
  throw new TypeError("Unsupported type of value");
}

/** As `@libsql/client` with its default `intMode: "number"`: blobs arrive as ArrayBuffers. */
export function fromProto(value: ProtoValue): unknown {
  if (typeof value === "bigint") {
    const number = Number(value);
    if (!Number.isSafeInteger(number)) {
      throw new RangeError("Received integer which is too large to be safely represented as a JavaScript number");
    }
    return number;
  }
  if (value instanceof Uint8Array) return value.slice().buffer;
  if (value === undefined) throw new Error("The libSQL server sent a value of an unknown type");
  return value;
}
