/**
 * One migration tested against rows an older schema held: a fresh libSQL
 * file migrated up to just before the migration whose SQL contains `marker`,
 * for the test to seed, then taken through that migration and the rest.
 */
import assert from "node:assert/strict";
import { type Client, createClient } from "@libsql/client";
import { readMigrationFiles } from "drizzle-orm/migrator";

export interface MigratedBefore {
  /** The database as it was before the marked migration; the caller closes it. */
  db: Client;
  /** Applies the marked migration and every migration after it. */
  migrateRest(): Promise<void>;
}

export async function migratedBefore(marker: string): Promise<MigratedBefore> {
  const migrations = readMigrationFiles({
    migrationsFolder: new URL("../../db/migrations", import.meta.url).pathname,
  });
  const at = migrations.findIndex((migration) => migration.sql.some((statement) => statement.includes(marker)));
  assert.ok(at > 0, `a migration after the first contains ${marker}`);
  const db = createClient({ url: `file:${await Deno.makeTempDir({ prefix: "svc-test-" })}/migrate.db` });
  const apply = async (from: number, to: number) => {
    for (const migration of migrations.slice(from, to)) {
      for (const statement of migration.sql) if (statement.trim()) await db.execute(statement);
    }
  };
  try {
    await apply(0, at);
  } catch (error) {
    db.close();
    throw error;
  }
  return { db, migrateRest: () => apply(at, migrations.length) };
}
