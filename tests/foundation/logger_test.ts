/**
 * Clean logs: a line carries only allow-listed fields, every string in it is
 * scrubbed of token and key shapes, and a failing query is logged by class and
 * code, never with its SQL or bound parameters. The last tests hold the log
 * scanner of tests/_helpers to what it is for: failing a test whose service
 * logged a secret the test handled.
 */
import assert from "node:assert/strict";
import { openDatabase, withTransaction } from "../../db/client.ts";
import { settings } from "../../db/schema.ts";
import { newId, randomSecret, randomToken } from "../../domain/ids.ts";
import { createLogger, errorFields, type LogFields } from "../../domain/logger.ts";
import { newRequestId } from "../../routes/middleware/request_id.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { call, createPartner, expectError } from "../_helpers/http.ts";

function capture(level: "debug" | "warn" = "debug") {
  const lines: string[] = [];
  return { lines, logger: createLogger(level, (line) => lines.push(line)) };
}

/** The one line `fields` give, parsed, with its text. */
function logOnce(message: string, fields: LogFields) {
  const { lines, logger } = capture();
  logger.error(message, fields);
  assert.equal(lines.length, 1);
  return { text: lines[0], line: JSON.parse(lines[0]) };
}

function hex(digits: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(digits)), (byte) => "0123456789abcdef"[byte & 15]).join("");
}

const AGENT_KEY = `0x${hex(64)}`;

Deno.test("a field not on the allow-list is dropped by name, never written by value", () => {
  const { text, line } = logOnce("connected", {
    requestId: "req_0123456789abcdef01234567",
    agentKey: AGENT_KEY,
    masterKey: "hunter2-master",
    passphrase: "hunter2-passphrase",
    cookie: "session=hunter2-cookie",
    message: "overwritten?",
  });
  assert.equal(line.requestId, "req_0123456789abcdef01234567");
  assert.equal(line.message, "connected");
  assert.deepEqual(line.dropped, ["agentKey", "masterKey", "passphrase", "cookie", "message"]);
  assert.ok(!/hunter2|overwritten/.test(text) && !text.includes(AGENT_KEY.slice(2)), text);
});

Deno.test("every secret shape is scrubbed, in the message and in allowed fields", async (t) => {
  const address = `0x${hex(40)}`;
  const shapes: [shape: string, text: string, secret: string][] = [
    ["0x private key", `key ${AGENT_KEY}`, AGENT_KEY.slice(2)],
    ["0x signature", `signed 0x${hex(130)}`, "0x"],
    ["full address", `wallet ${address}`, address],
    ["bare hex (sha-256)", `hash ${hex(64)}`, ""],
    ["base64 (a master key)", `key ${btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))}`, ""],
    ["base64url (a secret)", `value ${randomSecret(32)}`, ""],
    ["issued client secret", `csk_${randomSecret(32)}`, "csk_"],
    ["issued client secret, cut short", "csk_AbC12", "csk_"],
    ["Bearer credential", "authorization: Bearer hunter2hunter2", "hunter2"],
    ["Basic credential", `authorization: Basic ${btoa("cli_x:hunter2")}`, btoa("cli_x:hunter2")],
    ["hosted page token in the fragment", "https://pay.example/connect#t=hunter2tok", "hunter2tok"],
    [
      "secret query parameters",
      "https://venue.example/fapi/v1/order?symbol=BTC&signature=ab12cd&apiKey=hunter2",
      "ab12cd",
    ],
    ["URL credentials", "libsql://admin:hunter2@db.example/main", "hunter2"],
    ["JWT", "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln", "eyJ"],
  ];
  for (const [shape, text, marker] of shapes) {
    await t.step(shape, () => {
      const secret = marker || text.split(" ").at(-1)!;
      for (const written of [logOnce(text, {}).line.message, logOnce("x", { url: text }).line.url]) {
        assert.ok(!written.includes(secret), `${shape}: ${written}`);
        assert.match(written, /\[redacted\]|…/, shape);
      }
    });
  }
  await t.step("an address is shortened, not removed", () => {
    assert.equal(logOnce(`wallet ${address}`, {}).line.message, `wallet ${address.slice(0, 6)}…${address.slice(-4)}`);
  });
});

Deno.test("ids, caller request ids, paths and stack frames survive scrubbing", () => {
  const kept = [
    newRequestId(),
    `cli_${randomToken(24)}`,
    newId("evt", Date.now()),
    `ptn_${randomToken(16)}`,
    crypto.randomUUID(),
    "partner-trace:42.a_b",
    "/v1/clients/ext-user-0001/strategies/trend-follow",
    "/operator/v1/partners/ptn_0123456789abcdef/credentials",
    "async WriteQueue.#drain (db/write_queue.ts:104:36)",
    "RemotePreparedQuery.run (node_modules/.deno/drizzle-orm@0.45.4/node_modules/drizzle-orm/sqlite-proxy/session.js:180:10)",
  ];
  for (const text of kept) assert.equal(logOnce(text, { path: text }).line.path, text);
});

