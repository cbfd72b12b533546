/**
 * Another OS process holds the database's write lock (a backup tool, an
 * operator's sqlite3 shell, a second instance stuck mid-transaction) while the
 * service, in its own process, takes reads and writes. Reads never wait for
 * it (WAL). A write waits for the lock up to the writer's 5 s; one that gets
 * it succeeds, one that does not is refused with the documented 503
 * SERVICE_UNAVAILABLE and Retry-After, having kept nothing, so the same
 * request with the same Idempotency-Key succeeds once the lock is gone.
 *
 * The first test runs the service as its own process. The last two run it in
 * the test process, to hold one venue answer at the link until the other
 * process has the lock: an entry whose venue answer, and a fan-out whose
 * intent, cannot be recorded. Recording before sending keeps both whole.
 */
import assert from "node:assert/strict";
import { expectError, expectJson, operator } from "../_helpers/http.ts";
import { ik } from "../setup/setup_fixture.ts";
import { assertClientsWhole, assertStorageRefusal, startService } from "./_spawned_service.ts";
import { assertProtectedOnce, linkVenueA, ordersAtVenueA, runJob, tradingClient } from "./_venue_faults.ts";
import { opening, signal } from "../execution/execution_fixture.ts";

const HOLDER = new URL("./hold_write_lock.ts", import.meta.url).pathname;

/** The other process, holding the write lock from when this answers until `release()`. */
async function holdWriteLock(path: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", HOLDER, path],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).values();
  const next = async () => (await lines.next()).value?.trim();
  assert.equal(await next(), "locked", "the other process took the write lock");
  const stdin = child.stdin.getWriter();
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      await stdin.close();
      assert.equal(await next(), "released");
      assert.equal((await child.status).code, 0);
    },
    async kill() {
      if (released) return;
      released = true;
      child.kill("SIGKILL");
      await child.status;
      await stdin.close().catch(() => {});
      await child.stdout.cancel().catch(() => {});
    },
  };
}

