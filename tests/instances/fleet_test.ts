/**
 * Three instances of the service on one database behind a round-robin proxy:
 * what one instance writes, every other reads; a credential revoked or a
 * partner suspended through one instance is refused on the next write at
 * every other (docs/production.md, "Every write re-checks…").
 */
import assert from "node:assert/strict";
import { partnerBody } from "../_helpers/http.ts";
import { type Credential, Fleet } from "./fleet.ts";

for (const database of ["file", "server"] as const) {
  Deno.test(`three instances on one database (${database === "file" ? "a libSQL file" : "a libSQL server"}): a client written on one is read on all; a revoke or a suspension on one stops the next write on every other`, async (t) => {
    await onOneDatabase(t, await Fleet.start({ instances: 3, database }));
  });
}

async function onOneDatabase(t: Deno.TestContext, fleet: Fleet) {
  try {
    let credential!: Credential;
    await t.step("a partner created through the proxy answers at every instance", async () => {
      const created = await fleet.operator("POST", "/operator/v1/partners", partnerBody({ partnerId: "fleet" }));
      assert.equal(created.status, 201, created.text);
      credential = created.body.credential;
      for (const index of [0, 1, 2]) {
        const health = await fleet.partner(credential, "GET", "/v1/health", { target: index });
        assert.equal(health.status, 200, `instance ${index}: ${health.text}`);
      }
      // The proxy spread its requests: the next three land on three different instances.
      const before = [...fleet.served];
      for (let i = 0; i < 3; i++) assert.equal((await fleet.partner(credential, "GET", "/v1/health")).status, 200);
      assert.deepEqual(fleet.served.map((count, index) => count - before[index]), [1, 1, 1]);
    });

    await t.step("a client created on one instance is read on the others", async () => {
      const created = await fleet.partner(credential, "POST", "/v1/users", {
        target: 0,
        body: { externalUserId: "ana" },
        idempotencyKey: "create-ana",
      });
      assert.equal(created.status, 201, created.text);
      assert.match(created.headers.get("content-type") ?? "", /application\/json/);
      for (const index of [1, 2]) {
        const read = await fleet.partner(credential, "GET", "/v1/users/ana", { target: index });
        assert.equal(read.status, 200, `instance ${index}: ${read.text}`);
        assert.equal(read.body.externalUserId, "ana");
        assert.equal(read.body.status, created.body.status);
      }
      // The same key replayed on another instance answers the stored answer, not a second client.
      const replay = await fleet.partner(credential, "POST", "/v1/users", {
        target: 2,
        body: { externalUserId: "ana" },
        idempotencyKey: "create-ana",
      });
      assert.equal(replay.status, 201);
      assert.equal(replay.headers.get("idempotent-replayed"), "true");
      assert.equal(replay.text, created.text);
    });

    await t.step("a credential revoked on one instance is refused on the next write at every other", async () => {
      const issued = await fleet.operator("POST", "/operator/v1/partners/fleet/credentials", {}, 0);
      assert.equal(issued.status, 201, issued.text);
      const second: Credential = issued.body.credential;
      // Every instance has authenticated (and cached) the new credential before the revoke.
      for (const index of [0, 1, 2]) {
        assert.equal((await fleet.partner(second, "GET", "/v1/users/ana", { target: index })).status, 200);
      }
      const revoked = await fleet.operator(
        "DELETE",
        `/operator/v1/partners/fleet/credentials/${second.clientId}`,
        undefined,
        0,
      );
      assert.equal(revoked.status, 200, revoked.text);
      for (const index of [1, 2]) {
        const write = await fleet.partner(second, "POST", "/v1/users", {
          target: index,
          body: { externalUserId: `after-revoke-${index}` },
          idempotencyKey: `after-revoke-${index}`,
        });
        assert.equal(write.status, 401, `instance ${index}: ${write.text}`);
        assert.equal(write.body.error.code, "B2B_CREDENTIAL_INVALID", write.text);
      }
      // Nothing was written by the refused calls; the first credential still works everywhere.
      for (const index of [0, 1, 2]) {
        const missing = await fleet.partner(credential, "GET", `/v1/users/after-revoke-${index}`, { target: index });
        assert.equal(missing.status, 404, missing.text);
      }
    });

    await t.step("a partner suspended on one instance is refused on the next write at every other", async () => {
      for (const index of [0, 1, 2]) {
        assert.equal((await fleet.partner(credential, "GET", "/v1/users/ana", { target: index })).status, 200);
      }
      const suspended = await fleet.operator("POST", "/operator/v1/partners/fleet/suspend", { reason: "audit" }, 2);
      assert.equal(suspended.status, 200, suspended.text);
      assert.equal(suspended.body.partner.status, "SUSPENDED");
      for (const index of [0, 1]) {
        const write = await fleet.partner(credential, "POST", "/v1/users", {
          target: index,
          body: { externalUserId: `after-suspend-${index}` },
          idempotencyKey: `after-suspend-${index}`,
        });
        assert.equal(write.status, 403, `instance ${index}: ${write.text}`);
        assert.equal(write.body.error.code, "PRINCIPAL_NOT_ACTIVE", write.text);
      }
      const reactivated = await fleet.operator("POST", "/operator/v1/partners/fleet/reactivate", {}, 1);
      assert.equal(reactivated.status, 200, reactivated.text);
      const write = await fleet.partner(credential, "POST", "/v1/users", {
        target: 2,
        body: { externalUserId: "after-reactivate" },
        idempotencyKey: "after-reactivate",
      });
      assert.equal(write.status, 201, write.text);
    });
  } finally {
    await fleet.stop();
  }
}
