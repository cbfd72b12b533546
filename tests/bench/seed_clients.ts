/**
 * Many clients of one partner, written set-based (one INSERT … SELECT over a
 * recursive counter per batch, as period_close_bench.ts does): 100,000 take
 * about a second. Each client gets the `client.updated` event its creation
 * would have emitted, so the feed has as many events to page through.
 * Clients are `user-<i>` and their events `evt_seed_<i>`, i from 0, so a load
 * script can address any of them without asking; `createdAt` rises with i.
 */
import { sql } from "drizzle-orm";
import { type Database, withTransaction } from "../../db/client.ts";
import { clients, events } from "../../db/schema.ts";

/** Rows per transaction: bounded, so no single write holds the database for long. */
const BATCH = 20_000;

export async function seedClients(db: Database, partnerId: string, count: number, now: number): Promise<void> {
  // Bound numbers may arrive as reals: cast, or ids would read `user-0.0` and times be floats.
  const at = sql`CAST(${now} AS INTEGER)`;
  for (let first = 0; first < count; first += BATCH) {
    const last = Math.min(count, first + BATCH) - 1;
    await withTransaction(db, async (tx) => {
      await tx.run(sql`INSERT INTO ${clients} (partner_id, tenant_id, external_user_id, status, created_at, updated_at)
        WITH RECURSIVE n(i) AS (SELECT CAST(${first} AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i < ${last})
        SELECT ${partnerId}, ${partnerId}, 'user-' || i, 'ACTIVE', ${at} + i, ${at} + i FROM n`);
      await tx.run(sql`INSERT INTO ${events} (event_id, event_type, partner_id, tenant_id, external_user_id,
          occurred_at, data)
        WITH RECURSIVE n(i) AS (SELECT CAST(${first} AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i < ${last})
        SELECT 'evt_seed_' || i, 'client.updated', ${partnerId}, ${partnerId}, 'user-' || i, ${at} + i,
          '{"change":"CREATED","status":"ACTIVE"}' FROM n`);
    });
  }
}