Deno.test("database locked by another process: reads answer, writes wait or get 503 with Retry-After, nothing half-written", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "svc-faults-lock-" });
  const path = `${dir}/service.db`;
  const svc = await startService(`file:${path}`, { partnerId: "locked" });
  const createUser = (externalUserId: string) =>
    svc.asPartner("POST", "/v1/users", { externalUserId }, `create-${externalUserId}`);
  let lock: Awaited<ReturnType<typeof holdWriteLock>> | null = null;
  try {
    assert.equal((await createUser("ana")).status, 201);

    await t.step("a lock released within the writer's wait: writes wait for it and succeed", async () => {
      lock = await holdWriteLock(path);
      const writes = ["wait-1", "wait-2", "wait-3"].map(createUser);
      // The writes are waiting for the lock; reads go on meanwhile.
      const status = await svc.asPartner("GET", "/v1/users/ana/status");
      assert.equal(status.status, 200, JSON.stringify(status.body));
      const list = await svc.asPartner("GET", "/v1/users?limit=10");
      assert.deepEqual(list.body.users.map((c: { externalUserId: string }) => c.externalUserId), ["ana"]);
      await lock.release();
      for (const answer of await Promise.all(writes)) assert.equal(answer.status, 201, JSON.stringify(answer.body));
    });

    const names = ["held-1", "held-2", "held-3", "held-4"];
    await t.step(
      "a lock held past the writer's wait: every write is refused with 503, reads still answer",
      async () => {
        lock = await holdWriteLock(path);
        // Each of these must answer while the lock is still held (it is released only below): none can succeed.
        const refusals = await Promise.all([
          ...names.map(createUser),
          svc.asPartner("POST", "/v1/users/ana/suspend", { reason: "teste de bloqueio" }),
          svc.asOperator("PUT", "/operator/v1/providers/VENUE_A", { realExecution: true }),
        ]);
        refusals.forEach((answer, i) => assertStorageRefusal(answer, `write ${i}`));
        const ana = await svc.asPartner("GET", "/v1/users/ana");
        assert.equal(ana.status, 200, JSON.stringify(ana.body));
        assert.equal(ana.body.status, "ACTIVE", "the refused suspension kept nothing");
        const events = await svc.asPartner("GET", "/v1/events?limit=50");
        assert.equal(events.status, 200);
        assert.deepEqual(
          events.body.events.map((e: { externalUserId: string }) => e.externalUserId).filter((id: string) =>
            id?.startsWith("held-")
          ),
          [],
          "no event of a refused write",
        );
        await lock.release();
      },
    );

    await t.step("once the lock is gone, the same requests with the same keys succeed, each once", async () => {
      for (const name of names) {
        const answer = await createUser(name);
        assert.equal(answer.status, 201, JSON.stringify(answer.body));
        assert.equal(answer.body.created, true, "the refused request had kept nothing, not even its key");
      }
      const replay = await createUser("held-1");
      assert.equal(replay.headers.get("idempotent-replayed"), "true");
      assert.equal((await svc.asPartner("POST", "/v1/users/ana/suspend", { reason: "teste de bloqueio" })).status, 200);
    });

    await t.step("requests counted while the lock is held are in the usage report afterwards", async () => {
      // A minute of usage closes when the first request of the next arrives; its counts are written then.
      assert.equal(
        (await svc.asOperator("PUT", "/operator/v1/clock", { now: "2026-12-01T10:00:30.000Z" })).status,
        200,
      );
      for (let i = 0; i < 3; i++) assert.equal((await svc.asPartner("GET", "/v1/users/ana")).status, 200);
      assert.equal(
        (await svc.asOperator("PUT", "/operator/v1/clock", { now: "2026-12-01T10:01:30.000Z" })).status,
        200,
      );
      lock = await holdWriteLock(path);
      // Closes 10:00 (3 requests): its write is queued behind the lock ...
      assert.equal((await svc.asPartner("GET", "/v1/users/ana")).status, 200);
      // ... and fails with this write, queued after it (the writer gives up on every waiting write at once).
      assertStorageRefusal(await createUser("usage-1"), "a write behind the lock");
      await lock.release();
      const usage = await svc.asPartner("GET", "/v1/usage?minutes=5");
      assert.equal(usage.status, 200, JSON.stringify(usage.body));
      const requestsAt = (minute: string) =>
        usage.body.buckets.find((b: { window: string; kind: string }) => b.window === minute && b.kind === "REQUEST")
          ?.count;
      assert.equal(requestsAt("2026-12-01T10:00:00.000Z"), 3, "the closed minute's counts were kept for a later write");
      assert.equal(requestsAt("2026-12-01T10:01:00.000Z"), 3, "this minute: the read, the refused write, the report");
    });
  } finally {
    await (lock as { kill(): Promise<void> } | null)?.kill();
    const exit = await svc.stop();
    assert.equal(exit.code, 0, "the service ran through the lock and stopped cleanly");
  }
  const stored = await assertClientsWhole(`file:${path}`, "locked");
  assert.deepEqual(
    [...stored].toSorted(),
    ["ana", "held-1", "held-2", "held-3", "held-4", "wait-1", "wait-2", "wait-3"],
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("database locked while an entry's venue answer is recorded: 503, the retry answers the intent, the reconcile job completes it, one order", async () => {
  const { env, partner, keys } = await tradingClient();
  const link = linkVenueA(env);
  let lock: Awaited<ReturnType<typeof holdWriteLock>> | null = null;
  try {
    // The venue fills the order; its answer is held until the other process has the database's write lock.
    link.fail("POST", "/fapi/v1/order", "ANSWER_HELD");
    const body = opening({ intentId: "locked-entry-1" });
    const headers = ik();
    const entry = partner.call("POST", "/v1/orders/execute", { body, headers });
    while (!(await ordersAtVenueA(env, keys.apiKey)).orders.length) await new Promise((r) => setTimeout(r, 20));
    lock = await holdWriteLock(env.databaseUrl.slice("file:".length));
    link.heal();
    // Recording the answer waits for the lock, then gives up: the caller hears to try again, not a 500.
    const refused = await entry;
    const retryAfter = Number(refused.headers.get("retry-after"));
    await expectError(refused, 503, "SERVICE_UNAVAILABLE");
    assert.ok(retryAfter >= 1, "with Retry-After");
    await lock.release();

    // Retried as told, the same request answers the intent recorded before the send: never sent twice.
    // (Its key, claimed for the venue call, is freed as soon as the database takes writes again.)
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
    const again = await expectJson(await partner.call("POST", "/v1/orders/execute", { body, headers }), 200);
    assert.equal(again.execution.status, "SUBMITTING", "its outcome is unknown to the service until it asks");
    assert.equal((await ordersAtVenueA(env, keys.apiKey)).orders.length, 1);

    await runJob(env, "reconcile");
    const intent = await expectJson(
      await partner.call("GET", "/v1/orders/locked-entry-1?externalUserId=ana&providerId=VENUE_A"),
      200,
    );
    assert.equal(intent.status, "FILLED");
    await assertProtectedOnce(env, partner, keys.apiKey);
  } finally {
    await (lock as { kill(): Promise<void> } | null)?.kill();
    await link.close();
    await env.close();
  }
});

Deno.test("database locked in the middle of a signal fan-out: 503 and nothing sent; the same signal again sends the admitted entry once", async () => {
  const { env, partner, keys } = await tradingClient();
  const link = linkVenueA(env);
  let lock: Awaited<ReturnType<typeof holdWriteLock>> | null = null;
  try {
    // The entry is admitted (committed); before its intent is recorded the account's margin mode is set at
    // the venue. That answer is held until the other process has the write lock: the intent cannot be written.
    link.fail("POST", "/fapi/v1/marginType", "ANSWER_HELD");
    const fanOut = operator(env, "POST", "/operator/v1/signals", signal("locked-sig-1"));
    while (!link.held) await new Promise((r) => setTimeout(r, 20));
    lock = await holdWriteLock(env.databaseUrl.slice("file:".length));
    link.heal();
    await expectError(await fanOut, 503, "SERVICE_UNAVAILABLE");
    await lock.release();
    assert.deepEqual((await ordersAtVenueA(env, keys.apiKey)).orders, [], "nothing is sent that is not recorded");

    const again = await expectJson(await operator(env, "POST", "/operator/v1/signals", signal("locked-sig-1")), 200);
    assert.equal(again.dispatched, 1, JSON.stringify(again));
    await runJob(env, "reconcile");
    await assertProtectedOnce(env, partner, keys.apiKey);
  } finally {
    await (lock as { kill(): Promise<void> } | null)?.kill();
    await link.close();
    await env.close();
  }
});
