/**
 * Three service processes on one database, each scheduling every job with
 * Deno.cron: at a minute's tick every instance fires every job, and each job
 * runs on exactly one of them (the one whose claim of the slot won); the
 * others log the skip at debug.
 */
import assert from "node:assert/strict";
import { and, eq, like, not } from "drizzle-orm";
import { openDatabase } from "../../db/client.ts";
import { jobRuns } from "../../db/schema.ts";
import { MINUTE_MS } from "../../domain/clock.ts";
import { minuteSlot } from "../../domain/jobs/job_runs.ts";
import { JOBS } from "../../jobs/registry.ts";
import { Fleet } from "./fleet.ts";

const EVERY_MINUTE = JOBS.filter((job) => job.schedule === "* * * * *").map((job) => job.name);

Deno.test("three instances firing the same cron tick run each job once", async () => {
  const fleet = await Fleet.start({ instances: 3, env: { LOG_LEVEL: "debug" } });
  const db = await openDatabase(fleet.databaseUrl);
  try {
    // The next whole minute, then time for its runs (an empty database: each takes milliseconds).
    const slot = minuteSlot(Date.now()) + MINUTE_MS;
    const deadline = slot + 20_000;
    let rows: (typeof jobRuns.$inferSelect)[] = [];
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      rows = await db.read.select().from(jobRuns).where(eq(jobRuns.slot, slot));
      if (Date.now() > slot + 3_000 && EVERY_MINUTE.every((name) => rows.some((r) => r.job === name && r.finishedAt))) {
        break;
      }
    }
    assert.deepEqual(
      rows.map((row) => row.job).filter((name) => EVERY_MINUTE.includes(name)).sort(),
      [
        ...EVERY_MINUTE,
      ].sort(),
    );
    assert.ok(rows.every((row) => row.finishedAt !== null && row.summary !== null), JSON.stringify(rows));

    // Stopped one by one for their output (Fleet.stop, below, then finds them stopped).
    const outputs = await Promise.all(fleet.instances.map((service) => service.stop("SIGTERM")));
    const logs = outputs.flatMap(({ stderr }) => stderr.split("\n")).filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line));
    const recorded = await db.read.select().from(jobRuns).where(not(like(jobRuns.job, "manual:%")));
    for (const name of EVERY_MINUTE) {
      const ran = logs.filter((line) => line.message === `job ${name}` && line.level === "info").length;
      const runs = recorded.filter((row) => row.job === name).length;
      assert.equal(ran, runs, `${name}: one run logged per recorded run (a run never happens unclaimed)`);
      const skipped = logs.filter((line) =>
        line.level === "debug" && line.message === `job ${name} skipped at ${new Date(slot).toISOString()}`
      );
      assert.equal(skipped.length, 2, `${name}: the two other instances skipped the slot`);
    }
    const [one] = await db.read.select().from(jobRuns).where(and(eq(jobRuns.slot, slot), eq(jobRuns.job, "reconcile")));
    assert.equal(typeof one.summary?.accounts, "number");
  } finally {
    db.close();
    await fleet.stop();
  }
});
