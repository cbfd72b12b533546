/**
 * Two service instances on one database receive the same create with the same
 * Idempotency-Key at the same moment. The answer is stored in the transaction
 * of the effect and checked under the write lock, so exactly one effect
 * commits; the other caller gets the same answer, or is told the key is still
 * in progress (the spec's answer for a duplicate running beside the first)
 * and gets the same answer when it asks again.
 */
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { clients, events } from "../../db/schema.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { asPartner, createPartner } from "../_helpers/http.ts";

Deno.test("a key raced across two instances runs its effect once and answers both callers alike", async () => {
  const first = await startTestEnv();
  const second = await startTestEnv({ databaseUrl: first.databaseUrl });
  try {
    const partner = await createPartner(first);
    const twin = asPartner(second, partner.partnerId, partner.clientId, partner.clientSecret);
    const create = (caller: typeof partner, i: number) =>
      caller.call("POST", "/v1/users", {
        body: { externalUserId: `raced-${i}` },
        headers: { "idempotency-key": `raced-key-${i}` },
      });
    const pairs = await Promise.all(
      Array.from({ length: 25 }, (_, i) => Promise.all([create(partner, i), create(twin, i)])),
    );
    for (const [i, pair] of pairs.entries()) {
      const answers = [];
      for (const [n, response] of pair.entries()) {
        const text = await response.text();
        if (response.status === 409) {
          assert.equal(JSON.parse(text).error.code, "IDEMPOTENCY_IN_PROGRESS");
          const again = await create(n === 0 ? partner : twin, i);
          assert.equal(again.status, 201);
          answers.push(await again.json());
        } else {
          assert.equal(response.status, 201, text);
          answers.push(JSON.parse(text));
        }
      }
      assert.deepEqual(answers[0], answers[1], "both callers read one answer");
      assert.equal(answers[0].created, true);
    }
    const rows = await first.deps.db.read.select().from(clients).where(eq(clients.partnerId, partner.partnerId));
    assert.equal(rows.length, 25);
    const announced = await first.deps.db.read.select().from(events).where(eq(events.eventType, "client.updated"));
    assert.equal(announced.filter((e) => e.partnerId === partner.partnerId).length, 25);
  } finally {
    await second.close();
    await first.close();
  }
});
