/**
 * Three instances started at the same moment on a fresh database: each
 * migration is applied once (one immediate transaction takes the write lock,
 * the others find it done), and the QA catalog is published once.
 */
import assert from "node:assert/strict";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { openDatabase } from "../../db/client.ts";
import { Fleet } from "./fleet.ts";

const MIGRATIONS = readMigrationFiles({ migrationsFolder: new URL("../../db/migrations", import.meta.url).pathname });

for (const database of ["file", "server"] as const) {
  Deno.test(`three instances starting together on a fresh ${database === "file" ? "libSQL file" : "libSQL server"} migrate it once`, async () => {
    const fleet = await Fleet.start({ instances: 3, database, together: true });
    try {
      const db = await openDatabase(fleet.databaseUrl);
      try {
        const applied = await db.read.values(`SELECT hash FROM __drizzle_migrations ORDER BY created_at`);
        assert.deepEqual(applied.map(([hash]) => hash), MIGRATIONS.map((migration) => migration.hash));
        const published = await db.read.values(`SELECT count(*) FROM strategies WHERE strategy_id = 'demo-trend'`);
        assert.deepEqual(published, [[1]]);
      } finally {
        db.close();
      }
      for (const index of [0, 1, 2]) {
        const answer = await fleet.fetch(index, "/v1/openapi.json");
        await answer.body?.cancel();
        assert.equal(answer.status, 200);
      }
    } finally {
      await fleet.stop();
    }
  });
}
