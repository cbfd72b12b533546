/**
 * One-line JSON logs on stderr, built from an allow-list of fields. A field
 * that is not on the list is not written: its name goes into `dropped`, so a
 * developer notices, and its value never leaves the process. Redacting by
 * field name was not enough: a key under a name nobody foresaw (`agentKey`,
 * `passphrase`), a value nested deeper than the walk, or a driver message that
 * quotes every bound parameter went out verbatim.
 *
 * Every string written (the message included) is also scrubbed of token and
 * key shapes, because an allowed field can still carry one (a URL with its
 * `#t=` token, a path with a key in it).
 *
 * With telemetry on, a line written inside a span carries its `traceId` and
 * `spanId` (hex ids, set by us, not by the caller).
 */
import { sqliteCode } from "../db/connection.ts";
import { activeTraceIds } from "./telemetry/tracing.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";

/** Named values of one log line; only the names in `FIELD_WRITERS` are written. */
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Strings are cut to this length once scrubbed. */
const MAX_TEXT_LENGTH = 500;
const MAX_SUMMARY_ENTRIES = 16;
const MAX_STACK_FRAMES = 10;
/** Bounds the line when a whole object is passed as fields by mistake. */
const MAX_DROPPED_NAMES = 16;

/** Words that make a query parameter secret wherever they appear in its name (`apiKey`, `X-Signature`). */
const SECRET_PARAM_NAMES = "token|secret|key|sig|pass|auth|code|session|credential";

/**
 * Token and key shapes, one alternation so a string is scanned once. Order
 * matters where shapes overlap at the same position: the specific shapes come
 * before the generic base64 run that would also match them. Groups named
 * `keep…` hold the part that stays (`Bearer `, `?apiKey=`); what follows goes.
 */
const SECRET_SHAPES = new RegExp(
  [
    // Authorization header values.
    String.raw`(?<keepScheme>\b(?:Bearer|Basic)\s+)[\w.~+/-]+=*`,
    // Credentials in a URL (`scheme://user:password@host`).
    String.raw`(?<keepSlashes>\/\/)[^\s/@]+@`,
    // JWTs (their segments can be shorter than a base64 run) and the client secrets this
    // service issues (domain/credentials/issue_credential.ts), even cut short.
    String.raw`(?<whole>\beyJ[\w-]+\.[\w-]+\.[\w-]*|\bcsk_[\w-]*)`,
    // A URL fragment: hosted pages carry their token there (`/connect#t=…`). Not after a `.`,
    // which is a private member in a stack frame (`WriteQueue.#drain`).
    String.raw`(?<=[^\s.])(?<keepHash>#)\S+`,
    // Query parameters named like secrets (`?apiKey=…`, `&signature=…`); names are bounded so
    // a long string without `=` cannot make the scan quadratic.
    String.raw`(?<keepParam>[?&][^\s=&#]{0,40}(?:${SECRET_PARAM_NAMES})[^\s=&#]{0,40}=)[^\s&#]+`,
    // 0x hex: addresses (40 digits) are shortened, longer ones (private keys, signatures) removed.
    String.raw`(?<hex>\b0x[0-9a-f]{40,})(?!\w)`,
    // Base64 and base64url runs, which also covers bare hex of 32 digits and more.
    String.raw`[\w+/-]{24,}={0,2}`,
  ].join("|"),
  "gi",
);

/**
 * Runs that look like a secret but are ours and not secret: ids are a short
 * lowercase prefix and lowercase base32 or hex (`req_…`, `cli_…`, `evt_…`;
 * domain/ids.ts), while every secret we issue is base64url, whose mixed case
 * never fits. A random secret that happened to fit would need 24 characters
 * from a 32-character alphabet out of 64: about one in 10^7.
 */
