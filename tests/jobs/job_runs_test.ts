/**
 * Several instances (each its own connections and write queue, as separate
 * processes have) over one database file run each scheduled tick of a job
 * once: the instance whose claim of (job, slot) wins runs it, the others skip.
 * A run whose owner died is not run again for its slot, the next slot takes
 * over and a late finish of the dead owner writes nothing. Manual runs (the QA
 * route) are not held by scheduled runs but never overlap each other.
 */
import assert from "node:assert/strict";
import { and, eq, sql } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { jobRuns } from "../../db/schema.ts";
import { MINUTE_MS, wallClockNow } from "../../domain/clock.ts";
import type { ApiError } from "../../domain/errors.ts";
import {
  JOB_RUN_RETENTION_MS,
  JobRunClaim,
  manualLane,
  minuteSlot,
  runJobNow,
  type RunnableJob,
  runScheduledJob,
} from "../../domain/jobs/job_runs.ts";
import { startTestEnv, type TestEnv } from "../_helpers/env.ts";
import { expectJson, operator } from "../_helpers/http.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A job that takes `ms` and records when each of its runs started and ended. */
function timedJob(name: string, ms: number) {
  const runs: { start: number; end: number }[] = [];
  const job: RunnableJob = {
    name,
    async run() {
      const start = performance.now();
      await sleep(ms);
      runs.push({ start, end: performance.now() });
      return { runs: runs.length };
    },
  };
  return { job, runs };
}

async function instances(count: number): Promise<TestEnv[]> {
  const first = await startTestEnv();
  const others = await Promise.all(
    Array.from({ length: count - 1 }, () => startTestEnv({ databaseUrl: first.databaseUrl })),
  );
  return [first, ...others];
}

async function closeAll(envs: TestEnv[]) {
  for (const env of envs) await env.close();
}

function rowsOf(env: TestEnv, job: string) {
  return env.deps.db.read.select().from(jobRuns).where(eq(jobRuns.job, job)).orderBy(jobRuns.slot);
}

Deno.test("the same tick fired on three instances at once runs once and records its summary", async () => {
  const envs = await instances(3);
  try {
    const { job, runs } = timedJob("reconcile", 150);
    const slot = minuteSlot(wallClockNow());
    const outcomes = await Promise.all(envs.map((env) => runScheduledJob(env.deps, job, slot)));
    assert.equal(runs.length, 1, "exactly one instance ran the tick");
    assert.equal(outcomes.filter((o) => o.ran).length, 1);
    for (const outcome of outcomes) {
      if (!outcome.ran) assert.ok(["CLAIMED", "RUNNING"].includes(outcome.reason), outcome.reason);
    }
    const [row] = await rowsOf(envs[1], "reconcile");
    assert.equal(row.slot, slot);
    assert.notEqual(row.finishedAt, null);
    assert.deepEqual(row.summary, { runs: 1 });
    // A tick of the same slot arriving late (a slow instance) does not run it again.
    assert.deepEqual(await runScheduledJob(envs[2].deps, job, slot), { ran: false, slot, reason: "CLAIMED" });
    // Nor does a tick for an older slot: a newer run already did its work.
    const older = await runScheduledJob(envs[2].deps, job, slot - MINUTE_MS);
    assert.deepEqual(older, { ran: false, slot: slot - MINUTE_MS, reason: "SUPERSEDED" });
    // The next slot runs (once) wherever it is claimed first.
    const next = await Promise.all(envs.map((env) => runScheduledJob(env.deps, job, slot + MINUTE_MS)));
    assert.equal(next.filter((o) => o.ran).length, 1);
    assert.equal(runs.length, 2);
    assert.ok(
      envs.some((env) => env.logs.some((line) => line.includes('"level":"debug"') && line.includes("skipped"))),
    );
  } finally {
    await closeAll(envs);
  }
});

Deno.test("a long run keeps its lease: the next slot skips while it works instead of overlapping it", async () => {
  const envs = await instances(2);
  try {
    const { job, runs } = timedJob("period-close", 700);
    const slot = minuteSlot(wallClockNow());
    // A lease of 150 ms: only its renewals keep the 700 ms run live.
    const long = runScheduledJob(envs[0].deps, job, slot, 150);
    await sleep(400);
    const next = await runScheduledJob(envs[1].deps, job, slot + MINUTE_MS, 150);
    assert.deepEqual(next, { ran: false, slot: slot + MINUTE_MS, reason: "RUNNING" });
    const first = await long;
    assert.equal(first.ran && first.recorded, true);
    assert.equal(runs.length, 1);
  } finally {
    await closeAll(envs);
  }
});

