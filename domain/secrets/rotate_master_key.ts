/**
 * Re-seal every stored secret that an older master key sealed, with the
 * current one. Run after deploying a new MASTER_KEY with the old key in
 * MASTER_KEYS_PREVIOUS; once it reports nothing stale, the old key can go.
 *
 * Safe beside live traffic and against itself: rows are read in batches,
 * re-sealed outside any transaction, and written back with a compare-and-set
 * on the old ciphertext, so a value changed meanwhile is left to the next run.
 */
import { yieldToEventLoop } from "../concurrency.ts";
import { sql } from "drizzle-orm";
import { type Database, withTransaction } from "../../db/client.ts";
import type { SecretBox } from "./secret_box.ts";
import { bindingOf, SEALED_COLUMNS, type SealedColumn } from "./sealed_columns.ts";

const BATCH_SIZE = 200;

export interface ColumnRotation {
  column: string;
  resealed: number;
  /** Changed by someone else between read and write: re-run to pick them up. */
  changedMeanwhile: number;
  /** Sealed with a key this service does not hold, or under another binding: left untouched. */
  unopenable: number;
}

export async function rotateMasterKey(
  deps: { db: Database; secrets: SecretBox },
  columns: readonly SealedColumn[] = SEALED_COLUMNS,
): Promise<ColumnRotation[]> {
  const report: ColumnRotation[] = [];
  for (const column of columns) report.push(await rotateColumn(deps, column));
  return report;
}

async function rotateColumn(deps: { db: Database; secrets: SecretBox }, column: SealedColumn) {
  const result = { column: `${column.table}.${column.column}`, resealed: 0, changedMeanwhile: 0, unopenable: 0 };
  const table = sql.identifier(column.table);
  const id = sql.identifier(column.idColumn);
  const value = sql.identifier(column.column);
  let after = "";
  for (;;) {
    const rows = await deps.db.read.values<[string, string]>(
      sql`SELECT ${id}, ${value} FROM ${table} WHERE ${id} > ${after} AND ${value} IS NOT NULL
          ORDER BY ${id} LIMIT ${BATCH_SIZE}`,
    );
    if (!rows.length) return result;
    after = rows[rows.length - 1][0];
    const updates: { rowId: string; from: string; to: string }[] = [];
    for (const [rowId, sealed] of rows) {
      const binding = bindingOf(column, rowId);
      try {
        if (!deps.secrets.isStale(sealed)) continue;
        const resealed = await deps.secrets.seal(await deps.secrets.open({ sealed, binding }), binding);
        updates.push({ rowId, from: sealed, to: resealed.sealed });
      } catch {
        result.unopenable++;
      }
    }
    if (updates.length) {
      const written = await withTransaction(deps.db, async (tx) => {
        let count = 0;
        for (const update of updates) {
          const changed = await tx.values(
            sql`UPDATE ${table} SET ${value} = ${update.to} WHERE ${id} = ${update.rowId} AND ${value} = ${update.from}
                RETURNING 1`,
          );
          count += changed.length;
        }
        return count;
      });
      result.resealed += written;
      result.changedMeanwhile += updates.length - written;
    }
    // One batch per turn of the event loop: a large table never holds the writer or the loop for long.
    await yieldToEventLoop();
  }
}
