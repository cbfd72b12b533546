/**
 * The long crash run (`deno task chaos`): CHAOS_KILLS (default 200) SIGKILLs
 * spread evenly over the steps, CHAOS_SEED (default the date). Prints the
 * kills per step and every invariant violation; exits 1 on any.
 */
import { chaosRun } from "./chaos_run.ts";

const kills = Number(Deno.env.get("CHAOS_KILLS") ?? "200");
const seed = Number(Deno.env.get("CHAOS_SEED") ?? new Date().toISOString().slice(0, 10).replaceAll("-", ""));
const outcome = await chaosRun({ kills, seed, log: (line) => console.log(line) });
console.log(`${outcome.kills} kills (seed ${seed}) in ${outcome.seconds.toFixed(0)} s`);
for (const [step, { kills, midStep }] of outcome.perStep) {
  console.log(`  ${step}: ${kills} kills, ${midStep} while the step was running`);
}
console.log(`work done: ${Object.entries(outcome.work).map(([what, n]) => `${what} ${n}`).join(", ")}`);
console.log(`${outcome.events} events in the feed, ${outcome.deliveredEvents} delivered to the partner's endpoint`);
console.log(
  `${outcome.recoveredAfterPushKeeper} rounds recovered only once the killed process's lease on the account pushes ran out`,
);
console.log(`${outcome.violations.length} violations`);
if (outcome.violations.length) Deno.exit(1);
