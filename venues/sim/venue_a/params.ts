/**
 * Request parameters as the venue reads them: query and form body merged,
 * the query winning on a name sent in both, with the venue's own errors for
 * missing or malformed values.
 */
import { isDecimal } from "../../decimal.ts";
import { errors } from "./errors.ts";

export class RequestParams {
  readonly #values: Map<string, string>;

  constructor(query: string, body: string) {
    this.#values = new Map([...new URLSearchParams(body), ...new URLSearchParams(query)]);
  }

  /** The value, or undefined when absent or empty. */
  get(name: string): string | undefined {
    const value = this.#values.get(name);
    return value === undefined || value === "" ? undefined : value;
  }

  required(name: string): string {
    const value = this.get(name);
    if (value === undefined) throw errors.mandatory(name);
    return value;
  }

  decimal(name: string): string | undefined {
    const value = this.get(name);
    if (value !== undefined && !/^\d{1,20}(\.\d{1,20})?$/.test(value)) throw errors.illegalChars(name);
    return value;
  }

  requiredDecimal(name: string): string {
    const value = this.decimal(name);
    if (value === undefined || !isDecimal(value)) throw errors.mandatory(name);
    return value;
  }

  int(name: string): number | undefined {
    const value = this.get(name);
    if (value === undefined) return undefined;
    if (!/^-?\d{1,19}$/.test(value)) throw errors.illegalChars(name);
    return Number(value);
  }

  bool(name: string): boolean | undefined {
    const value = this.get(name)?.toLowerCase();
    if (value === undefined) return undefined;
    if (value !== "true" && value !== "false") throw errors.invalidParam(name);
    return value === "true";
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], invalid: () => Error): T | undefined {
    const value = this.get(name);
    if (value === undefined) return undefined;
    if (!allowed.includes(value as T)) throw invalid();
    return value as T;
  }
}
