/**
 * Every query a health snapshot runs, as SQLite plans it: each table is
 * reached through an index or its primary key, never scanned whole, so a
 * poll costs the event loop the same however large the tables grow. The
 * snapshot is read once through a connection that records its statements;
 * each is then explained on the same database file.
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/sqlite-proxy";
import { clientConnection } from "../../db/client_connection.ts";
import type { SqlParam } from "../../db/connection.ts";
import * as schema from "../../db/schema.ts";
import type { Ctx } from "../../domain/context.ts";
import { readHealthSnapshot } from "../../domain/operations/health_snapshot.ts";
import { JOBS } from "../../jobs/registry.ts";
import { startTestEnv } from "../_helpers/env.ts";

Deno.test("operator health: every query of the snapshot reads through an index, none scans a table", async () => {
  const env = await startTestEnv();
  const client = createClient({ url: env.databaseUrl });
  try {
    const connection = clientConnection(client);
    const statements: { sql: string; params: SqlParam[] }[] = [];
    const recording = drizzle((sql, params, method) => {
      statements.push({ sql, params: params as SqlParam[] });
      return connection.query(sql, params as SqlParam[], method) as never;
    }, { schema });
    const ctx: Ctx = {
      ...env.deps,
      db: { ...env.deps.db, read: recording },
      actor: { kind: "operator" },
      requestId: "plans",
    };
    await readHealthSnapshot(ctx, JOBS);
    assert.ok(statements.length >= 2 * JOBS.length + 7, `the snapshot's queries were recorded (${statements.length})`);

    const tables = new Set(
      (await client.execute("SELECT name FROM sqlite_master WHERE type = 'table'")).rows.map((row) => String(row.name)),
    );
    for (const { sql, params } of statements) {
      const plan = (await client.execute({ sql: `EXPLAIN QUERY PLAN ${sql}`, args: params as never })).rows
        .map((row) => String(row.detail));
      const scans = plan.filter((detail) => {
        const scanned = /^SCAN (\S+)/.exec(detail)?.[1];
        return scanned !== undefined && tables.has(scanned) && !/USING (COVERING )?INDEX/.test(detail);
      });
      assert.deepEqual(scans, [], `${sql}\n${plan.join("\n")}`);
    }
  } finally {
    client.close();
    await env.close();
  }
});
