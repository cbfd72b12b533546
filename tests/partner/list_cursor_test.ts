/** The `GET /v1/users` cursor is opaque, tamper-evident and bound to the partner it was issued to (issue 9). */
import assert from "node:assert/strict";
import { clients } from "../../db/schema.ts";
import { bytesToBase64, createSecretBox } from "../../domain/secrets/secret_box.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectError, expectJson, type TestPartner } from "../_helpers/http.ts";

async function createClients(partner: TestPartner, count: number) {
  for (let i = 0; i < count; i++) {
    await expectJson(
      await partner.call("POST", "/v1/users", {
        body: { externalUserId: `user-${i}` },
        headers: { "idempotency-key": `${partner.partnerId}-user-${i}` },
      }),
      201,
    );
  }
}

Deno.test("list cursors reveal nothing, walk every client once, and refuse tampering and other partners", async () => {
  const env = await startTestEnv();
  try {
    const acme = await createPartner(env, { partnerId: "acme" });
    const globex = await createPartner(env, { partnerId: "globex" });
    await createClients(globex, 3); // internal row numbers are counted across partners
    await createClients(acme, 7);

    const seen: string[] = [];
    const cursors: string[] = [];
    let cursor: string | null = null;
    do {
      const path: string = `/v1/users?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const page = await expectJson(await acme.call("GET", path), 200);
      seen.push(...page.users.map((user: { externalUserId: string }) => user.externalUserId));
      cursor = page.nextCursor;
      if (cursor) cursors.push(cursor);
    } while (cursor);
    assert.deepEqual(seen, ["user-6", "user-5", "user-4", "user-3", "user-2", "user-1", "user-0"]);

    const rows = await env.deps.db.read.select().from(clients);
    for (const token of cursors) {
      assert.match(token, /^[A-Za-z0-9_-]{40,100}$/);
      const decoded = atob(token.replaceAll("-", "+").replaceAll("_", "/"));
      for (const row of rows) {
        for (const leak of [String(row.createdAt), `${row.createdAt}.${row.id}`]) {
          assert.ok(!token.includes(leak) && !decoded.includes(leak), `the cursor reveals ${leak}`);
        }
      }
    }
    const [first] = cursors;
    const flipped = first.slice(0, 20) + (first[20] === "A" ? "B" : "A") + first.slice(21);
    for (const bad of [flipped, first.slice(0, -2), "not-a-cursor", btoa("1700000000000.5")]) {
      await expectError(
        await acme.call("GET", `/v1/users?cursor=${encodeURIComponent(bad)}`),
        400,
        "VALIDATION_ERROR",
      );
    }
    await expectError(await globex.call("GET", `/v1/users?cursor=${first}`), 400, "VALIDATION_ERROR");
  } finally {
    await env.close();
  }
});

Deno.test("a token sealed before a master-key rotation opens while the old key is configured", async () => {
  const key = () => bytesToBase64(crypto.getRandomValues(new Uint8Array(32)));
  const [oldKey, newKey] = [key(), key()];
  const token = await (await createSecretBox(oldKey)).tokens.seal("payload", "binding");
  assert.equal(await (await createSecretBox(newKey, [oldKey])).tokens.open(token, "binding"), "payload");
  assert.equal(await (await createSecretBox(newKey)).tokens.open(token, "binding"), null);
  assert.equal(await (await createSecretBox(oldKey)).tokens.open(token, "other binding"), null);
  // A token is not a sealed secret, nor the reverse.
  const box = await createSecretBox(oldKey);
  const sealed = await box.seal("payload", "binding");
  assert.equal(await box.tokens.open(sealed.sealed, "binding"), null);
  await assert.rejects(box.open({ sealed: token, binding: "binding" }));
});
