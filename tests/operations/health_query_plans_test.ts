/**
 * Every query a health snapshot runs, as SQLite plans it: each table is
 * reached through an index or its primary key, never scanned whole, so a
 * poll costs the event loop the same however large the tables grow. The
 * snapshot is read once through a connection that records its statements;
 * each is then explained on the same database file.
 */
import assert from "node:assert/strict";
import type { Ctx } from "../../domain/context.ts";
import { readHealthSnapshot } from "../../domain/operations/health_snapshot.ts";
import { JOBS } from "../../jobs/registry.ts";
import { startTestEnv } from "../_helpers/env.ts";
import { recordingReader } from "../_helpers/query_plans.ts";

Deno.test("operator health: every query of the snapshot reads through an index, none scans a table", async () => {
  const env = await startTestEnv();
  const recording = recordingReader(env.databaseUrl);
  try {
    const ctx: Ctx = {
      ...env.deps,
      db: { ...env.deps.db, read: recording.read },
      actor: { kind: "operator" },
      requestId: "plans",
    };
    await readHealthSnapshot(ctx, JOBS);
    const count = recording.statements.length;
    assert.ok(count >= 2 * JOBS.length + 7, `the snapshot's queries were recorded (${count})`);

    const tables = await recording.tables();
    for (const { sql, plan } of await recording.plans()) {
      const scans = plan.filter((detail) => {
        const scanned = /^SCAN (\S+)/.exec(detail)?.[1];
        return scanned !== undefined && tables.has(scanned) && !/USING (COVERING )?INDEX/.test(detail);
      });
      assert.deepEqual(scans, [], `${sql}\n${plan.join("\n")}`);
    }
  } finally {
    recording.close();
    await env.close();
  }
});
