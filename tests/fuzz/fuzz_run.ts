/**
 * One fuzz run: a service with a partner and two clients, then `requests`
 * generated requests spread over every documented operation, from `seed`.
 * Answers the statuses seen and every problem found.
 */
import fc from "fast-check";
import { OPERATOR_TOKEN, startTestEnv } from "../_helpers/env.ts";
import { createPartner, expectJson } from "../_helpers/http.ts";
import { digest, operationsOf, requestOf, send } from "./fuzz.ts";

export interface FuzzOutcome {
  requests: number;
  statuses: Map<number, number>;
  problems: string[];
  seconds: number;
}

export async function fuzzRun(options: { requests: number; seed: number; digestEvery?: number }): Promise<FuzzOutcome> {
  const env = await startTestEnv();
  const statuses = new Map<number, number>();
  const problems: string[] = [];
  const started = performance.now();
  try {
    const partner = await createPartner(env, {
      partnerId: "fuzz-partner",
      limits: { requestsPerMinute: 1_000_000, ordersPerMinute: 1_000_000 },
    });
    for (const user of ["ana", "bia"]) {
      await expectJson(
        await partner.call("POST", "/v1/users", {
          body: { externalUserId: user },
          headers: { "idempotency-key": `fuzz-${user}-0001` },
        }),
        201,
      );
    }
    const secrets = [partner.clientSecret, OPERATOR_TOKEN];
    const operations = await operationsOf(env);
    const perOperation = Math.ceil(options.requests / operations.length);
    let sent = 0;
    for (const [index, operation] of operations.entries()) {
      const requests = fc.sample(requestOf(operation, partner), { seed: options.seed + index, numRuns: perOperation });
      for (const request of requests) {
        if (sent >= options.requests) break;
        sent++;
        // A refused request must change nothing: checked on every request, or on a sample in long runs.
        const checked = sent % (options.digestEvery ?? 1) === 0;
        const before = checked ? await digest(env) : "";
        const verdict = await send(env, request, secrets);
        statuses.set(verdict.status, (statuses.get(verdict.status) ?? 0) + 1);
        if (verdict.problem) problems.push(verdict.problem);
        if (checked && verdict.status >= 400 && (await digest(env)) !== before) {
          problems.push(
            `a refused ${request.operation.method} ${request.path.slice(0, 100)} (${verdict.status}) changed state`,
          );
        }
      }
    }
    return { requests: sent, statuses, problems, seconds: (performance.now() - started) / 1000 };
  } finally {
    await env.close();
  }
}