Deno.test("nested values are written one level deep where allowed, and deep nesting never leaks", () => {
  let deep: Record<string, unknown> = { agentKey: AGENT_KEY, note: "hunter2" };
  for (let level = 0; level < 12; level++) deep = { level, inner: deep };
  const { text, line } = logOnce("job expiry", {
    job: "expiry",
    summary: { purged: 3, kept: 1, nested: deep },
    requestId: deep,
    context: deep,
  });
  assert.deepEqual(line.summary, { purged: 3, kept: 1 });
  assert.deepEqual(line.dropped, ["summary.nested", "requestId", "context"]);
  assert.ok(!text.includes("hunter2") && !text.includes(AGENT_KEY.slice(2)), text);
});

Deno.test("a line below the level costs nothing: its fields are not even read", () => {
  const { lines, logger } = capture("warn");
  let read = false;
  logger.info("skipped", {
    get requestId() {
      read = true;
      return "req_x";
    },
  });
  assert.equal(lines.length, 0);
  assert.equal(read, false);
});

for (const engine of ["embedded", "client"] as const) {
  Deno.test(`a failing query (${engine}) is logged by class and code, without its SQL or parameters`, async () => {
    const db = await openDatabase(`file:${await Deno.makeTempDir({ prefix: "svc-log-" })}/db.db`, { engine });
    const secret = `csk_${randomSecret(32)}`;
    const insert = () => withTransaction(db, (tx) => tx.insert(settings).values({ key: "vault", value: secret }));
    try {
      await insert();
      const error = await insert().then(() => assert.fail("a duplicate key must fail"), (error: unknown) => error);
      assert.ok(String(error).includes(secret), "drizzle's message does carry the parameter");
      const { text, line } = logOnce("Unexpected error", errorFields(error));
      assert.equal(line.errorClass, "DrizzleQueryError");
      assert.equal(line.causeClass, engine === "embedded" ? "SqliteError" : "LibsqlError");
      assert.match(line.errorCode, /^SQLITE_CONSTRAINT/);
      assert.ok(line.stack.length > 0 && line.stack.every((frame: string) => !frame.includes("Failed query")));
      assert.ok(!text.includes(secret.slice(4)) && !/insert into|params/i.test(text), text);
    } finally {
      db.close();
    }
  });
}

Deno.test("an unexpected error in a route is logged by class and code, and the log scanner finds nothing", async () => {
  const env = await startTestEnv({
    extend: (app) =>
      app.post("/test/store-agent-key", async (c) => {
        const { agentKey } = await c.req.json();
        const deps = c.get("deps");
        deps.logger.error("storing an agent key", { requestId: c.get("requestId"), agentKey });
        for (let attempt = 0; attempt < 2; attempt++) {
          await withTransaction(deps.db, (tx) => tx.insert(settings).values({ key: "agent", value: agentKey }));
        }
        return c.json({});
      }),
  });
  try {
    const response = await call(env, "POST", "/test/store-agent-key", { body: { agentKey: AGENT_KEY } });
    const body = await expectError(response, 500, "INTERNAL_ERROR");
    const line = JSON.parse(env.logs.find((l) => l.includes("Unexpected error") && l.includes(body.error.requestId))!);
    assert.equal(line.errorClass, "DrizzleQueryError");
    assert.match(line.errorCode, /^SQLITE_CONSTRAINT/);
    assert.ok(env.logs.some((l) => JSON.parse(l).dropped?.includes("agentKey")));
  } finally {
    await env.close(); // the scanner: fails if any line holds the agent key, the operator token or the master key
  }
});

Deno.test("the log scanner fails a test whose service logged a secret it handled, naming the field only", async () => {
  // What the service wrote before the allow-list: a field passed through, and a drizzle error as text.
  const leaks: [field: string, line: (clientSecret: string) => string][] = [
    ["agentKey", () => JSON.stringify({ message: "storing an agent key", agentKey: AGENT_KEY })],
    ["clientSecret", (clientSecret) => `usage flush failed: Error: Failed query: …\nparams: ${clientSecret}`],
  ];
  for (const [field, line] of leaks) {
    const env = await startTestEnv();
    const partner = await createPartner(env);
    await call(env, "POST", "/test/nowhere", { body: { agentKey: AGENT_KEY } });
    env.logs.push(line(partner.clientSecret));
    await assert.rejects(env.close(), (error: Error) => {
      assert.match(error.message, new RegExp(`holds the ${field} the test used`));
      assert.ok(!error.message.includes(AGENT_KEY) && !error.message.includes(partner.clientSecret), error.message);
      return true;
    });
  }
});
