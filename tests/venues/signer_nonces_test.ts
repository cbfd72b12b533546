/**
 * VENUE_B agent nonces drawn from the database: two handles on one file stand
 * for two instances; whatever they draw for one signer is unique and strictly
 * increasing, and never behind the clock. The in-process source, for one
 * process alone, keeps the same rule.
 */
import assert from "node:assert/strict";
import { openDatabase } from "../../db/client.ts";
import { databaseSignerNonces } from "../../domain/venues/signer_nonces.ts";
import { inProcessSignerNonces } from "../../venues/venue_b/nonces.ts";

const AGENT = "0xAbCdEf0000000000000000000000000000000001";
const OTHER = "0x0000000000000000000000000000000000000002";

Deno.test("database signer nonces: two instances drawing at once for one agent never draw the same nonce", async () => {
  const url = `file:${await Deno.makeTempDir({ prefix: "svc-nonces-" })}/service.db`;
  const first = await openDatabase(url);
  const second = await openDatabase(url);
  try {
    // A frozen clock: every draw falls in the same millisecond, the case where a clock alone repeats itself.
    const now = () => 1_800_000_000_000;
    const [a, b] = [databaseSignerNonces(first, now), databaseSignerNonces(second, now)];
    const drawn = await Promise.all(
      Array.from(
        { length: 200 },
        (_, i) => (i % 2 ? a : b).next((i % 4 < 2 ? AGENT : AGENT.toLowerCase()) as `0x${string}`),
      ),
    );
    assert.equal(new Set(drawn).size, drawn.length, "no nonce drawn twice");
    assert.deepEqual(drawn.toSorted((x, y) => x - y), Array.from({ length: 200 }, (_, i) => now() + i));
    // Each instance's own draws rise in the order it asked.
    for (const parity of [0, 1]) {
      const own = drawn.filter((_, i) => i % 2 === parity);
      assert.ok(own.every((nonce, i) => i === 0 || nonce > own[i - 1]));
    }
    // Another signer has its own sequence, from the clock.
    assert.equal(await a.next(OTHER), now());
    // The clock moving on is followed; moving back (another machine's clock) never lowers the sequence.
    const later = databaseSignerNonces(first, () => now() + 60_000);
    assert.equal(await later.next(AGENT), now() + 60_000);
    assert.equal(await b.next(AGENT), now() + 60_001);
    const rows = await first.read.all<[string, number]>("SELECT signer, last_nonce FROM signer_nonces ORDER BY signer");
    assert.deepEqual(rows, [[OTHER, now()], [AGENT.toLowerCase(), now() + 60_001]]);
  } finally {
    first.close();
    second.close();
  }
});

Deno.test("in-process signer nonces: strictly increasing per signer within one process, from the clock", async () => {
  let time = 1_800_000_000_000;
  const nonces = inProcessSignerNonces(() => time);
  assert.equal(await nonces.next(AGENT), time);
  assert.equal(await nonces.next(AGENT.toLowerCase() as `0x${string}`), time + 1);
  assert.equal(await nonces.next(OTHER), time);
  time += 10;
  assert.equal(await nonces.next(AGENT), time);
  time -= 5;
  assert.equal(await nonces.next(AGENT), time + 6);
});
