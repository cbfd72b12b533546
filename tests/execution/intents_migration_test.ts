/**
 * Migration 0027 on intents written before issue 29's defect 3 was fixed: an
 * order sent again, or settled by a query, kept the error of an earlier send
 * beside the status the venue gave it. Those errors go; the errors of orders
 * that failed, and an entry's timeout, stay.
 */
import assert from "node:assert/strict";
import { migratedBefore, seedClient } from "../_helpers/migrations.ts";

Deno.test("migration 0027 clears the stale error of intents the venue filled, works or cancelled", async () => {
  const { db, migrateRest } = await migratedBefore("UPDATE `intents` SET `error_code` = NULL");
  try {
    await seedClient(db);
    const intent = (intentId: string, status: string, errorCode: string | null) =>
      db.execute({
        sql:
          "INSERT INTO intents (partner_id, intent_id, client_id, provider_id, type, opens_position, symbol, side, " +
          "order_type, quantity, reduce_only, client_order_id, status, error_code, error_message, created_at) " +
          "VALUES ('p', ?, 1, 'VENUE_A', 'CLOSE_POSITION', 0, 'BTCUSDT', 'SELL', 'MARKET', '0.003', 1, ?, ?, ?, ?, 0)",
        args: [intentId, `sv${intentId}`, status, errorCode, errorCode ? `mensagem de ${errorCode}` : null],
      });
    await intent("filled-after-not-at-venue", "FILLED", "NOT_AT_VENUE");
    await intent("filled-after-lost-answer", "FILLED", "PROVIDER_DOWN");
    await intent("filled-at-timeout", "FILLED", "ENTRY_TIMEOUT");
    await intent("working-after-resend", "ACCEPTED", "NOT_AT_VENUE");
    await intent("resent-in-flight", "SUBMITTING", "PROVIDER_CREDENTIAL_REJECTED");
    await intent("cancelled-after-lost-answer", "CANCELED", "PROVIDER_DOWN");
    await intent("timed-out", "CANCELED", "ENTRY_TIMEOUT");
    await intent("never-at-venue", "NOT_PLACED", "NOT_AT_VENUE");
    await intent("lost-answer", "UNCERTAIN", "PROVIDER_DOWN");
    await intent("refused", "REJECTED", "INSUFFICIENT_MARGIN");
    await intent("filled", "FILLED", null);

    await migrateRest();
    const rows = await db.execute("SELECT intent_id, status, error_code, error_message FROM intents");
    const after = Object.fromEntries(
      rows.rows.map((row) => [row.intent_id, [row.status, row.error_code, row.error_message !== null]]),
    );
    assert.deepEqual(after, {
      "filled-after-not-at-venue": ["FILLED", null, false],
      "filled-after-lost-answer": ["FILLED", null, false],
      "filled-at-timeout": ["FILLED", null, false],
      "working-after-resend": ["ACCEPTED", null, false],
      "resent-in-flight": ["SUBMITTING", null, false],
      "cancelled-after-lost-answer": ["CANCELED", null, false],
      "timed-out": ["CANCELED", "ENTRY_TIMEOUT", true],
      "never-at-venue": ["NOT_PLACED", "NOT_AT_VENUE", true],
      "lost-answer": ["UNCERTAIN", "PROVIDER_DOWN", true],
      "refused": ["REJECTED", "INSUFFICIENT_MARGIN", true],
      "filled": ["FILLED", null, false],
    });
  } finally {
    db.close();
  }
});
