/**
 * Counts what a service asks a libSQL server over Hrana-over-WebSocket, read
 * off the wire by the TCP relay (tcp_relay.ts `tally`): the round trips (one
 * Hrana request the service waits for: an `execute`, a `batch`, a
 * `get_autocommit`…) and the statements they carry (an execute's one, a
 * batch's steps). Nothing is kept of a message but its kind and, when asked
 * for, its statements' SQL text: never their arguments nor the `hello`'s
 * token.
 *
 * The client's side of a connection is its HTTP upgrade request, then
 * WebSocket frames (RFC 6455), each masked by the client; a Hrana message is
 * one text frame (or a text frame and its continuations).
 */

export interface HranaCounts {
  /** Requests that carried statements or asked about the stream (not `open_stream`/`close_stream`/`hello`). */
  requests: number;
  statements: number;
}

export class HranaTally implements HranaCounts {
  requests = 0;
  statements = 0;
  /** Statements by their SQL text, when asked for (`keepSql`): what a route repeats. */
  readonly statementsBySql = new Map<string, number>();
  /** Each request's statements (SQL text), in the order sent, when asked for (`keepRequests`): for tests. */
  readonly sent: string[][] = [];

  readonly keepSql: boolean;
  readonly keepRequests: boolean;

  constructor({ keepSql = false, keepRequests = false } = {}) {
    this.keepSql = keepSql;
    this.keepRequests = keepRequests;
  }

  /** A parser for one connection's client-to-server bytes, feeding this tally. */
  connection(): (chunk: Uint8Array) => void {
    const frames = new FrameReader((message) => this.#message(message));
    return (chunk) => frames.push(chunk);
  }

  /** The counts so far, and a fresh start. */
  take(): HranaCounts {
    const counts = { requests: this.requests, statements: this.statements };
    this.requests = 0;
    this.statements = 0;
    this.statementsBySql.clear();
    this.sent.length = 0;
    return counts;
  }

  #message(text: string): void {
    const message = JSON.parse(text) as { type: string; request?: HranaRequest };
    if (message.type !== "request" || !message.request) return;
    const { request } = message;
    if (request.type === "open_stream" || request.type === "close_stream") return;
    this.requests++;
    const stmts = request.type === "execute"
      ? [request.stmt]
      : request.type === "batch"
      ? request.batch?.steps.map((step) => step.stmt) ?? []
      : [];
    const sqls = stmts.flatMap((stmt) => stmt ? [stmt.sql] : []);
    this.statements += sqls.length;
    if (this.keepRequests && sqls.length) this.sent.push(sqls);
    if (this.keepSql) {
      for (const sql of sqls) {
        this.statementsBySql.set(sql, (this.statementsBySql.get(sql) ?? 0) + 1);
      }
    }
  }
}

interface HranaRequest {
  type: string;
  stmt?: { sql: string };
  batch?: { steps: { stmt?: { sql: string } }[] };
}

/** The text messages in a client's byte stream, after its HTTP upgrade request. */
class FrameReader {
  #buffer: Uint8Array = new Uint8Array(0);
  #upgraded = false;
  /** The payloads of a message whose continuation frames are still coming. */
  #fragments: Uint8Array[] = [];
  #decoder = new TextDecoder();

  constructor(readonly onText: (text: string) => void) {}

  push(chunk: Uint8Array): void {
    this.#buffer = concat([this.#buffer, chunk]);
    if (!this.#upgraded) {
      const end = indexOfHeadersEnd(this.#buffer);
      if (end < 0) return;
      this.#upgraded = true;
      this.#buffer = this.#buffer.subarray(end);
    }
    for (let frame = this.#frame(); frame; frame = this.#frame()) {
      const { opcode, fin, payload } = frame;
      // Text (1) or its continuation (0); binary, ping, pong and close carry no Hrana JSON.
      if (opcode !== 1 && opcode !== 0) continue;
      this.#fragments.push(payload);
      if (!fin) continue;
      this.onText(this.#decoder.decode(concat(this.#fragments)));
      this.#fragments = [];
    }
  }

  /** The next whole frame, unmasked, taken off the buffer; undefined until all of it has arrived. */
  #frame(): { opcode: number; fin: boolean; payload: Uint8Array } | undefined {
    const bytes = this.#buffer;
    if (bytes.length < 2) return undefined;
    const fin = (bytes[0] & 0x80) !== 0;
    const opcode = bytes[0] & 0x0f;
    const masked = (bytes[1] & 0x80) !== 0;
    let length = bytes[1] & 0x7f;
    let offset = 2;
    if (length === 126) {
      if (bytes.length < 4) return undefined;
      length = (bytes[2] << 8) | bytes[3];
      offset = 4;
    } else if (length === 127) {
      if (bytes.length < 10) return undefined;
      length = Number(new DataView(bytes.buffer, bytes.byteOffset + 2, 8).getBigUint64(0));
      offset = 10;
    }
    const mask = masked ? bytes.subarray(offset, offset + 4) : undefined;
    if (masked) offset += 4;
    if (bytes.length < offset + length) return undefined;
    const payload = bytes.slice(offset, offset + length);
    if (mask) { for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i % 4]; }
    this.#buffer = bytes.subarray(offset + length);
    return { opcode, fin, payload };
  }
}

function indexOfHeadersEnd(bytes: Uint8Array): number {
  for (let i = 3; i < bytes.length; i++) {
    if (bytes[i - 3] === 13 && bytes[i - 2] === 10 && bytes[i - 1] === 13 && bytes[i] === 10) return i + 1;
  }
  return -1;
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  const whole = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    whole.set(part, offset);
    offset += part.length;
  }
  return whole;
}
