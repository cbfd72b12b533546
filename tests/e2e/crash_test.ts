/**
 * Durability of creates under a crash: a real server process is killed with
 * SIGKILL in the middle of a stream of concurrent `POST /v1/users`. Whatever
 * it acknowledged must survive, and every client must come with exactly its
 * `client.updated` event and its stored idempotent answer: the three are one
 * transaction, so none can exist without the others.
 */
import assert from "node:assert/strict";
import { partnerBody } from "../_helpers/http.ts";
import { freePort, waitUntilUp, WatchedService } from "../_helpers/server.ts";
import { assertClientsWhole } from "../faults/_spawned_service.ts";

const WRITERS = 24;
/** Acknowledged creates before the kill: enough to span several group commits and a background checkpoint. */
const KILL_AFTER = 900;

Deno.test("a crash (SIGKILL) in a stream of creates loses no acknowledged client and no event", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-crash-" });
  const databaseUrl = `file:${dir}/service.db`;
  const token = "crash-test-operator-token-0123456789abcdef";
  const service = new WatchedService({
    PORT: String(freePort()),
    DATABASE_URL: databaseUrl,
    OPERATOR_TOKEN: token,
    MASTER_KEY: btoa(String.fromCharCode(...new Uint8Array(32).fill(3))),
    LOG_LEVEL: "error",
  });
  const acknowledged = new Set<string>(); // externalUserIds whose create was answered
  try {
    await waitUntilUp(service.url);
    const created = await service.fetch("/operator/v1/partners", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(
        partnerBody({ partnerId: "crash", limits: { requestsPerMinute: 1_000_000, ordersPerMinute: 10 } }),
      ),
    });
    assert.equal(created.status, 201);
    const { credential } = await created.json();
    const authorization = `Basic ${btoa(`${credential.clientId}:${credential.clientSecret}`)}`;

    let killed = false;
    const writer = async (writerId: number) => {
      for (let n = 0; !killed; n++) {
        const externalUserId = `crash-${writerId}-${n}`;
        const key = `ik-${externalUserId}`;
        try {
          const response = await service.fetch("/v1/users", {
            method: "POST",
            headers: { authorization, "content-type": "application/json", "idempotency-key": key },
            body: JSON.stringify({ externalUserId }),
          });
          const body = await response.json();
          if (response.status !== 201) throw new Error(`unexpected ${response.status}: ${JSON.stringify(body)}`);
          acknowledged.add(externalUserId);
          if (acknowledged.size >= KILL_AFTER && !killed) {
            killed = true;
            service.kill("SIGKILL");
          }
        } catch (error) {
          if (!killed) throw error; // after the kill, requests in flight fail: that is the point
        }
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, (_, i) => writer(i)));
  } finally {
    await service.stop("SIGKILL"); // fails if the output holds a secret
  }

  const stored = await assertClientsWhole(databaseUrl, "crash");
  const lost = [...acknowledged].filter((id) => !stored.has(id));
  assert.deepEqual(lost, [], "every acknowledged client survives the crash");
});
