/**
 * Migration 0023 on payments written before issue 27's crediting rules: a
 * second transfer stored CONFIRMED for an obligation already settled becomes
 * REVIEW, and open instructions of obligations paid, cancelled or reduced
 * below them are superseded with the texts the service writes.
 */
import assert from "node:assert/strict";
import { supersededReason } from "../../domain/payments/superseded_instructions.ts";
import { migratedBefore, seedClient } from "../_helpers/migrations.ts";

Deno.test("migration 0023 holds second payments for review and supersedes instructions their obligations outgrew", async () => {
  const { db, migrateRest } = await migratedBefore("UPDATE `payments` SET `status` = 'REVIEW'");
  try {
    await seedClient(db);
    const obligation = (id: string, status: string) =>
      db.execute({
        sql: "INSERT INTO obligations (obligation_id, partner_id, client_id, provider_id, source, reference, " +
          "amount_micros, currency, status, due_at, grace_until, created_at) " +
          "VALUES (?, 'p', 1, 'VENUE_A', 'MONTHLY_PERFORMANCE_FEE', ?, 50000000, 'USDT', ?, 0, 0, 0)",
        args: [id, id, status],
      });
    await obligation("paid", "PAID");
    await obligation("cancelled", "CANCELLED");
    await obligation("reduced", "OPEN");
    await obligation("untouched", "OPEN");
    await db.execute(
      "INSERT INTO obligation_reductions (obligation_id, statement_id, amount_micros, created_at) " +
        "VALUES ('reduced', 's', 20000000, 0)",
    );
    let tag = 0;
    const payment = (id: string, obligationId: string, status: string, review: string | null, hash: string | null) =>
      db.execute({
        sql: "INSERT INTO payments (payment_id, partner_id, client_id, obligation_id, method, status, amount_micros, " +
          "network_id, token_address, token_decimals, token_amount, recipient, tx_hash, issued_at, issued_wall_at, " +
          "expires_at, review, overpaid_token_amount, updated_at) " +
          "VALUES (?, 'p', 1, ?, 'EVM_TRANSFER', ?, 50000000, 'arbitrum', '0xt', 6, ?, '0xr', ?, 0, 0, 1, ?, ?, 0)",
        args: [id, obligationId, status, String(50_000_000 + ++tag), hash, review, review ? "1" : null],
      });
    await payment("first", "paid", "CONFIRMED", null, "0x1");
    await payment("second", "paid", "CONFIRMED", "OBLIGATION_ALREADY_SETTLED", "0x2");
    await payment("overpaid", "untouched", "CONFIRMED", "OVERPAID", "0x3");
    await payment("open-paid", "paid", "PENDING", null, null);
    await payment("open-cancelled", "cancelled", "SUBMITTED", null, "0x4");
    await payment("open-reduced", "reduced", "PENDING", null, null);
    await payment("open-untouched", "untouched", "PENDING", null, null);
    await payment("expired-paid", "paid", "EXPIRED", null, null);

    await migrateRest();
    const rows = await db.execute("SELECT payment_id, status, failure_reason FROM payments ORDER BY payment_id");
    const after = Object.fromEntries(rows.rows.map((row) => [row.payment_id, [row.status, row.failure_reason]]));
    assert.deepEqual(after, {
      "first": ["CONFIRMED", null],
      "second": ["REVIEW", null],
      "overpaid": ["CONFIRMED", null],
      "open-paid": ["SUPERSEDED", supersededReason("PAID")],
      "open-cancelled": ["SUPERSEDED", supersededReason("CANCELLED")],
      "open-reduced": ["SUPERSEDED", supersededReason("REDUCED")],
      "open-untouched": ["PENDING", null],
      "expired-paid": ["EXPIRED", null],
    });
  } finally {
    db.close();
  }
});
