/**
 * The long fuzz run (`deno task fuzz`): FUZZ_REQUESTS (default 100,000)
 * hostile and valid requests over every documented operation and the hosted
 * pages' APIs, FUZZ_SEED (default the date), the database digest checked on
 * every FUZZ_DIGEST_EVERY-th request (default 10). Prints the statuses seen,
 * the valid bodies refused as invalid, and every problem; exits 1 on any.
 */
import { fuzzRun } from "./fuzz_run.ts";

const requests = Number(Deno.env.get("FUZZ_REQUESTS") ?? "100000");
const seed = Number(Deno.env.get("FUZZ_SEED") ?? new Date().toISOString().slice(0, 10).replaceAll("-", ""));
const digestEvery = Number(Deno.env.get("FUZZ_DIGEST_EVERY") ?? "10");
const outcome = await fuzzRun({ requests, seed, digestEvery });
const list = (statuses: Map<number, number>) =>
  [...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status} ×${n}`).join(", ");
console.log(
  `${outcome.requests.toLocaleString("en")} requests (seed ${seed}) in ${outcome.seconds.toFixed(1)} s; ` +
    `statuses: ${list(outcome.statuses)}`,
);
console.log(`hosted pages' APIs: ${list(outcome.hostedStatuses)}`);
const byEndpoint = new Map<string, string[]>();
for (const [key, n] of [...outcome.hostedCodes].sort()) {
  const [method, path, ...answer] = key.split(" ");
  byEndpoint.set(`${method} ${path}`, [
    ...byEndpoint.get(`${method} ${path}`) ?? [],
    `${answer.join(" ").trim()} ×${n}`,
  ]);
}
for (const [endpoint, answers] of byEndpoint) console.log(`  ${endpoint}: ${answers.join(", ")}`);
const refused = [...outcome.valid.refused].sort(([, a], [, b]) => b - a);
console.log(
  `valid requests: ${outcome.valid.sent}, answered VALIDATION_ERROR: ${refused.reduce((sum, [, n]) => sum + n, 0)}` +
    refused.slice(0, 12).map(([operation, n]) => `\n  ${operation} ×${n}`).join(""),
);
for (const problem of outcome.problems.slice(0, 50)) console.log(`PROBLEM ${problem}`);
console.log(`${outcome.problems.length} problems`);
if (outcome.problems.length) Deno.exit(1);
