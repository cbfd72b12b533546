/**
 * The body rules of routes/middleware/body_guard.ts on every API that reads a
 * body (partner, operator, the hosted pages'): a body must be JSON sent as
 * `Content-Type: application/json`, in valid UTF-8, else 400 VALIDATION_ERROR
 * before any handler runs; a route that does not exist answers 404 without
 * reading the body.
 */
import assert from "node:assert/strict";
import { clients } from "../../db/schema.ts";
import { OPERATOR_TOKEN, startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { createPartner, expectError, expectJson, partnerBody } from "../_helpers/http.ts";

const utf8 = (text: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(text);

function bytes(...parts: (string | number[])[]): Uint8Array<ArrayBuffer> {
  const pieces = parts.map((part) => typeof part === "string" ? utf8(part) : new Uint8Array(part));
  const whole = new Uint8Array(pieces.reduce((size, piece) => size + piece.byteLength, 0));
  let at = 0;
  for (const piece of pieces) {
    whole.set(piece, at);
    at += piece.byteLength;
  }
  return whole;
}

/** `text` as JSON with `bad` followed by raw bytes where `MARK` stands. */
function withRawBytes(json: string, raw: number[]): Uint8Array<ArrayBuffer> {
  const [before, after] = json.split("MARK");
  return bytes(before, "bad", raw, after);
}

/** A request with exactly these bytes and headers (no content type unless given). */
async function send(
  env: TestEnv,
  method: string,
  path: string,
  body: Uint8Array<ArrayBuffer>,
  headers: Record<string, string>,
) {
  const response = await env.app.request(path, { method, headers, body });
  await env.watchedSecrets.addFromResponse(response);
  return response;
}

async function storedClients(env: TestEnv): Promise<string[]> {
  return (await env.deps.db.read.select().from(clients)).map((row) => row.externalUserId);
}

Deno.test("a body not sent as application/json answers 400 VALIDATION_ERROR on every API, before any effect", async () => {
  const env = await startTestEnv();
  try {
    const partner = await createPartner(env);
    const create = JSON.stringify({ externalUserId: "plain-user" });
    const asPartner = (type: string | null, key: string) => ({
      ...partner.headers,
      "idempotency-key": key,
      ...(type === null ? {} : { "content-type": type }),
    });

    for (
      const [label, response] of [
        ["text/plain", await send(env, "POST", "/v1/users", utf8(create), asPartner("text/plain", "plain-0001"))],
        ["no content type", await send(env, "POST", "/v1/users", utf8(create), asPartner(null, "plain-0002"))],
        [
          "a form",
          await send(
            env,
            "POST",
            "/v1/users",
            utf8("a=b"),
            asPartner("application/x-www-form-urlencoded", "plain-0003"),
          ),
        ],
        [
          "a +json type",
          await send(env, "POST", "/v1/users", utf8(create), asPartner("application/vnd.api+json", "plain-0004")),
        ],
        [
          "operator",
          await send(env, "POST", "/operator/v1/partners", utf8(JSON.stringify(partnerBody())), {
            authorization: `Bearer ${OPERATOR_TOKEN}`,
            "content-type": "text/plain",
          }),
        ],
        ["connect page API", await send(env, "POST", "/connect/api/session", utf8('{"token":"x"}'), {})],
        [
          "pay page API",
          await send(env, "POST", "/pay/api/session", utf8('{"token":"x"}'), { "content-type": "text/plain" }),
        ],
      ] as const
    ) {
      const body = await expectError(response, 400, "VALIDATION_ERROR");
      assert.match(body.error.message, /Content-Type: application\/json/, label);
    }
    assert.deepEqual(await storedClients(env), [], "nothing was created");

    // The same body as application/json (charset allowed) is accepted.
    const created = await send(
      env,
      "POST",
      "/v1/users",
      utf8(create),
      asPartner("Application/JSON; charset=utf-8", "plain-0005"),
    );
    assert.equal((await expectJson(created, 201)).externalUserId, "plain-user");

    // A route that does not exist answers 404 whatever its body, without reading it.
    let pulled = false;
    const unread = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled = true;
        controller.enqueue(utf8("a=b"));
        controller.close();
      },
    }, { highWaterMark: 0 });
    const missing = await env.app.request("/v1/nothing-here", {
      method: "POST",
      headers: { ...partner.headers, "content-type": "text/plain" },
      body: unread,
    });
    await expectError(missing, 404, "NOT_FOUND");
    assert.equal(pulled, false, "the body of an unknown route is never read");
  } finally {
    await env.close();
  }
});

Deno.test("a JSON body whose bytes are not valid UTF-8 answers 400 VALIDATION_ERROR on every API, storing nothing", async (t) => {
  const env = await startTestEnv();
  try {
    const partner = await createPartner(env);
    const json = { ...partner.headers, "content-type": "application/json" };
    const notUtf8 = /UTF-8/;

    await t.step(
      "partner API: bytes FF FE, a lone surrogate (ED A0 80), an overlong '/' (C0 AF), a cut sequence (E2 82)",
      async () => {
        const cases: number[][] = [[0xff, 0xfe], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xe2, 0x82]];
        for (const [i, raw] of cases.entries()) {
          const body = withRawBytes('{"externalUserId":"MARK"}', raw);
          const response = await send(env, "POST", "/v1/users", body, { ...json, "idempotency-key": `utf8-000${i}` });
          assert.match((await expectError(response, 400, "VALIDATION_ERROR")).error.message, notUtf8, String(raw));
        }
        assert.deepEqual(await storedClients(env), [], "no client named bad\uFFFD\uFFFD was stored");
      },
    );

    await t.step("operator API", async () => {
      const body = withRawBytes(JSON.stringify(partnerBody({ name: "MARK" })), [0xff, 0xfe]);
      const response = await send(env, "POST", "/operator/v1/partners", body, {
        authorization: `Bearer ${OPERATOR_TOKEN}`,
        "content-type": "application/json",
      });
      assert.match((await expectError(response, 400, "VALIDATION_ERROR")).error.message, notUtf8);
    });

    await t.step("hosted pages' APIs", async () => {
      for (const path of ["/connect/api/session", "/pay/api/session"]) {
        const body = withRawBytes('{"token":"MARK"}', [0xff, 0xfe]);
        const response = await send(env, "POST", path, body, { "content-type": "application/json" });
        assert.match((await expectError(response, 400, "VALIDATION_ERROR")).error.message, notUtf8, path);
      }
    });

    await t.step("a UTF-16 body (FF FE byte order mark) is refused the same way", async () => {
      const utf16 = new Uint8Array([
        0xff,
        0xfe,
        ...[...'{"externalUserId":"u16"}'].flatMap((ch) => [ch.charCodeAt(0), 0]),
      ]);
      const response = await send(env, "POST", "/v1/users", utf16, { ...json, "idempotency-key": "utf8-0010" });
      assert.match((await expectError(response, 400, "VALIDATION_ERROR")).error.message, notUtf8);
    });

    await t.step(
      "a leading UTF-8 byte order mark is ignored (RFC 8259 §8.1); valid multi-byte text is kept",
      async () => {
        const body = bytes([0xef, 0xbb, 0xbf], '{"externalUserId":"bom-usuário-🙂"}');
        const response = await send(env, "POST", "/v1/users", body, { ...json, "idempotency-key": "utf8-0011" });
        assert.equal((await expectJson(response, 201)).externalUserId, "bom-usuário-🙂");
        assert.deepEqual(await storedClients(env), ["bom-usuário-🙂"]);
      },
    );
  } finally {
    await env.close();
  }
});
