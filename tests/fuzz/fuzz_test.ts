/** A short seeded fuzz run, so CI keeps the fuzzer alive (`deno task fuzz` runs the long one). */
import assert from "node:assert/strict";
import { fuzzRun } from "./fuzz_run.ts";

Deno.test("fuzz: 600 hostile and valid requests over every operation and the hosted pages' APIs, answered cleanly", async () => {
  const outcome = await fuzzRun({ requests: 600, seed: 20261123 });
  assert.deepEqual(outcome.problems.slice(0, 10), []);
  assert.ok(outcome.requests >= 600);
});
