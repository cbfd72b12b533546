/**
 * The shared rate limiter on a real libSQL file, two instances (each its own
 * connections and writer) racing calls against usage reads that give their
 * room back mid-minute: no call is granted past the limit, and once both have
 * given back what they held the row is exactly the calls granted.
 */
import assert from "node:assert/strict";
import { openDatabase } from "../../db/client.ts";
import { chunkOf, createRateLimiter, type LimitDecision } from "../../domain/usage/rate_limiter.ts";

const LIMIT = 600;
const AT = Date.parse("2026-11-02T10:00:15.000Z");
const MINUTE = Date.parse("2026-11-02T10:00:00.000Z");

Deno.test("two instances on one database, calls racing usage reads' give-backs: never past the limit, the row is the calls granted", async () => {
  const url = `file:${await Deno.makeTempDir({ prefix: "svc-shared-limit-" })}/service.db`;
  const [dbA, dbB] = [await openDatabase(url), await openDatabase(url)];
  const errors: unknown[] = [];
  const instances = [dbA, dbB].map((db) => createRateLimiter(db, (error) => errors.push(error)));
  const consume = async (index: number): Promise<LimitDecision> =>
    await instances[index].consume("acme", { REQUEST: LIMIT }, AT);
  const row = async () =>
    (await dbA.read.all<[number]>(
      `SELECT count FROM usage_buckets WHERE partner_id = 'acme' AND kind = 'REQUEST' AND window_start = ${MINUTE}`,
    ))[0]?.[0] ?? 0;
  try {
    let granted = 0;
    const giveBacks: Promise<void>[] = [];
    for (let batch = 0; batch < 40; batch++) {
      // Sixteen calls at once, spread over both instances, while one of them gives its room back.
      giveBacks.push(instances[batch % 2].flush("acme"));
      const decisions = await Promise.all(Array.from({ length: 16 }, (_, i) => consume(i % 2)));
      granted += decisions.filter((d) => d.allowed).length;
      assert.ok(granted <= LIMIT, `${granted} granted`);
      assert.ok(await row() >= granted, "every call granted is already counted");
    }
    await Promise.all(giveBacks);
    // Drain both: once each refuses, neither holds room and the row is full.
    for (const index of [0, 1]) while ((await consume(index)).allowed) granted++;
    assert.equal(granted, LIMIT);
    assert.equal(await row(), LIMIT);
    for (const limiter of instances) await limiter.flush();
    assert.equal(await row(), LIMIT);
    assert.deepEqual(errors, []);
  } finally {
    dbA.close();
    dbB.close();
  }
});

Deno.test("room not spent is given back when the minute closes; a limiter lost without giving back leaves at most one chunk counted", async () => {
  const url = `file:${await Deno.makeTempDir({ prefix: "svc-shared-limit-" })}/service.db`;
  const db = await openDatabase(url);
  const limiter = createRateLimiter(db, (error) => {
    throw error;
  });
  const count = async (minute: number) =>
    (await db.read.all<[number]>(
      `SELECT count FROM usage_buckets WHERE partner_id = 'acme' AND kind = 'REQUEST' AND window_start = ${minute}`,
    ))[0]?.[0] ?? 0;
  try {
    for (let i = 0; i < 3; i++) assert.equal((await limiter.consume("acme", { REQUEST: LIMIT }, AT)).allowed, true);
    assert.equal(await count(MINUTE), chunkOf(LIMIT), "a chunk claimed, three of it spent");
    // The next minute's first call gives the closed minute's room back (in the background); flush waits for it.
    assert.equal((await limiter.consume("acme", { REQUEST: LIMIT }, AT + 60_000)).allowed, true);
    await limiter.flush("acme");
    assert.equal(await count(MINUTE), 3);
    assert.equal(await count(MINUTE + 60_000), 1);

    // Another instance, lost (killed) without giving back: what it granted stays counted, plus its unspent room.
    const lost = createRateLimiter(db, () => {});
    for (let i = 0; i < 5; i++) {
      assert.equal((await lost.consume("acme", { REQUEST: LIMIT }, AT + 120_000)).allowed, true);
    }
    const counted = await count(MINUTE + 120_000);
    assert.ok(counted >= 5 && counted <= 5 + chunkOf(LIMIT), `${counted} counted for 5 granted`);
  } finally {
    db.close();
  }
});
