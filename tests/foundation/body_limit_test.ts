/**
 * The 64 KiB body limit holds while the body streams in: an upload without
 * Content-Length (chunked) is cut at the limit and cancelled, not read whole.
 */
import assert from "node:assert/strict";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectError, expectJson } from "../_helpers/http.ts";

const CHUNK = 16 * 1024;

/** A 256 MiB body that counts how much of it was ever pulled. */
function endlessBody() {
  const counter = { pulled: 0, cancelled: false };
  const chunk = new TextEncoder().encode(" ".repeat(CHUNK));
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (counter.pulled >= 256 * 1024 * 1024) return controller.close();
      counter.pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
    cancel() {
      counter.cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { stream, counter };
}

Deno.test("a chunked body over 64 KiB answers 413 after reading about 64 KiB of it", async () => {
  const env = await startTestEnv();
  try {
    const partner = await createPartner(env);
    const { stream, counter } = endlessBody();
    const response = await env.app.request("/v1/users", {
      method: "POST",
      headers: { ...partner.headers, "content-type": "application/json", "idempotency-key": "chunked-0001" },
      body: stream,
    });
    await expectError(response, 413, "VALIDATION_ERROR");
    assert.ok(counter.pulled <= 64 * 1024 + 2 * CHUNK, `read ${counter.pulled} bytes of the upload`);
    assert.equal(counter.cancelled, true, "the rest of the upload is cancelled");

    // A small chunked body is read whole and works as usual.
    const small = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const part of ['{"externalUserId":', '"chunked-user"}']) {
          controller.enqueue(new TextEncoder().encode(part));
        }
        controller.close();
      },
    });
    const created = await env.app.request("/v1/users", {
      method: "POST",
      headers: { ...partner.headers, "content-type": "application/json", "idempotency-key": "chunked-0002" },
      body: small,
    });
    assert.equal((await expectJson(created, 201)).externalUserId, "chunked-user");
  } finally {
    await env.close();
  }
});