const OUR_ID = /^[a-z]{2,5}_[0-9a-hjkmnp-tv-z]{16,26}$/;
/** Callers' request ids are often UUIDs; nothing we issue as a secret has this shape. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/**
 * Words in one case (`idempotency_keys`, `SQLITE_CONSTRAINT_PRIMARYKEY`): a random secret mixes cases
 * and digits (one of 24 base64 characters without either: about one in 10^9).
 */
const SINGLE_CASE_WORDS = /^(?:[a-z_-]+|[A-Z_]+)$/;
/** A short path segment (`v1`, `ext-user-42`); a base64 secret cut by its `/` leaves capitals or `+` behind. */
const PLAIN_SEGMENT = /^[a-z0-9_-]{0,23}$/;

const REDACTED = "[redacted]";

function isHarmlessSegment(segment: string): boolean {
  return PLAIN_SEGMENT.test(segment) || OUR_ID.test(segment) || UUID.test(segment) ||
    SINGLE_CASE_WORDS.test(segment);
}

function scrubMatch(match: string, ...args: unknown[]): string {
  const groups = args[args.length - 1] as Record<string, string | undefined>;
  const kept = groups.keepScheme ?? groups.keepSlashes ?? groups.keepHash ?? groups.keepParam;
  if (kept !== undefined) return kept + REDACTED + (groups.keepSlashes ? "@" : "");
  if (groups.whole) return REDACTED;
  if (groups.hex) return groups.hex.length === 42 ? `${match.slice(0, 6)}…${match.slice(-4)}` : REDACTED;
  // A base64-looking run is kept only when it reads as a path or ids, segment by segment.
  return match.split("/").every(isHarmlessSegment) ? match : REDACTED;
}

/** Longest text scanned: only the first MAX_TEXT_LENGTH characters are written, and the scan stays cheap. */
const MAX_SCANNED_LENGTH = 4_000;

/** The text up to MAX_SCANNED_LENGTH, without the word cut there: a piece of a secret can be too short to recognise. */
function boundForScan(text: string): string {
  if (text.length <= MAX_SCANNED_LENGTH) return text;
  let end = MAX_SCANNED_LENGTH;
  while (end > 0 && text.charCodeAt(end - 1) > 32) end--;
  return text.slice(0, end);
}

/** `text` without token and key shapes, cut to a bounded length. */
export function scrubText(text: string): string {
  const scrubbed = boundForScan(text).replace(SECRET_SHAPES, scrubMatch);
  return scrubbed.length > MAX_TEXT_LENGTH ? `${scrubbed.slice(0, MAX_TEXT_LENGTH)}…` : scrubbed;
}

/** Writes an allowed field's value, or answers undefined when its shape is not allowed (the field is dropped). */
type FieldWriter = (value: unknown, name: string, dropped: string[]) => unknown;

function writeScalar(value: unknown): unknown {
  switch (typeof value) {
    case "string":
      return scrubText(value);
    case "number":
    case "boolean":
      return value;
    case "bigint":
      return String(value); // JSON.stringify throws on a bigint, which would turn a log call into a failure
    default:
      return value === null ? null : undefined;
  }
}

/** A job's summary: one level of scalars (counts), bounded; anything nested is dropped by name. */
function writeSummary(value: unknown, name: string, dropped: string[]): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const summary: Record<string, unknown> = {};
  let entries = 0;
  for (const [key, item] of Object.entries(value)) {
    const written = entries < MAX_SUMMARY_ENTRIES ? writeScalar(item) : undefined;
    if (written === undefined) dropped.push(`${name}.${scrubText(key)}`);
    else {
      summary[scrubText(key)] = written;
      entries++;
    }
  }
  return summary;
}

/** Stack frames as `errorFields` gives them: strings, bounded, each scrubbed. */
function writeFrames(value: unknown): unknown {
  if (!Array.isArray(value)) return undefined;
  return value.slice(0, MAX_STACK_FRAMES).map((frame) => typeof frame === "string" ? scrubText(frame) : REDACTED);
}

