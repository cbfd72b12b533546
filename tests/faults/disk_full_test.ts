/**
 * The disk under the database fills up while the service (its own process)
 * takes writes: the data directory is a small tmpfs, filled by a balloon file.
 * Writes are refused with the documented 503 SERVICE_UNAVAILABLE (envelope,
 * pt-BR message, Retry-After, nothing internal), never a 500, and keep
 * nothing: a client exists exactly when its event and its stored answer do.
 * Reads go on and the process lives. Once space is back the same requests
 * succeed, and a restart opens the database as it was left.
 *
 * Mounting needs root; without it the test runs itself again inside a user
 * and mount namespace (`unshare --user --map-root-user --mount`), where it
 * may mount. If neither works it fails saying so.
 */
import assert from "node:assert/strict";
import { assertClientsWhole, assertStorageRefusal, startService } from "./_spawned_service.ts";

const IN_NAMESPACE = "FAULTS_DISK_FULL_IN_NAMESPACE";
const DISK = "16m";

async function run(command: string, args: string[]) {
  try {
    const output = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" }).output();
    return {
      ok: output.success,
      text: new TextDecoder().decode(output.stderr) + new TextDecoder().decode(output.stdout),
    };
  } catch (error) {
    return { ok: false, text: String(error) };
  }
}

/** Write zeros until the file system refuses: afterwards it has no byte left. */
async function inflateBalloon(path: string): Promise<void> {
  const file = await Deno.open(path, { write: true, create: true });
  try {
    for (const size of [1 << 20, 64 << 10, 4 << 10, 512, 1]) {
      const chunk = new Uint8Array(size);
      try {
        for (;;) await file.write(chunk);
      } catch (error) {
        if (!String(error).includes("No space left")) throw error;
      }
    }
  } finally {
    file.close();
  }
}

Deno.test("disk full: writes answer 503 and keep nothing, reads go on, and everything works again once space is back", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "svc-faults-disk-" });
  const mounted = await run("mount", ["-t", "tmpfs", "-o", `size=${DISK}`, "tmpfs", dir]);
  if (!mounted.ok) {
    await Deno.remove(dir);
    if (Deno.env.get(IN_NAMESPACE)) throw new Error(`Cannot mount a tmpfs even inside a namespace: ${mounted.text}`);
    // Not root (or no CAP_SYS_ADMIN here): the same test, inside namespaces of its own where it may mount.
    const self = new URL(import.meta.url).pathname;
    const again = await run("unshare", [
      "--user",
      "--map-root-user",
      "--mount",
      "env",
      `${IN_NAMESPACE}=1`,
      Deno.execPath(),
      "test",
      "-A",
      self,
    ]);
    // No test output at all: the namespaces could not be made (no unshare, or user namespaces disabled).
    if (!again.ok && !again.text.includes("running 1 test")) {
      throw new Error(
        `This test needs a small tmpfs for the data directory: mounting one needs root ` +
          `(mount: ${mounted.text.trim()}) or unprivileged user namespaces (unshare: ${again.text.trim()}).`,
      );
    }
    assert.ok(again.ok, `The test inside its own namespaces failed:\n${again.text}`);
    return;
  }

  const databaseUrl = `file:${dir}/service.db`;
  const balloon = `${dir}/balloon`;
  let svc = await startService(databaseUrl, { partnerId: "full" });
  const createUser = (externalUserId: string) =>
    svc.asPartner("POST", "/v1/users", { externalUserId }, `create-${externalUserId}`);
  const names = ["full-1", "full-2", "full-3", "full-4", "full-5", "full-6"];
  try {
    assert.equal((await createUser("ana")).status, 201);

    await t.step("with the disk full, writes are refused with 503 and reads answer", async () => {
      await inflateBalloon(balloon);
      const answers = [];
      // One at a time, then together: a lone write and a group commit both meet the full disk.
      for (const name of names.slice(0, 3)) answers.push(await createUser(name));
      answers.push(...await Promise.all(names.slice(3).map(createUser)));
      answers.push(await svc.asPartner("POST", "/v1/users/ana/suspend", { reason: "teste de disco cheio" }));
      answers.push(await svc.asOperator("PUT", "/operator/v1/providers/VENUE_A", { realExecution: true }));
      const refused = answers.filter((answer) => answer.status !== 201 && answer.status !== 200);
      refused.forEach((answer, i) => assertStorageRefusal(answer, `refused write ${i}`));
      assert.ok(refused.length >= names.length, `the full disk refused the writes: ${refused.length} refused`);

      for (const path of ["/v1/users/ana", "/v1/users?limit=50", "/v1/events?limit=50", "/v1/health"]) {
        const read = await svc.asPartner("GET", path);
        assert.equal(read.status, 200, `${path}: ${JSON.stringify(read.body)}`);
      }
      assert.equal((await svc.asPartner("GET", "/v1/users/ana")).body.status, "ACTIVE", "the suspension kept nothing");
    });

    await t.step("once space is back, the same requests with the same keys succeed", async () => {
      await Deno.remove(balloon);
      for (const name of names) {
        const answer = await createUser(name);
        assert.equal(answer.status, 201, JSON.stringify(answer.body));
        assert.equal(answer.body.created, true, "the refused request had kept nothing");
      }
      assert.equal((await svc.asPartner("POST", "/v1/users/ana/suspend", { reason: "teste" })).status, 200);
    });

    await t.step("the process lived through it and stops cleanly; a restart opens the database", async () => {
      assert.equal((await svc.stop()).code, 0);
      const stored = await assertClientsWhole(databaseUrl, "full");
      assert.deepEqual([...stored].toSorted(), ["ana", ...names]);
      svc = await startService(databaseUrl, { credential: svc.credential });
      const list = await svc.asPartner("GET", "/v1/users?limit=50");
      assert.equal(list.body.users.length, 1 + names.length);
      assert.equal((await createUser("after-restart")).status, 201);
    });
  } finally {
    try {
      assert.equal((await svc.stop()).code, 0);
    } finally {
      // The libsql package keeps a closed connection's files open until the process ends, and this
      // process read the database (assertClientsWhole): detach the mount now, freed when they close.
      const unmounted = await run("umount", ["--lazy", dir]);
      assert.ok(unmounted.ok, unmounted.text);
      await Deno.remove(dir, { recursive: true });
    }
  }
});
