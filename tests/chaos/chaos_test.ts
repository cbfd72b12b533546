/** A short seeded crash run, one kill in every step, so CI keeps the harness alive (`deno task chaos` runs 200). */
import assert from "node:assert/strict";
import { chaosRun } from "./chaos_run.ts";
import { STEPS } from "./chaos_steps.ts";

Deno.test("chaos: a SIGKILL in each step of the product breaks no invariant after restart", async () => {
  const outcome = await chaosRun({ kills: STEPS.length, seed: 20261123 });
  assert.deepEqual(outcome.violations.slice(0, 10), []);
  assert.equal([...outcome.perStep.values()].every(({ kills }) => kills === 1), true);
  assert.ok(outcome.work["entries sent"] > 0 && outcome.work.connections > 0, JSON.stringify(outcome.work));
});
