import assert from "node:assert/strict";
import { sql } from "drizzle-orm";
import { ConfigError, parseConfig } from "../../config.ts";
import { openDatabase, withTransaction } from "../../db/client.ts";
import { rotateMasterKey } from "../../domain/secrets/rotate_master_key.ts";
import { bindingOf, type SealedColumn } from "../../domain/secrets/sealed_columns.ts";
import { base64ToBytes, bytesToBase64, createSecretBox, secretBinding } from "../../domain/secrets/secret_box.ts";

const newKey = () => bytesToBase64(crypto.getRandomValues(new Uint8Array(32)));

Deno.test("a sealed secret opens only under the binding of the row and purpose it was sealed for", async () => {
  const box = await createSecretBox(newKey());
  const alice = secretBinding("accounts", "acc_alice", "api_secret");
  const sealed = await box.seal("alice's venue secret", alice);
  assert.equal(await box.open(sealed), "alice's venue secret");
  assert.doesNotMatch(sealed.sealed, /alice/);

  // Copied into another row, or into another column of the same row, it does not open.
  await assert.rejects(
    box.open({ sealed: sealed.sealed, binding: secretBinding("accounts", "acc_bob", "api_secret") }),
  );
  await assert.rejects(box.open({ sealed: sealed.sealed, binding: secretBinding("accounts", "acc_alice", "webhook") }));
  // Tampering with any part fails, and so does a ciphertext in the unbound v1 form.
  const [version, keyId, iv, cipher] = sealed.sealed.split(".");
  const flipped = `${cipher.slice(0, -3)}${cipher.at(-3) === "A" ? "B" : "A"}${cipher.slice(-2)}`;
  await assert.rejects(box.open({ sealed: [version, keyId, iv, flipped].join("."), binding: alice }));
  await assert.rejects(box.open({ sealed: `v1.${iv}.${cipher}`, binding: alice }), /unknown format/);
  await assert.rejects(box.seal("x", ""), /binding/);
});

Deno.test("a new master key opens what the previous one sealed until a rotation re-seals it", async () => {
  const oldKey = newKey();
  const currentKey = newKey();
  const before = await createSecretBox(oldKey);
  const during = await createSecretBox(currentKey, [oldKey]);
  const after = await createSecretBox(currentKey);
  const binding = secretBinding("accounts", "acc_1", "api_secret");
  const old = await before.seal("s3cret", binding);

  assert.equal(during.isStale(old.sealed), true);
  assert.equal(await during.open(old), "s3cret");
  await assert.rejects(after.open(old), /does not hold/);
  const fresh = await during.seal("s3cret", binding);
  assert.equal(during.isStale(fresh.sealed), false);
  assert.equal(await after.open(fresh), "s3cret", "new seals use the current key");
});

Deno.test("rotate-master-key re-seals every stale row once, even run twice at once, and leaves what it cannot open", async () => {
  const dir = await Deno.makeTempDir({ prefix: "secret-box-" });
  const db = await openDatabase(`file:${dir}/service.db`);
  try {
    const column: SealedColumn = {
      table: "test_vault",
      idColumn: "id",
      column: "sealed_secret",
      purpose: "api_secret",
    };
    await withTransaction(db, (tx) => tx.run("CREATE TABLE test_vault (id text PRIMARY KEY, sealed_secret text)"));
    const oldKey = newKey();
    const currentKey = newKey();
    const before = await createSecretBox(oldKey);
    const ids = Array.from({ length: 450 }, (_, i) => `row_${String(i).padStart(4, "0")}`);
    const sealedRows = await Promise.all(
      ids.map(async (id) => [id, (await before.seal(`secret of ${id}`, bindingOf(column, id))).sealed] as const),
    );
    // A row carrying a ciphertext copied from another row, and a row with no secret.
    const moved = ["row_moved", sealedRows[0][1]] as const;
    await withTransaction(db, async (tx) => {
      for (const [id, sealed] of [...sealedRows, moved]) {
        await tx.run(sql`INSERT INTO test_vault VALUES (${id}, ${sealed})`);
      }
      await tx.run(sql`INSERT INTO test_vault VALUES ('row_empty', NULL)`);
    });

    const during = await createSecretBox(currentKey, [oldKey]);
    // Two operators run it at once: the compare-and-set lets exactly one write each row.
    const [[first], [second]] = await Promise.all([
      rotateMasterKey({ db, secrets: during }, [column]),
      rotateMasterKey({ db, secrets: during }, [column]),
    ]);
    assert.equal(first.resealed + second.resealed, 450);
    assert.ok(first.changedMeanwhile + second.changedMeanwhile > 0, "the runs overlapped");
    assert.equal(first.unopenable, 1);

    const after = await createSecretBox(currentKey);
    const stored = await db.read.values<[string, string | null]>(sql`SELECT id, sealed_secret FROM test_vault`);
    for (const [id, sealed] of stored) {
      if (id === "row_moved") assert.equal(sealed, moved[1], "what could not be opened is left as it was");
      else if (id === "row_empty") assert.equal(sealed, null);
      else assert.equal(await after.open({ sealed: sealed!, binding: bindingOf(column, id) }), `secret of ${id}`);
    }
    const [again] = await rotateMasterKey({ db, secrets: during }, [column]);
    assert.deepEqual(again, { column: "test_vault.sealed_secret", resealed: 0, changedMeanwhile: 0, unopenable: 1 });
  } finally {
    db.close();
  }
});

