/** The operator CLI as an operator runs it: a subprocess over a database file. */
import assert from "node:assert/strict";
import { bytesToBase64 } from "../../domain/secrets/secret_box.ts";

const OPERATOR = new URL("../../operator.ts", import.meta.url).pathname;
const key = () => bytesToBase64(crypto.getRandomValues(new Uint8Array(32)));

async function operator(args: string[], env: Record<string, string>) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", OPERATOR, ...args],
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: output.code,
    stdout: new TextDecoder().decode(output.stdout),
    stderr: new TextDecoder().decode(output.stderr),
  };
}

Deno.test("rotate-master-key reports each sealed column and refuses a malformed previous key", async () => {
  const dir = await Deno.makeTempDir({ prefix: "operator-cli-" });
  const env = { DATABASE_URL: `file:${dir}/service.db`, MASTER_KEY: key(), MASTER_KEYS_PREVIOUS: key() };
  const rotated = await operator(["rotate-master-key"], env);
  assert.equal(rotated.code, 0, rotated.stderr);
  assert.ok(Array.isArray(JSON.parse(rotated.stdout).rotation));
  assert.doesNotMatch(rotated.stdout + rotated.stderr, new RegExp(env.MASTER_KEY.replace(/[+/]/g, ".")));

  const refused = await operator(["rotate-master-key"], { ...env, MASTER_KEYS_PREVIOUS: "not-a-key" });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /MASTER_KEYS_PREVIOUS/);
  assert.doesNotMatch(refused.stderr, /not-a-key/);
});
