import assert from "node:assert/strict";
import { requestHash } from "../../domain/idempotency/idempotency_keys.ts";
import { withTransaction } from "../../db/client.ts";
import { idempotencyKeys } from "../../db/schema.ts";
import type { AppEnv } from "../../routes/env.ts";
import { idempotent } from "../../routes/middleware/idempotency.ts";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { asPartner, createPartner, expectError, expectJson, type TestPartner } from "../_helpers/http.ts";
import type { Context } from "hono";

/** A test-only IK route that counts how often its work really runs. */
function mountCounter(app: TestEnv["app"], gate?: Promise<void>) {
  const counter = { runs: 0 };
  app.post("/v1/test/counter", idempotent(), async (c: Context<AppEnv>) => {
    counter.runs++;
    if (gate) await gate;
    const body = c.get("jsonBody") as { fail?: number } | undefined;
    if (body?.fail) {
      return c.json({ error: { code: "X", message: "m", requestId: c.get("requestId") } }, body.fail as 500);
    }
    return c.json({ run: counter.runs, requestId: c.get("requestId") }, 201);
  });
  return counter;
}

const post = (partner: TestPartner, key: string | undefined, body: unknown) =>
  partner.call("POST", "/v1/test/counter", { body, headers: key === undefined ? {} : { "idempotency-key": key } });

Deno.test("Idempotency-Key", async (t) => {
  let counter!: { runs: number };
  const env = await startTestEnv({ extend: (app) => (counter = mountCounter(app)) });
  let partner: TestPartner;
  try {
    partner = await createPartner(env);

    await t.step("is required and must be 8-128 of A-Z a-z 0-9 . _ : -", async () => {
      await expectError(await post(partner, undefined, {}), 400, "IDEMPOTENCY_KEY_REQUIRED");
      await expectError(await post(partner, "short", {}), 400, "VALIDATION_ERROR");
      await expectError(await post(partner, "has space in it", {}), 400, "VALIDATION_ERROR");
      await expectError(await post(partner, "x".repeat(129), {}), 400, "VALIDATION_ERROR");
      assert.equal(counter.runs, 0);
    });

    await t.step("same key and same body replays the stored status and body", async () => {
      const first = await expectJson(await post(partner, "key-0001", { a: 1, b: [1, 2] }), 201);
      const replay = await post(partner, "key-0001", { b: [1, 2], a: 1 });
      assert.equal(replay.headers.get("idempotent-replayed"), "true");
      assert.deepEqual(await expectJson(replay, 201), first);
      assert.equal(counter.runs, 1);
    });

    await t.step("same key and another body answers 409 IDEMPOTENCY_CONFLICT", async () => {
      await expectError(await post(partner, "key-0001", { a: 2 }), 409, "IDEMPOTENCY_CONFLICT");
      assert.equal(counter.runs, 1);
    });

    await t.step("keys are scoped per partner", async () => {
      const other = await createPartner(env);
      await expectJson(await post(other, "key-0001", { a: 2 }), 201);
      assert.equal(counter.runs, 2);
    });

    await t.step("a 5xx where nothing happened is not stored: the same key may retry", async () => {
      await expectJson(await post(partner, "key-5xx-01", { fail: 503 }), 503);
      await expectJson(await post(partner, "key-5xx-01", { fail: 503 }), 503);
      assert.equal(counter.runs, 4);
    });
  } finally {
    await env.close();
  }

  await t.step("a stored response survives a restart", async () => {
    let counter!: { runs: number };
    const again = await startTestEnv({ databaseUrl: env.databaseUrl, extend: (app) => (counter = mountCounter(app)) });
    try {
      const same = asPartner(again, partner.partnerId, partner.clientId, partner.clientSecret);
      const replay = await expectJson(await post(same, "key-0001", { a: 1, b: [1, 2] }), 201);
      assert.equal(replay.run, 1);
      assert.equal(counter.runs, 0);
    } finally {
      await again.close();
    }
  });
});

Deno.test("Idempotency-Key under concurrency and crashes", async (t) => {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let counter!: { runs: number };
  const env = await startTestEnv({ extend: (app) => (counter = mountCounter(app, gate)) });
  try {
    const partner = await createPartner(env);

    await t.step("a concurrent duplicate answers 409 IDEMPOTENCY_IN_PROGRESS", async () => {
      const first = post(partner, "key-concurrent", { n: 1 });
      while (counter.runs === 0) await new Promise((r) => setTimeout(r, 5));
      await expectError(await post(partner, "key-concurrent", { n: 1 }), 409, "IDEMPOTENCY_IN_PROGRESS");
      open();
      await expectJson(await first, 201);
      await expectJson(await post(partner, "key-concurrent", { n: 1 }), 201);
      assert.equal(counter.runs, 1);
    });

    await t.step("a key left IN_PROGRESS by a crash is free again after its lease", async () => {
      const scope = { partnerId: partner.partnerId, route: "POST /v1/test/counter", key: "key-crashed" };
      // What a process leaves behind when it claimed the key and died before answering: nobody renews the lease.
      const now = env.clock.now();
      await withTransaction(env.deps.db, (tx) =>
        tx.insert(idempotencyKeys).values({
          ...scope,
          requestHash: requestHash({ n: 2 }),
          state: "IN_PROGRESS",
          owner: "the-dead-owner",
          lockedUntil: Date.now() + 300, // leases run on the wall clock
          createdAt: now,
          expiresAt: now + 24 * 3_600_000,
        }));
      await expectError(await post(partner, "key-crashed", { n: 2 }), 409, "IDEMPOTENCY_IN_PROGRESS");
      await new Promise((resolve) => setTimeout(resolve, 350));
      await expectJson(await post(partner, "key-crashed", { n: 2 }), 201);
      assert.equal(counter.runs, 2);
    });
  } finally {
    await env.close();
  }
});

Deno.test("a replay's X-Request-Id is the original request's, agreeing with its body", async () => {
  const env = await startTestEnv({ extend: (app) => mountCounter(app) });
  try {
    const partner = await createPartner(env);
    const first = await post(partner, "key-header-01", { h: 1 });
    const firstBody = await expectJson(first, 201);
    assert.equal(first.headers.get("x-request-id"), firstBody.requestId);
    const again = await partner.call("POST", "/v1/test/counter", {
      body: { h: 1 },
      headers: { "idempotency-key": "key-header-01", "x-request-id": "caller-chosen-id" },
    });
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(await expectJson(again, 201), firstBody);
    assert.equal(again.headers.get("x-request-id"), firstBody.requestId);
  } finally {
    await env.close();
  }
});
