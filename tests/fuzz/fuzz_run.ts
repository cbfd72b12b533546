/**
 * One fuzz run: a service with its fuzz world (fuzz_world.ts), then
 * `requests` generated requests spread over every documented operation and
 * the hosted pages' APIs, from `seed`. Answers the statuses seen, the valid
 * bodies the service still refused as invalid, and every problem found.
 */
import fc from "fast-check";
import { startTestEnv } from "../_helpers/env.ts";
import {
  allowanceOf,
  changedBeyond,
  digest,
  echoIn,
  type FuzzRequest,
  operationsOf,
  requestOf,
  send,
  whereOf,
} from "./fuzz.ts";
import { createWorld } from "./fuzz_world.ts";
import { HOSTED_ENDPOINTS, hostedCases, resolveHosted } from "./hosted.ts";

export interface FuzzOutcome {
  requests: number;
  statuses: Map<number, number>;
  /** The same, for the hosted pages' APIs alone, and per endpoint, status and error code. */
  hostedStatuses: Map<number, number>;
  hostedCodes: Map<string, number>;
  /** Requests whose every value the schema accepts, and those of them answered VALIDATION_ERROR, per operation. */
  valid: { sent: number; refused: Map<string, number> };
  problems: string[];
  seconds: number;
}

function codeOf(text: string): string {
  try {
    return JSON.parse(text).error?.code ?? "";
  } catch {
    return "";
  }
}

type Prepared = { request: FuzzRequest; learn?(status: number, text: string): void };

/** Requests per hosted endpoint, relative to one documented operation: the pages' flows have more states to reach. */
const HOSTED_WEIGHT = 3;

export async function fuzzRun(options: { requests: number; seed: number; digestEvery?: number }): Promise<FuzzOutcome> {
  // The venues' request-weight budgets run on real time: at a fuzzer's pace they would soon answer every venue
  // call PROVIDER_DOWN (the request never sent), which tests the budget, not the input. Lifted here.
  const env = await startTestEnv({
    env: { VENUE_A_IP_WEIGHT_PER_MINUTE: "100000000", VENUE_B_IP_WEIGHT_PER_MINUTE: "100000000" },
  });
  const outcome: FuzzOutcome = {
    requests: 0,
    statuses: new Map(),
    hostedStatuses: new Map(),
    hostedCodes: new Map(),
    valid: { sent: 0, refused: new Map() },
    problems: [],
    seconds: 0,
  };
  const started = performance.now();
  const count = (map: Map<number | string, number>, key: number | string) => map.set(key, (map.get(key) ?? 0) + 1);
  try {
    const world = await createWorld(env);
    const operations = await operationsOf(env);
    const documented = (api: string) =>
      operations.filter((op) => op.api === api).map((op) => ({
        weight: 1,
        arbitrary: requestOf(op, world.partner, world.known).map((request) => (): Promise<Prepared> =>
          Promise.resolve({ request })
        ),
      }));
    // The pages' APIs run before the operator's operations, which may suspend or revoke the world's partner.
    const units = [
      ...documented("partner"),
      {
        weight: HOSTED_ENDPOINTS * HOSTED_WEIGHT,
        arbitrary: hostedCases().map((c) => (): Promise<Prepared> => resolveHosted(world, c)),
      },
      ...documented("operator"),
    ];
    const perUnit = Math.ceil(options.requests / units.reduce((sum, unit) => sum + unit.weight, 0));
    for (const [index, unit] of units.entries()) {
      const prepared = fc.sample(unit.arbitrary, { seed: options.seed + index, numRuns: unit.weight * perUnit });
      for (const prepare of prepared) {
        if (outcome.requests >= options.requests) break;
        outcome.requests++;
        const { request, learn } = await prepare();
        const hosted = request.operation.api === "hosted";
        // A refused request must change nothing: checked on every request, or on a sample in long runs.
        const checked = outcome.requests % (options.digestEvery ?? 1) === 0;
        const before = checked ? await digest(env, hosted) : null;
        const verdict = await send(env, request, world.secrets());
        count(outcome.statuses, verdict.status);
        if (hosted) {
          count(outcome.hostedStatuses, verdict.status);
          count(
            outcome.hostedCodes,
            `${request.operation.method} ${request.path} ${verdict.status} ${codeOf(verdict.text)}`,
          );
        }
        let problem = verdict.problem;
        if (verdict.status < 300 && request.operation.method !== "GET") {
          await world.refreshSealed();
          // A secret the request itself created (an agent key) must not come back either; shown-once
          // credentials of the partner and operator APIs are their answers' purpose.
          if (hosted) problem ??= echoIn(verdict.text, world.secrets(), whereOf(request));
        }
        learn?.(verdict.status, verdict.text);
        if (request.valid) {
          outcome.valid.sent++;
          if (verdict.status === 400 && verdict.text.includes('"VALIDATION_ERROR"')) {
            count(outcome.valid.refused, `${request.operation.method} ${request.operation.path}`);
          }
        }
        if (problem) outcome.problems.push(problem);
        if (before && verdict.status >= 400) {
          const changed = changedBeyond(before, await digest(env, hosted), allowanceOf(verdict.text));
          if (changed.length) {
            outcome.problems.push(
              `a refused ${whereOf(request)} (${verdict.status}: ${verdict.text.slice(0, 120)}) changed ${changed}`,
            );
          }
        }
      }
    }
    outcome.seconds = (performance.now() - started) / 1000;
    return outcome;
  } finally {
    await env.close();
  }
}
