/**
 * Migration 0021 gives the portions confirmed before it the facts they
 * counted then, so that none is counted again by a portion derived after it
 * (a closing fill the venue reported late finds its funding taken).
 */
import assert from "node:assert/strict";
import { migratedBefore, seedClient } from "../_helpers/migrations.ts";

Deno.test("the portion fact refs migration gives each confirmed portion what its derivation counted then", async () => {
  const { db, migrateRest } = await migratedBefore("ALTER TABLE `performance_portions` ADD `fact_refs`");
  const fact = (position: string, ref: string, role: string, at: number, recordedAt: number) =>
    db.execute({
      sql: "INSERT INTO result_facts (client_id, provider_id, venue_ref, kind, symbol, realized_pnl, venue_fee, " +
        "fee_asset, builder_fee, funding, net, occurred_at, recorded_at, position_id, role) " +
        "VALUES (1, 'VENUE_A', ?, ?, 'BTCUSDT', '0', '0', 'USDT', '0', '0', '0', ?, ?, ?, ?)",
      args: [ref, role === "FUNDING" ? "FUNDING" : "FILL", at, recordedAt, position, role],
    });
  const portion = (position: string, ref: string, closedAt: number, confirmedAt: number | null) =>
    db.execute({
      sql: "INSERT INTO performance_portions (client_id, provider_id, venue_ref, position_id, closed_at, status, " +
        "realized_micros, venue_fees_micros, funding_micros, builder_fees_micros, net_micros, facts_count, " +
        "confirmed_at) VALUES (1, 'VENUE_A', ?, ?, ?, ?, 0, 0, 0, 0, 0, 0, ?)",
      args: [ref, position, closedAt, confirmedAt === null ? "PENDING" : "CONFIRMED", confirmedAt],
    });
  try {
    await seedClient(db);
    // p1: entry at 1, funding at 3, a close at 10 confirmed at 100; a close at 5 reported late (recorded at 200).
    await fact("p1", "E", "ENTRY", 1, 100);
    await fact("p1", "F", "FUNDING", 3, 100);
    await fact("p1", "A", "EXIT", 10, 100);
    await fact("p1", "B", "EXIT", 5, 200);
    await portion("p1", "A", 10, 100);
    await portion("p1", "B", 5, null);
    // p2: two closes at the same instant, confirmed together: the first by venue ref took the entry and funding.
    await fact("p2", "E2", "ENTRY", 1, 100);
    await fact("p2", "G", "FUNDING", 15, 100);
    await fact("p2", "X", "EXIT", 20, 100);
    await fact("p2", "Y", "EXIT", 20, 100);
    await portion("p2", "X", 20, 100);
    await portion("p2", "Y", 20, 100);
    await migrateRest();
    const rows = await db.execute("SELECT venue_ref, fact_refs FROM performance_portions ORDER BY venue_ref");
    assert.deepEqual(
      rows.rows.map((row) => [row.venue_ref, JSON.parse(String(row.fact_refs)).sort()]),
      [["A", ["A", "E", "F"]], ["B", []], ["X", ["E2", "G", "X"]], ["Y", ["Y"]]],
    );
  } finally {
    db.close();
  }
});
