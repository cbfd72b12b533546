/**
 * The ledger model in the suite: LEDGER_CASES seeded cases (200 by default,
 * a few seconds; `deno task ledger` runs 20,000), each a random interleaving
 * checked after every step (ledger_model.ts, ledger_checks.ts). A failure
 * prints its seed and the shrunk case to replay.
 */
import fc from "fast-check";
import type { TestEnv } from "../_helpers/env.ts";
import { caseArbitrary, runCase, tally } from "./ledger_model.ts";
import { startPayingEnv, startPaymentChain } from "./ledger_payments.ts";

const CASES = Number(Deno.env.get("LEDGER_CASES") ?? 200);
const CASES_PER_DATABASE = 25;
const SEED = Number(Deno.env.get("LEDGER_SEED") ?? 20261126);

Deno.test(`ledger model: ${CASES} random interleavings of facts, closes and payments keep every cent counted once`, async () => {
  // A fresh database every few cases: the period close visits every partner, so one file for thousands of
  // cases would make each close slower than the last.
  const payments = await startPaymentChain();
  let env: TestEnv | null = await startPayingEnv(payments);
  let run = 0;
  const started = performance.now();
  try {
    await fc.assert(
      fc.asyncProperty(caseArbitrary, async (ledgerCase) => {
        if (++run % CASES_PER_DATABASE === 0) {
          // Closed once, whatever its close finds (it checks the log for the secrets the cases used).
          const done: TestEnv = env!;
          env = null;
          await done.close();
          env = await startPayingEnv(payments);
        }
        await runCase(env!, payments, ledgerCase);
      }),
      {
        numRuns: CASES,
        seed: SEED,
        endOnFailure: CASES > 1_000,
      },
    );
  } finally {
    console.log(Object.entries(tally).sort().map(([what, n]) => `${what}: ${n}`).join(", "));
    console.log(
      `ledger model: ${CASES} cases (seed ${SEED}) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    await env?.close();
    await payments.chain.stop();
  }
});
