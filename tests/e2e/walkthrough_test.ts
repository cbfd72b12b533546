/**
 * The README's first call and docs/walkthrough.md, run as a newcomer runs
 * them: the service started as `deno task start` starts it (QA, a fresh data
 * dir, its generated operator token), then every command of the guides in
 * order, through bash and curl, in the data dir's parent. Each answer must be
 * JSON without an error, and must hold what the guide shows after `# ->`.
 *
 * What a newcomer copies from one answer into the next (the credential, the
 * session id, the safety fingerprint) is copied here the same way, and step 6's
 * browser (the hosted page's "Usar conta de teste", then "Conectar conta") is
 * done through the page's own API.
 */
import assert from "node:assert/strict";
import { freePort, waitUntilUp, WatchedService } from "../_helpers/server.ts";
import {
  claimsOf,
  type GuideCommand,
  guideCommands,
  holdsPair,
  holdsString,
  isAssignment,
  shellBlocks,
} from "./shell_walkthrough.ts";

const ROOT = new URL("../../", import.meta.url);
/** Where the guides say the service listens. */
const GUIDE_BASE = "http://127.0.0.1:8080";
/** A read whose answer the guide shows may follow work still landing (a fill, a job): asked again meanwhile. */
const READ_ATTEMPTS = 40;

/** An answer as parsed from JSON. */
// deno-lint-ignore no-explicit-any
type Answer = Record<string, any>;

/** Values the guides ask to copy from an answer: by the placeholder standing for them and the step answering them. */
const PLACEHOLDERS: { placeholder: string; step: number; from: (answer: Answer) => string | undefined }[] = [
  {
    placeholder: "cli_...:csk_...",
    step: 1,
    from: (answer) => answer.credential && `${answer.credential.clientId}:${answer.credential.clientSecret}`,
  },
  { placeholder: "SESSION_ID", step: 6, from: (answer) => answer.sessionId },
  { placeholder: "FINGERPRINT", step: 8, from: (answer) => answer.safety?.fingerprint },
];

Deno.test("the README's first call and docs/walkthrough.md run as written, each answer as the guides show it", async () => {
  const readme = await Deno.readTextFile(new URL("README.md", ROOT));
  const walkthrough = await Deno.readTextFile(new URL("docs/walkthrough.md", ROOT));
  const commands = [
    ...shellBlocks(readme, "## A first call").flatMap(guideCommands),
    ...shellBlocks(walkthrough).flatMap(guideCommands),
  ];
  assert.ok(commands.length >= 25, `the guides' commands were read (${commands.length})`);

  const home = await Deno.makeTempDir({ prefix: "svc-walkthrough-" });
  const port = String(freePort());
  const service = new WatchedService({ PORT: port, HOST: "127.0.0.1", DATABASE_URL: `file:${home}/data/service.db` });
  try {
    await waitUntilUp(service.url);
    service.secrets.add("operator token", (await Deno.readTextFile(`${home}/data/operator_token`)).trim());
    const session = new GuideSession(home, service);
    for (const command of commands) await session.run(command);
    assert.deepEqual(session.missing(), [], "every placeholder was filled from an answer");
  } finally {
    const { status } = await service.stop("SIGTERM");
    assert.equal(status.code, 0);
    await Deno.remove(home, { recursive: true });
  }
});

class GuideSession {
  readonly #assignments: string[] = [];
  readonly #values = new Map<string, string>();

  constructor(readonly home: string, readonly service: WatchedService) {}

  async run(command: GuideCommand): Promise<void> {
    const text = this.#filled(command.text);
    if (isAssignment(command.text)) {
      this.#assignments.push(text);
      return;
    }
    const read = !/-X (POST|PUT|DELETE|PATCH)\b/.test(text);
    for (let attempt = 1;; attempt++) {
      const answer = await this.#shell(text);
      const problem = this.#problemWith(answer, command.shown);
      if (!problem) {
        await this.#took(answer, command.step);
        return;
      }
      if (!read || attempt >= READ_ATTEMPTS) {
        throw new Error(`Step ${command.step}: ${problem}\n$ ${text}\n${JSON.stringify(answer, null, 1)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  missing(): string[] {
    return PLACEHOLDERS.map((entry) => entry.placeholder).filter((placeholder) => !this.#values.has(placeholder));
  }

  #filled(text: string): string {
    let filled = text.replaceAll(GUIDE_BASE, this.service.url);
    for (const [placeholder, value] of this.#values) filled = filled.replaceAll(placeholder, value);
    return filled;
  }

  async #shell(command: string): Promise<unknown> {
    const script = [...this.#assignments, command].join("\n");
    const output = await new Deno.Command("bash", {
      args: ["-c", `set -euo pipefail\n${script}`],
      cwd: this.home,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(output.stdout);
    if (!output.success) throw new Error(`$ ${command}\n${stdout}${new TextDecoder().decode(output.stderr)}`);
    try {
      return JSON.parse(stdout);
    } catch {
      throw new Error(`$ ${command}\nnot JSON: ${stdout}`);
    }
  }

  #problemWith(answer: unknown, shown: string | null): string | null {
    if (answer !== null && typeof answer === "object" && "error" in answer) return "the answer is an error";
    if (shown === null) return null;
    const { pairs, strings } = claimsOf(shown);
    for (const [key, value] of pairs) {
      if (!holdsPair(answer, key, value)) return `the guide shows "${key}": ${JSON.stringify(value)}`;
    }
    for (const value of strings) if (!holdsString(answer, value)) return `the guide shows "${value}"`;
    return null;
  }

  /** What a newcomer takes from an answer: the values to copy, and step 6's hosted page. */
  async #took(answer: unknown, step: number): Promise<void> {
    const record = answer as Answer;
    for (const { placeholder, from, ...copied } of PLACEHOLDERS) {
      const value = copied.step !== step || this.#values.has(placeholder) ? undefined : from(record);
      if (value === undefined) continue;
      this.#values.set(placeholder, value);
      this.service.secrets.add(placeholder, value);
    }
    if (typeof record.connectUrl === "string") await this.#connectWithTestKey(record.connectUrl);
  }

  /** The hosted page's "Usar conta de teste" then "Conectar conta", through the page's own API. */
  async #connectWithTestKey(connectUrl: string): Promise<void> {
    const token = connectUrl.split("#t=")[1];
    this.service.secrets.add("connect token", token);
    const post = async (path: string, body: unknown, ticket?: string) => {
      const response = await this.service.fetch(path, {
        method: "POST",
        headers: { "content-type": "application/json", ...(ticket ? { authorization: `Bearer ${ticket}` } : {}) },
        body: JSON.stringify(body),
      });
      assert.equal(response.status, 200, `${path}: ${response.status}`);
      return await response.json();
    };
    const { ticket } = await post("/connect/api/session", { token });
    const keys = await post("/connect/api/qa/test-credentials", {}, ticket);
    await post("/connect/api/api-key", keys, ticket);
  }
}