Deno.test("a dead owner's slot is not run again; the next slot takes over and the late owner writes nothing", async () => {
  const envs = await instances(2);
  try {
    const { job, runs } = timedJob("billing-cycle", 10);
    const slot = minuteSlot(wallClockNow());
    const dead = await JobRunClaim.take(envs[0].deps.db, job.name, { slot }, 150);
    assert.ok(dead instanceof JobRunClaim);
    dead.stop(); // the process dies: nobody renews
    // While the lease lasts, the owner counts as alive.
    assert.deepEqual(await runScheduledJob(envs[1].deps, job, slot + MINUTE_MS, 150), {
      ran: false,
      slot: slot + MINUTE_MS,
      reason: "RUNNING",
    });
    await sleep(250);
    // Its lease ran out: its own slot is not run again...
    assert.deepEqual(await runScheduledJob(envs[1].deps, job, slot), { ran: false, slot, reason: "CLAIMED" });
    assert.equal(runs.length, 0);
    // ...the next one runs, and marks the dead run abandoned.
    const next = await runScheduledJob(envs[1].deps, job, slot + 2 * MINUTE_MS);
    assert.equal(next.ran, true);
    assert.equal(runs.length, 1);
    // The dead owner wakes up and finishes: fenced out, its record is not written over.
    assert.equal(await dead.finish({ late: 1 }), false);
    const rows = await rowsOf(envs[0], job.name);
    assert.deepEqual(rows.map((row) => row.slot), [slot, slot + 2 * MINUTE_MS]);
    assert.equal(rows[0].summary?.abandoned, "lease ran out");
    assert.notEqual(rows[0].finishedAt, null);
    assert.deepEqual(rows[1].summary, { runs: 1 });
  } finally {
    await closeAll(envs);
  }
});

Deno.test("manual runs are not held by a scheduled run and run one after another across instances", async () => {
  const envs = await instances(2);
  try {
    const { job, runs } = timedJob("reconcile", 200);
    // A scheduled run of this minute is live elsewhere: the manual runs do not wait for it.
    const scheduled = await JobRunClaim.take(envs[0].deps.db, job.name, { slot: minuteSlot(wallClockNow()) }, 30_000);
    assert.ok(scheduled instanceof JobRunClaim);
    const started = performance.now();
    const [a, b] = await Promise.all(envs.map((env) => runJobNow(env.deps, job)));
    const elapsed = performance.now() - started;
    assert.equal(runs.length, 2, "both callers got a run of their own");
    const [first, second] = [...runs].sort((x, y) => x.start - y.start);
    assert.ok(second.start >= first.end, "the second began after the first ended");
    assert.ok(elapsed < 2_000, `not held by the scheduled run (${Math.round(elapsed)} ms)`);
    assert.notEqual(a.slot, b.slot);
    assert.equal(await scheduled.finish({ runs: 0 }), true);
    const manual = await rowsOf(envs[1], manualLane(job.name));
    assert.equal(manual.length, 2);
    assert.ok(manual.every((row) => row.finishedAt !== null));
  } finally {
    await closeAll(envs);
  }
});

Deno.test("a manual run waits out a killed manual run's short lease, then runs", async () => {
  const envs = await instances(2);
  try {
    const { job, runs } = timedJob("protection-monitor", 10);
    const killed = await JobRunClaim.take(envs[0].deps.db, manualLane(job.name), { next: true }, 300);
    assert.ok(killed instanceof JobRunClaim);
    killed.stop();
    const started = performance.now();
    await runJobNow(envs[1].deps, job);
    const waited = performance.now() - started;
    assert.equal(runs.length, 1);
    assert.ok(waited >= 200 && waited < 2_000, `waited ${Math.round(waited)} ms`);
    // Still running elsewhere past the wait: a conflict, not an overlap.
    const live = await JobRunClaim.take(envs[0].deps.db, manualLane(job.name), { next: true }, 30_000);
    assert.ok(live instanceof JobRunClaim);
    await assert.rejects(runJobNow(envs[1].deps, job, { waitMs: 300 }), (error: ApiError) => {
      assert.equal(error.code, "STATE_CONFLICT");
      return true;
    });
    live.stop();
  } finally {
    await closeAll(envs);
  }
});

Deno.test("POST /operator/v1/jobs/:job/run runs even when this minute's scheduled run is recorded", async () => {
  const [env] = await instances(1);
  try {
    const expiry: RunnableJob = { name: "expiry", run: () => Promise.resolve({ scheduled: 1 }) };
    assert.equal((await runScheduledJob(env.deps, expiry)).ran, true);
    const answer = await expectJson(await operator(env, "POST", "/operator/v1/jobs/expiry/run"), 200);
    assert.equal(answer.job, "expiry");
    assert.equal(typeof answer.summary.idempotencyKeysPurged, "number");
    const [row] = await rowsOf(env, manualLane("expiry"));
    assert.deepEqual(row.summary, answer.summary);
  } finally {
    await env.close();
  }
});

Deno.test("old runs are pruned in bounded batches by the claims that win", async () => {
  const [env] = await instances(1);
  try {
    const wall = wallClockNow();
    const old = wall - JOB_RUN_RETENTION_MS - 10 * MINUTE_MS;
    await withTransaction(env.deps.db, (tx) =>
      tx.insert(jobRuns).values(Array.from({ length: 150 }, (_, i) => ({
        job: "payments",
        slot: old - (150 - i) * MINUTE_MS,
        owner: "old",
        leasedUntil: old,
        startedAt: old,
        finishedAt: old,
      }))));
    const { job } = timedJob("payments", 1);
    const count = async () =>
      (await env.deps.db.read.select({ n: sql<number>`count(*)` }).from(jobRuns)
        .where(and(eq(jobRuns.job, "payments"), eq(jobRuns.owner, "old"))))[0].n;
    await runScheduledJob(env.deps, job, minuteSlot(wall));
    assert.equal(await count(), 50, "one claim deletes one bounded batch");
    await runScheduledJob(env.deps, job, minuteSlot(wall) + MINUTE_MS);
    assert.equal(await count(), 0);
    assert.equal((await rowsOf(env, "payments")).length, 2, "recent runs are kept");
  } finally {
    await env.close();
  }
});
