/**
 * The whole partner flow on the `@libsql/client` engine (the code path of a
 * remote libSQL server), against a local file: no libSQL server can be
 * installed on these machines, so this is as far as the remote path can run.
 */
import assert from "node:assert/strict";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectJson } from "../_helpers/http.ts";

Deno.test("the API works unchanged on the @libsql/client engine", async () => {
  const env = await startTestEnv({ engine: "client" });
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
});