Deno.test("MASTER_KEYS_PREVIOUS takes a comma list of 32-byte keys and refuses anything else", () => {
  const [a, b] = [newKey(), newKey()];
  assert.deepEqual(parseConfig({ MASTER_KEYS_PREVIOUS: `${a}, ${b}` }).previousMasterKeys, [a, b]);
  assert.deepEqual(parseConfig({}).previousMasterKeys, []);
  assert.throws(() => parseConfig({ MASTER_KEYS_PREVIOUS: `${a},short` }), ConfigError);
});

Deno.test("a token opens under its binding with the current or a previous master key, and otherwise is null", async () => {
  const [oldKey, currentKey] = [newKey(), newKey()];
  const before = await createSecretBox(oldKey);
  const during = await createSecretBox(currentKey, [newKey(), oldKey]);
  const after = await createSecretBox(currentKey);
  const token = await before.sealToken("1763856000000.42", "clients-list-cursor/acme");

  assert.equal(await during.openToken(token, "clients-list-cursor/acme"), "1763856000000.42");
  assert.equal(await after.openToken(token, "clients-list-cursor/acme"), null, "a dropped key's tokens stop opening");
  assert.equal(await before.openToken(token, "clients-list-cursor/globex"), null);
  assert.equal(await after.openToken(await during.sealToken("x", "b"), "b"), "x", "new tokens use the current key");
  for (
    const bad of [
      "",
      "!!!",
      token.slice(0, 20),
      `${token.slice(0, 20)}${token[20] === "A" ? "B" : "A"}${token.slice(21)}`,
    ]
  ) {
    assert.equal(await before.openToken(bad, "clients-list-cursor/acme"), null, bad);
  }
});

Deno.test("a token never opens as a sealed secret, nor a sealed secret as a token", async () => {
  const box = await createSecretBox(newKey());
  const binding = secretBinding("accounts", "acc_1", "api_secret");
  // The associated data a sealed secret uses, so that only the key can tell the two apart.
  const sameAssociatedData = `v2\0${binding}`;
  const sealed = await box.seal("s3cret", binding);
  const [version, keyId, iv, cipher] = sealed.sealed.split(".");
  const toBase64Url = (base64: string) => base64.replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
  assert.equal(await box.openToken(toBase64Url(iv + cipher), sameAssociatedData), null);

  const token = await box.sealToken("s3cret", sameAssociatedData);
  const bytes = base64ToBytes(token.replaceAll("-", "+").replaceAll("_", "/") + "=".repeat(-token.length & 3));
  const asSealed = [version, keyId, bytesToBase64(bytes.subarray(0, 12)), bytesToBase64(bytes.subarray(12))].join(".");
  await assert.rejects(box.open({ sealed: asSealed, binding }));
});

Deno.test("a token sealed through WebCrypto, as cursors were before, still opens", async () => {
  const masterKey = newKey();
  const material = await crypto.subtle.importKey("raw", base64ToBytes(masterKey), "HKDF", false, ["deriveKey"]);
  const key = await crypto.subtle.deriveKey(
    {
      name: "HKDF",
      hash: "SHA-256",
      salt: new TextEncoder().encode("opaque-token salt v1"),
      info: new TextEncoder().encode("opaque-token v1"),
    },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt"],
  );
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const binding = "clients-list-cursor/acme";
  const cipher = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(binding) },
      key,
      new TextEncoder().encode("1763856000000.42"),
    ),
  );
  const token = btoa(String.fromCharCode(...iv, ...cipher)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
  const box = await createSecretBox(masterKey);
  assert.equal(await box.openToken(token, binding), "1763856000000.42");
  assert.equal(await box.openToken(token, "clients-list-cursor/globex"), null);
});

Deno.test("a secret sealed through WebCrypto, as before, still opens", async () => {
  const masterKey = newKey();
  const raw = base64ToBytes(masterKey);
  const label = new TextEncoder().encode("secret-box key id\0");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array([...label, ...raw])));
  const keyId = bytesToBase64(digest.subarray(0, 9)).replaceAll("+", "-").replaceAll("/", "_");
  const key = await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt"]);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const binding = secretBinding("accounts", "acc_alice", "api_secret");
  const cipher = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(`v2\0${binding}`) },
      key,
      new TextEncoder().encode("alice's venue secret"),
    ),
  );
  const sealed = ["v2", keyId, bytesToBase64(iv), bytesToBase64(cipher)].join(".");
  const box = await createSecretBox(masterKey);
  assert.equal(await box.open({ sealed, binding }), "alice's venue secret");
  assert.equal(box.isStale(sealed), false);
});
