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

/** Partner `p` as the older schemas hold it (the columns every migration since the first keeps). */
export async function seedPartner(db: Client): Promise<void> {
  await db.execute(
    "INSERT INTO partners (partner_id, name, status, grants, envelope, builder_fee_tenths_bps, " +
      "return_url_origins, requests_per_minute, orders_per_minute, legacy_tenant_ids, created_at, updated_at) " +
      "VALUES ('p', 'p', 'ACTIVE', '{}', '{}', 0, '[]', 1, 1, '[]', 0, 0)",
  );
}

/** Partner `p` and its client 1, `ana`. */
export async function seedClient(db: Client): Promise<void> {
  await seedPartner(db);
  await db.execute(
    "INSERT INTO clients (id, partner_id, tenant_id, external_user_id, status, created_at, updated_at) " +
      "VALUES (1, 'p', 'p', 'ana', 'ACTIVE', 0, 0)",
  );
}
