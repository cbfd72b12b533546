/**
 * One-line JSON logs on stderr. Fields whose names look like secrets are
 * replaced before writing, so a careless `logger.info({...body})` cannot leak
 * a key, token or signature.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const SECRET_FIELD = /secret|token|password|signature|authorization|private|apikey|api_key|seed|mnemonic|^key$/i;

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([name, item]) => [
      name,
      SECRET_FIELD.test(name) ? "[redacted]" : redact(item, depth + 1),
    ]),
  );
}

export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (line) => console.error(line),
): Logger {
  const log = (at: LogLevel) => (message: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[at] < ORDER[level]) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: at, message, ...(redact(fields) as object) }));
  };
  return { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
}
