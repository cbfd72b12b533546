/**
 * The secrets a test handled, so that its service's log can be checked for
 * every one of them when the test ends (env.ts, server.ts). Secrets are found
 * by field name anywhere in a JSON body, request or response, so a feature
 * that adds a secret field is covered as soon as its name says what it is.
 */
import assert from "node:assert/strict";

/** Field names whose values are secrets (`clientSecret`, `apiSecret`, `agentKey`, `privateKey`, `token`…). */
const SECRET_FIELD =
  /secret|token|password|passphrase|private|api.?key|agent.?key|master.?key|signature|cookie|mnemonic/i;
/** Shorter values occur in logs by chance (and are not real secrets: validation tests send them). */
const MIN_SECRET_LENGTH = 8;
/** A URL's fragment: hosted pages carry their token there (`{connect_url}/connect#t=<TOKEN>`). */
const URL_FRAGMENT = /^[a-z][a-z0-9+.-]*:\/\/[^#\s]*#(\S+)$/i;

export class SecretWatch {
  /** Secret value -> where it came from (a field name), for a failure message that never quotes it. */
  readonly #sources = new Map<string, string>();

  add(source: string, value: unknown): void {
    if (typeof value === "string" && value.length >= MIN_SECRET_LENGTH) this.#sources.set(value, source);
  }

  /** Every secret-named field in a JSON value, and the fragment of every URL in it. */
  addFromJson(value: unknown, name = "body"): void {
    if (typeof value === "string") {
      if (SECRET_FIELD.test(name)) this.add(name, value);
      const fragment = URL_FRAGMENT.exec(value)?.[1];
      if (fragment) {
        this.add(`${name} fragment`, fragment);
        for (const [, token] of new URLSearchParams(fragment)) this.add(`${name} fragment`, token);
      }
    } else if (Array.isArray(value)) {
      for (const item of value) this.addFromJson(item, name);
    } else if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) this.addFromJson(item, key);
    }
  }

  /** The credentials of an `Authorization` header (`Basic …`, `Bearer …`). */
  addFromHeaders(headers: Record<string, string>): void {
    for (const [name, value] of Object.entries(headers)) {
      if (name.toLowerCase() === "authorization") this.add("authorization header", value.replace(/^\S+\s+/, ""));
      else if (SECRET_FIELD.test(name)) this.add(`${name} header`, value);
    }
  }

  /** A JSON response's secrets; the response itself stays unread for the test. */
  async addFromResponse(response: Response): Promise<void> {
    if (!/application\/json/.test(response.headers.get("content-type") ?? "")) return;
    this.addFromJson(await response.clone().json().catch(() => undefined));
  }

  /** Fails naming the secret's source and the line number, never the secret or the line. */
  assertNotIn(lines: readonly string[], where: string): void {
    lines.forEach((line, index) => {
      for (const [secret, source] of this.#sources) {
        assert.ok(!line.includes(secret), `${where}, line ${index + 1}, holds the ${source} the test used`);
      }
    });
  }
}
