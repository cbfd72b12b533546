/**
 * The partner API's write units on a libSQL server (sqld), read off the
 * wire: a write whose answer nobody reads is held (db/held_write.ts) and
 * leaves in the request of the statement after it, never paying a round
 * trip of its own, and the whole effect still commits with its idempotent
 * answer.
 */
import assert from "node:assert/strict";
import { startTestEnv } from "../_helpers/env.ts";
import { HranaTally } from "../_helpers/hrana_tally.ts";
import { createPartner, expectJson } from "../_helpers/http.ts";
import { startTcpRelay } from "../_helpers/tcp_relay.ts";
import { withServer } from "./remote_fixtures.ts";

Deno.test("remote write units: a new client's row travels with its event's INSERT, and commits with its idempotent answer", () =>
  withServer(async (sqld) => {
    const tally = new HranaTally({ keepRequests: true });
    const relay = startTcpRelay(sqld.url, { tally });
    const env = await startTestEnv({ databaseUrl: relay.url });
    try {
      const partner = await createPartner(env);
      const create = () =>
        partner.call("POST", "/v1/users", {
          body: { externalUserId: "held-1" },
          headers: { "idempotency-key": "held-key-1" },
        });
      tally.take();
      const created = await expectJson(await create(), 201);
      assert.equal(created.created, true);
      const carrying = tally.sent.filter((request) => request.some((sql) => sql.startsWith(`insert into "clients"`)));
      assert.equal(carrying.length, 1, JSON.stringify(tally.sent));
      const [request] = carrying;
      const row = request.findIndex((sql) => sql.startsWith(`insert into "clients"`));
      assert.ok(
        request.slice(row + 1).some((sql) => sql.startsWith(`insert into "events"`)),
        `the client's INSERT left with its event's, not alone: ${JSON.stringify(request)}`,
      );

      const replay = await create();
      assert.equal(replay.headers.get("idempotent-replayed"), "true");
      assert.deepEqual(await expectJson(replay, 201), created);
      const status = await expectJson(await partner.call("GET", "/v1/users/held-1/status"), 200);
      assert.equal(status.status, "ACTIVE");
      const events = await expectJson(await partner.call("GET", "/v1/events?type=client.updated"), 200);
      assert.deepEqual(events.events.map((event: { externalUserId: string }) => event.externalUserId), ["held-1"]);
    } finally {
      await env.close();
      await relay.close();
    }
  }));
