/** The `GET /v1/users` cursor is opaque, tamper-evident and bound to the partner it was issued to (issue 9). */
import assert from "node:assert/strict";
import { withTransaction } from "../../db/client.ts";
import { clients } from "../../db/schema.ts";
import { START, startTestEnv } from "../_helpers/env.ts";
import { asPartner, createPartner, expectError, expectJson, type TestPartner } from "../_helpers/http.ts";

const INVALID_CURSOR = "O parâmetro 'cursor' é inválido.";
/** Internal row ids count across all partners; a large one makes a leaked id recognisable in a cursor's bytes. */
const FIRST_ROW_ID = 987_654_320;

async function createClient(partner: TestPartner, externalUserId: string) {
  await expectJson(
    await partner.call("POST", "/v1/users", {
      body: { externalUserId },
      headers: { "idempotency-key": `${partner.partnerId}-${externalUserId}` },
    }),
    201,
  );
}

async function listPage(partner: TestPartner, limit: number, cursor: string | null) {
  const query = `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
  const page = await expectJson(await partner.call("GET", `/v1/users?${query}`), 200);
  return {
    ids: page.users.map((user: { externalUserId: string }) => user.externalUserId) as string[],
    nextCursor: page.nextCursor as string | null,
  };
}

function decodeBase64Url(token: string): string {
  return atob(token.replaceAll("-", "+").replaceAll("_", "/"));
}

Deno.test("GET /v1/users cursors", async (t) => {
  const env = await startTestEnv();
  try {
    const acme = await createPartner(env, { partnerId: "acme" });
    const globex = await createPartner(env, { partnerId: "globex" });
    await withTransaction(env.deps.db, (tx) =>
      tx.insert(clients).values({
        id: FIRST_ROW_ID,
        partnerId: "globex",
        tenantId: "globex",
        externalUserId: "globex-0",
        status: "ACTIVE",
        createdAt: START,
        updatedAt: START,
      }));
    // Minutes apart, except user-3 and user-4 created in the same millisecond: the row id breaks that tie.
    const minutes = [0, 1, 2, 3, 3, 4, 5];
    for (const [i, minute] of minutes.entries()) {
      env.clock.freeze(START + minute * 60_000);
      await createClient(acme, `user-${i}`);
    }
    const rows = await env.deps.db.read.select().from(clients);

    const cursors: string[] = [];
    await t.step("walking the pages with limit returns every client exactly once, newest first", async () => {
      const seen: string[][] = [];
      let cursor: string | null = null;
      do {
        const page: { ids: string[]; nextCursor: string | null } = await listPage(acme, 3, cursor);
        seen.push(page.ids);
        cursor = page.nextCursor;
        if (cursor) cursors.push(cursor);
      } while (cursor);
      assert.deepEqual(seen, [["user-6", "user-5", "user-4"], ["user-3", "user-2", "user-1"], ["user-0"]]);
    });

    await t.step("a cursor reveals neither a creation time nor an internal row id", async () => {
      assert.ok(rows.every((row) => row.id >= FIRST_ROW_ID));
      for (const cursor of cursors) {
        assert.match(cursor, /^[A-Za-z0-9_-]{40,100}$/, "base64url, no padding, well under the 200 the route takes");
        const decoded = decodeBase64Url(cursor);
        for (const row of rows) {
          for (const leak of [String(row.createdAt), String(row.id)]) {
            assert.ok(!cursor.includes(leak) && !decoded.includes(leak), `the cursor reveals ${leak}`);
          }
        }
      }
      // Sealed afresh each time: equal positions do not give equal cursors, yet both lead to the same page.
      const again = (await listPage(acme, 3, null)).nextCursor!;
      assert.notEqual(again, cursors[0]);
      assert.deepEqual((await listPage(acme, 3, again)).ids, (await listPage(acme, 3, cursors[0])).ids);
    });

    await t.step("a tampered, truncated or forged cursor answers 400 VALIDATION_ERROR", async () => {
      const [cursor] = cursors;
      // Not the last character: its low bits are padding that base64 decoders ignore.
      const flipped = [0, 20, cursor.length - 6].map((at) =>
        cursor.slice(0, at) + (cursor[at] === "A" ? "B" : "A") + cursor.slice(at + 1)
      );
      const [lastRow] = rows.toSorted((a, b) => b.id - a.id);
      const forged = [
        "not-a-cursor",
        btoa(`${lastRow.createdAt}.${lastRow.id}`), // the former, transparent encoding
        cursor.replaceAll("-", "+").replaceAll("_", "/") + "==", // the same bytes in another alphabet
      ];
      for (const bad of [...flipped, cursor.slice(0, -2), `${cursor}A`, ...forged]) {
        const body = await expectError(
          await acme.call("GET", `/v1/users?cursor=${encodeURIComponent(bad)}`),
          400,
          "VALIDATION_ERROR",
        );
        assert.equal(body.error.message, INVALID_CURSOR, bad);
      }
    });

    await t.step("another partner's cursor answers 400 VALIDATION_ERROR", async () => {
      const body = await expectError(
        await globex.call("GET", `/v1/users?cursor=${encodeURIComponent(cursors[0])}`),
        400,
        "VALIDATION_ERROR",
      );
      assert.equal(body.error.message, INVALID_CURSOR);
    });
  } finally {
    await env.close();
  }
});

Deno.test("GET /v1/users accepts a cursor issued before a master-key rotation while the old key is configured", async () => {
  const before = await startTestEnv();
  const partner = await createPartner(before, { partnerId: "acme" });
  let cursor: string;
  try {
    for (const id of ["user-0", "user-1", "user-2"]) await createClient(partner, id);
    cursor = (await listPage(partner, 2, null)).nextCursor!;
  } finally {
    await before.close();
  }
  const oldKey = before.deps.config.masterKey!;
  const newKey = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
  const restartWith = (env: Record<string, string>) =>
    startTestEnv({ databaseUrl: before.databaseUrl, env: { MASTER_KEY: newKey, ...env } });

  const during = await restartWith({ MASTER_KEYS_PREVIOUS: oldKey });
  try {
    const again = asPartner(during, "acme", partner.clientId, partner.clientSecret);
    assert.deepEqual((await listPage(again, 2, cursor)).ids, ["user-0"]);
  } finally {
    await during.close();
  }

  const after = await restartWith({});
  try {
    const again = asPartner(after, "acme", partner.clientId, partner.clientSecret);
    await expectError(
      await again.call("GET", `/v1/users?cursor=${encodeURIComponent(cursor)}`),
      400,
      "VALIDATION_ERROR",
    );
  } finally {
    await after.close();
  }
});
