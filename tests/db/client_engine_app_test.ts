/**
 * The whole partner flow in one process on the asynchronous engines: a libSQL
 * server (sqld) over Hrana streams, and `@libsql/client` over a local file.
 */
import assert from "node:assert/strict";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { createPartner, expectJson } from "../_helpers/http.ts";
import { startSqld } from "../_helpers/sqld.ts";

Deno.test("the API works unchanged on a libSQL server", async () => {
  const sqld = await startSqld();
  try {
    await partnerFlow(await startTestEnv({ databaseUrl: sqld.url }));
  } finally {
    await sqld.stop();
  }
});

Deno.test("the API works unchanged on the @libsql/client engine", async () => {
  await partnerFlow(await startTestEnv({ engine: "client" }));
});

async function partnerFlow(env: TestEnv): Promise<void> {
  try {
    const partner = await createPartner(env);
    const create = (id: string, key: string) =>
      partner.call("POST", "/v1/users", { body: { externalUserId: id }, headers: { "idempotency-key": key } });
    const first = await expectJson(await create("remote-1", "remote-key-1"), 201);
    assert.equal(first.created, true);
    const replay = await create("remote-1", "remote-key-1");
    assert.equal(replay.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(await expectJson(replay, 201), first);
    await expectJson(await create("remote-2", "remote-key-2"), 201);
    const list = await expectJson(await partner.call("GET", "/v1/users?limit=1"), 200);
    assert.deepEqual(list.users.map((u: { externalUserId: string }) => u.externalUserId), ["remote-2"]);
    const next = await expectJson(await partner.call("GET", `/v1/users?limit=1&cursor=${list.nextCursor}`), 200);
    assert.deepEqual(next.users.map((u: { externalUserId: string }) => u.externalUserId), ["remote-1"]);
    const status = await expectJson(await partner.call("GET", "/v1/users/remote-1/status"), 200);
    assert.equal(status.status, "ACTIVE");
    const events = await expectJson(await partner.call("GET", "/v1/events?type=client.updated"), 200);
    assert.equal(events.events.length, 2);
  } finally {
    await env.close();
  }
}