/** The fields a log line may carry, gathered from the call sites. */
const SCALAR_FIELDS = [
  // a request
  "requestId",
  "method",
  "path",
  "route",
  "status",
  "durationMs",
  // whom and what it concerns
  "partnerId",
  "clientId",
  "tenantId",
  "externalUserId",
  "providerId",
  "positionId",
  "paymentId",
  "obligationId",
  "job",
  // a signal's fan-out (domain/engine/dispatch_entries.ts)
  "signalId",
  "dispatched",
  "busy",
  "failed",
  // on chain (payments scan and finality)
  "networkId",
  "block",
  "fromBlock",
  "toBlock",
  // outcomes
  "kind",
  "code",
  "count",
  // a failure (see errorFields)
  "errorClass",
  "causeClass",
  "errorCode",
  // the process (start-up, shutdown in domain/lifecycle.ts)
  "url",
  "env",
  "signal",
  "requestsInFlight",
  "jobRunsInFlight",
  "graceSeconds",
];

const FIELD_WRITERS = new Map<string, FieldWriter>([
  ...SCALAR_FIELDS.map((name) => [name, writeScalar] as const),
  ["summary", writeSummary],
  ["stack", writeFrames],
]);

function logLine(level: LogLevel, message: string, fields: LogFields): string {
  const line: Record<string, unknown> = { time: new Date().toISOString(), level, message: scrubText(message) };
  // The active span's ids (telemetry on and inside a request, job or fan-out): the line joins its trace.
  const trace = activeTraceIds();
  if (trace) Object.assign(line, trace);
  const dropped: string[] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const written = FIELD_WRITERS.get(name)?.(value, name, dropped);
    if (written === undefined) dropped.push(scrubText(name));
    else line[name] = written;
  }
  if (dropped.length) line.dropped = dropped.slice(0, MAX_DROPPED_NAMES);
  return JSON.stringify(line);
}

export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (line) => console.error(line),
): Logger {
  const threshold = ORDER[level];
  const log = (at: LogLevel) => {
    const rank = ORDER[at];
    return (message: string, fields: LogFields = {}) => {
      if (rank >= threshold) write(logLine(at, message, fields));
    };
  };
  return { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
}

/** Frames in this project are written relative to its root: shorter, and no home directory in the logs. */
const PROJECT_ROOT = new URL("../", import.meta.url).href;
const FRAME_LINE = /^\s+at /;
const CONSTANT_CASE = /^[A-Z][A-Z0-9_]{1,63}$/;

/**
 * What may be logged of a thrown value: its class, its code (the SQLite code
 * through drizzle's wrapper, or a CONSTANT_CASE `code` such as ECONNREFUSED)
 * and its stack frames, never its message: drizzle's message carries the SQL
 * and every bound parameter, a venue's may carry a request.
 */
export function errorFields(error: unknown): LogFields {
  if (!(error instanceof Error)) return { errorClass: typeof error };
  const cause = error.cause instanceof Error ? error.cause.constructor.name : undefined;
  const ownCode = (error as { code?: unknown }).code;
  return {
    errorClass: error.constructor.name,
    causeClass: cause,
    errorCode: sqliteCode(error) ?? (typeof ownCode === "string" && CONSTANT_CASE.test(ownCode) ? ownCode : undefined),
    stack: stackFrames(error),
  };
}

function stackFrames(error: Error): string[] {
  const stack = typeof error.stack === "string" ? error.stack : "";
  // The stack opens with "Name: message", and a message can span lines (drizzle's
  // "Failed query: …\nparams: …"): cut it whole, so no message line shaped like a frame gets through.
  const header = error.message ? `${error.name}: ${error.message}` : error.name;
  const frames = stack.startsWith(header) ? stack.slice(header.length) : stack;
  return frames.split("\n")
    .filter((line) => FRAME_LINE.test(line))
    .slice(0, MAX_STACK_FRAMES)
    .map((line) => line.trim().slice("at ".length).replaceAll(PROJECT_ROOT, ""));
}
