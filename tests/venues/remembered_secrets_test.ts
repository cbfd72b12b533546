/**
 * The adapters' remembering secret opener, over the real secret box: a sealed
 * secret is opened once however often it is used, a secret sealed anew (a
 * reconnection, a rotation) or bound elsewhere is opened on its own, a failed
 * opening is tried again next time, and the oldest secret goes when it is full.
 */
import assert from "node:assert/strict";
import { createSecretBox } from "../../domain/secrets/secret_box.ts";
import { rememberingOpener } from "../../domain/venues/remembered_secrets.ts";
import type { SealedSecret, SecretOpener } from "../../venues/types.ts";

const MASTER_KEY = btoa(String.fromCharCode(...new Uint8Array(32).fill(7)));

/** The box's opener, counting its openings. */
async function countingBox() {
  const box = await createSecretBox(MASTER_KEY);
  const opened: string[] = [];
  const opener: SecretOpener = {
    open(secret) {
      opened.push(secret.sealed);
      return box.open(secret);
    },
  };
  return { box, opener, opened };
}

Deno.test("remembered secrets: one opening per sealed secret, a new seal or binding opened on its own", async () => {
  const { box, opener, opened } = await countingBox();
  const remembering = rememberingOpener(opener);
  const first = await box.seal("secret-one", "provider_accounts/acc_1/api_secret");
  assert.deepEqual(
    await Promise.all([remembering.open(first), remembering.open(first), remembering.open(first)]),
    ["secret-one", "secret-one", "secret-one"],
  );
  assert.equal(opened.length, 1);

  // The account reconnected: its row holds another sealed value, which is what gets used.
  const resealed = await box.seal("secret-two", "provider_accounts/acc_1/api_secret");
  assert.equal(await remembering.open(resealed), "secret-two");
  assert.equal(opened.length, 2);

  // The same ciphertext under another binding does not open from what was remembered: the box refuses it.
  const elsewhere: SealedSecret = { sealed: first.sealed, binding: "provider_accounts/acc_2/api_secret" };
  await assert.rejects(remembering.open(elsewhere));
  assert.equal(opened.length, 3);
});

Deno.test("remembered secrets: a failed opening is not kept, and the oldest goes when full", async () => {
  const { box, opener, opened } = await countingBox();
  let failNext = true;
  const flaky: SecretOpener = {
    open(secret) {
      if (failNext) {
        failNext = false;
        return Promise.reject(new Error("opening failed"));
      }
      return opener.open(secret);
    },
  };
  const remembering = rememberingOpener(flaky, 2);
  const [a, b, c] = await Promise.all(["a", "b", "c"].map((plain) => box.seal(plain, `row/${plain}/secret`)));
  await assert.rejects(remembering.open(a), /opening failed/);
  assert.equal(await remembering.open(a), "a");
  assert.equal(await remembering.open(b), "b");
  assert.equal(await remembering.open(c), "c");
  assert.equal(opened.length, 3);
  // Two kept: c pushed a out, b and c are still there.
  await remembering.open(b);
  await remembering.open(c);
  assert.equal(opened.length, 3);
  assert.equal(await remembering.open(a), "a");
  assert.equal(opened.length, 4);
});
