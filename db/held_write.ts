/**
 * A write whose answer nobody reads, held to travel with its transaction's
 * next statement.
 *
 * On a libSQL server every statement a unit awaits costs a network round
 * trip. A write whose answer the unit never reads need not be awaited on its
 * own: `writeWithNext` hands it to the connection (`runWithNext`, remote.ts),
 * which sends it in one request with the transaction's next statement (or its
 * COMMIT), in a chain where each step runs only if the one before succeeded.
 * On the embedded engine (no `runWithNext`) it runs and is awaited, exactly
 * as a plain `query.run(values)`: the order of effects is the same.
 *
 * Contract: only for writes whose failure can only mean the storage failed,
 * never one whose refusal is an answer the caller handles. Plain INSERTs of
 * generated ids and UPDATEs or upserts whose changed-row count nobody reads
 * fit; an INSERT whose UNIQUE conflict means "already exists", or whose
 * RETURNING row is read (an idempotent answer's), does not. Both engines
 * fail closed, nothing commits half: embedded, the failure is the unit's own
 * (it rejects and rolls back alone); on a server it surfaces at the next
 * statement, whichever unit of the group sent it, and breaks the whole
 * transaction, so every unit of its group is refused and nothing of it
 * commits.
 */
import { fillPlaceholders } from "drizzle-orm";
import type { Tx } from "./client.ts";
import { type SqlParam, TransactionEnded, writerConnectionOf } from "./connection.ts";

/** A drizzle query prepared once (`preparedFor`), as its `prepare()` gives it. */
export interface PreparedWrite {
  getQuery(): { sql: string; params: unknown[] };
  run(values?: Record<string, unknown>): Promise<unknown>;
}

/** `query` with `values` for its placeholders, inside the open write transaction `tx` (see the top of the file). */
export async function writeWithNext(tx: Tx, query: PreparedWrite, values: Record<string, unknown> = {}): Promise<void> {
  const connection = writerConnectionOf(tx);
  if (!connection) throw new Error("writeWithNext: only inside a write transaction, on its handle");
  // The transaction ended under its unit (a full disk, a server's timeout): a storage failure, as a plain write's.
  if (!connection.inTransaction()) throw new TransactionEnded();
  if (!connection.runWithNext) {
    await query.run(values);
    return;
  }
  const { sql, params } = query.getQuery();
  connection.runWithNext(sql, fillPlaceholders(params, values) as SqlParam[]);
}
